/**
 * Writes the read model's trigger functions, generated from the listing's read shape
 * (src/store/listings/json.ts, readModelFunctionsSql), into a migration: between its
 * `-- generated: begin` and `-- generated: end` lines, or appended to it, or as a new file.
 *
 *   npm run read-model:sql -- migrations/NNN_name.sql   write it there
 *   npm run read-model:sql                              print it
 *
 * After a change of the shape: a NEW migration (one already released is never rewritten), with a
 * rewrite of the rows after the block (`UPDATE listings SET read_json = NULL, ...`: the triggers
 * recompute them). test/unit/read-model-sql.test.ts fails while the newest migration that holds
 * the block differs from what the module generates.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { GENERATED_BEGIN, GENERATED_END, readModelFunctionsSql } from '../src/store/listings/json.js';

const [file] = process.argv.slice(2);
const block = readModelFunctionsSql();
if (!file) process.stdout.write(block);
else {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const begin = text.indexOf(GENERATED_BEGIN);
  const end = text.indexOf(`${GENERATED_END}\n`, begin);
  const written =
    begin >= 0 && end >= 0
      ? `${text.slice(0, begin)}${block}${text.slice(end + GENERATED_END.length + 1)}`
      : `${text}${text && !text.endsWith('\n\n') ? '\n' : ''}${block}`;
  writeFileSync(file, written);
  process.stderr.write(`wrote ${file}\n`);
}
