import { postgresDataset } from '/work/main/bench/lib/datasets.js';
console.log(await postgresDataset('bench_1m', 1_000_000, false));
