/** A mistake in the command line: exit code 2, with the usage text. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the partner can act on (unreachable service, unreadable feed…): exit code 2. */
export class CliError extends Error {
  override name = 'CliError';
}
