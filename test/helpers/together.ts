/**
 * Runs concurrent test actors (writers, readers) side by side. The first failure calls `onFailure`
 * (which tells the others to stop) and is rethrown by `finish()` once every actor has stopped, so
 * no rejection is left unhandled.
 */
export function runTogether(tasks: (() => Promise<void>)[], onFailure: () => void) {
  const failures: unknown[] = [];
  const running = tasks.map((task) =>
    task().catch((error) => {
      failures.push(error);
      onFailure();
    }),
  );
  return {
    async finish(): Promise<void> {
      await Promise.all(running);
      if (failures.length > 0) throw failures[0];
    },
  };
}
