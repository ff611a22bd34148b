import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

const BIOME = path.resolve(import.meta.dirname, '../../node_modules/.bin/biome');

/**
 * Writes a run's record (bench/results/) as JSON in the repository's own format: `npm run lint`
 * formats JSON with Biome, which puts a short array on one line where JSON.stringify breaks it,
 * so a record written plainly failed lint when committed as it was.
 */
export function writeRecord(file: string, record: unknown): void {
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  const formatted = spawnSync(BIOME, ['format', '--write', file], { encoding: 'utf8' });
  if (formatted.status !== 0)
    process.stderr.write(`[bench] ${file} written but not formatted: ${formatted.stderr.trim()}\n`);
}
