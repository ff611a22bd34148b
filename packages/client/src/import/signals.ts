/**
 * Runs `work` with Ctrl-C (and SIGTERM) turned into a graceful stop: the first signal aborts
 * `signal`, so the run ends after the request in flight with its progress saved; a second one
 * quits at once (exit code 130). `interrupted()` tells the caller which kind of stop it was.
 */
export async function withInterrupts<T>(
  work: (signal: AbortSignal, interrupted: () => boolean) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(
      '\nforecourt import: stopping after the request in flight (Ctrl-C again to quit now)\n',
    );
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await work(controller.signal, () => interrupted);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
