import { ForecourtError } from '../errors.js';
import { CliError, UsageError } from '../import/errors.js';
import { errorText } from '../import/messages.js';
import { listen } from './run.js';
import { LISTEN_USAGE, type ListenSettings, listenSettings } from './settings.js';

/** `forecourt listen`: runs until Ctrl-C (exit 0); returns 2 when it cannot start or go on. */
export async function runListen(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  let s: ListenSettings | 'help';
  try {
    s = listenSettings(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`forecourt listen: ${error.message}\n\n${LISTEN_USAGE}`);
    return 2;
  }
  if (s === 'help') {
    process.stdout.write(LISTEN_USAGE);
    return 0;
  }
  const controller = new AbortController();
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write('\nforecourt listen: stopping (Ctrl-C again to quit now)\n');
    controller.abort(new Error('stopped'));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    await listen(s, controller.signal);
    return 0;
  } catch (error) {
    if (controller.signal.aborted) return 0;
    if (error instanceof CliError || error instanceof ForecourtError) {
      process.stderr.write(
        `forecourt listen: ${error instanceof CliError ? error.message : errorText(error)}\n`,
      );
      return 2;
    }
    throw error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
