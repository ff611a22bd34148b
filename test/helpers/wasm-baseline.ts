// Loaded into every process of a test run through NODE_OPTIONS (scripts/test.mjs): V8 compiles
// WebAssembly with Liftoff, its baseline compiler, only. By default it compiles the embedded
// database (PostgreSQL in WebAssembly) with Liftoff and then compiles each function that runs hot
// again with TurboFan, on background threads: worth it in a service that runs for days, not in a
// test process that lives seconds and boots a database or two. Measured on an embedded `npm test`
// (docs/development.md). Only the compiler changes, not what the code does; the benchmarks, the
// smoke runs and the service itself keep V8's default, and FORECOURT_TEST_WASM_TIERS=all keeps it
// in a test run too.
import v8 from 'node:v8';

v8.setFlagsFromString('--liftoff-only');
