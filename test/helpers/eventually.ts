import assert from 'node:assert/strict';

/**
 * Polls until `done` holds (a delivery, a notification, a record written after the answer), or
 * fails saying what `state` reports after `ms`. Polls every `everyMs`: short, so a test waits for
 * the event, not for a fixed sleep.
 */
export async function eventually(
  done: () => boolean | Promise<boolean>,
  state: () => string,
  ms = 20_000,
  everyMs = 50,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > until) assert.fail(`not reached within ${ms} ms: ${state()}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
