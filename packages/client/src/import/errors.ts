import { readFileSync } from 'node:fs';
/** A mistake in the command line: exit code 2, with the usage text. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the partner can act on (unreachable service, unreadable feed…): exit code 2. */
export class CliError extends Error {
  override name = 'CliError';
}

/** The certificate file of `--ca` (or FORECOURT_CA), read once; undefined when none was given. */
export function readCaFile(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read --ca ${path}: ${(error as Error).message}`);
  }
}
