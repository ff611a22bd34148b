/** Where the admin commands write: the process's streams, or a sink a test can read. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => {
    process.stdout.write(text);
  },
  err: (text) => {
    process.stderr.write(text);
  },
};

/** A mistake in the command line: exit code 2, with the usage text. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the operator can act on (unreachable service, unreadable file…): exit code 1. */
export class CliError extends Error {
  override name = 'CliError';
}

/**
 * Text from the service, made safe for a terminal: control characters (escape sequences,
 * carriage returns, newlines) in a dealer's name must not be able to rewrite the screen.
 */
export function clean(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  const text =
    typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.replace(/\p{Cc}/gu, '\uFFFD');
}

/** Rows as aligned columns under upper-case headers; `empty` when there are none. */
export function table(headers: string[], rows: unknown[][], empty: string): string {
  if (rows.length === 0) return `${empty}\n`;
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((row) => row.map(clean))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** One object as `key: value` lines, the values aligned. */
export function keyValues(pairs: [string, unknown][]): string {
  const width = Math.max(...pairs.map(([key]) => key.length)) + 1;
  return pairs.map(([key, value]) => `${`${key}:`.padEnd(width)}  ${clean(value)}\n`).join('');
}

export function json(data: unknown): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

/** A secret the service issued: shown once, set apart so that it is not missed. */
export function secretBlock(secret: string, partnerId: string, reissue = 'rotate-secret'): string {
  return [
    '',
    `  API secret:  ${clean(secret)}`,
    '',
    '  Store it now: this secret is shown only once and cannot be retrieved later.',
    `  If it is lost, issue a new one with: forecourt partners ${reissue} ${clean(partnerId)}`,
    '',
  ]
    .map((line) => `${line}\n`)
    .join('');
}
