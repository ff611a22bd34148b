import { writeFileSync } from 'node:fs';
import type { Failure } from './state.js';

const HEADER = ['row', 'reference', 'code', 'field', 'value', 'reason'];

/**
 * The report: one CSV row per listing the service did not take, in feed order. Several failing
 * fields of one listing share its row, joined with "; " in the same order in field, value and
 * reason. UTF-8 with a BOM, so that spreadsheet programs show accented text right.
 */
export function writeReport(file: string, failures: readonly Failure[]): void {
  const rows = [...failures]
    .sort((a, b) => a.row - b.row)
    .map((failure) => {
      const issues = failure.issues?.length ? failure.issues : undefined;
      return [
        String(failure.row),
        failure.reference ?? '',
        failure.code,
        issues ? issues.map((i) => i.path || '(listing)').join('; ') : '',
        issues ? issues.map((i) => i.value ?? '').join('; ') : '',
        issues ? issues.map((i) => i.message).join('; ') : failure.message,
      ];
    });
  const lines = [HEADER, ...rows].map((cells) => cells.map(cell).join(','));
  writeFileSync(file, `\uFEFF${lines.join('\r\n')}\r\n`);
}

/**
 * RFC 4180 quoting. A cell that a spreadsheet would run as a formula (=, +, -, @ first) gets a
 * leading apostrophe: the report echoes what the feed held, and opening it must not run it.
 */
function cell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
