import { CliError, UsageError } from './errors.js';
import { run } from './run.js';
import { IMPORT_USAGE, type Settings, settings } from './settings.js';
import { withInterrupts } from './signals.js';

/** `forecourt import`: returns the exit code. */
export async function runImport(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  let s: Settings | 'help';
  try {
    s = settings(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`forecourt import: ${error.message}\n\n${IMPORT_USAGE}`);
    return 2;
  }
  if (s === 'help') {
    process.stdout.write(IMPORT_USAGE);
    return 0;
  }

  return withInterrupts(async (signal, interrupted) => {
    try {
      return await run(s, signal);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      process.stderr.write(`forecourt import: ${error.message}\n`);
      return interrupted() ? 130 : 2;
    }
  });
}
