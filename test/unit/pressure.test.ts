import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestPressure } from '../../src/http/pressure.js';

// A clock the test moves: windows are half a second.
function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test('requests in flight nearly all the time saturate; a quiet window ends it', () => {
  const c = clock();
  const pressure = requestPressure(c.now);
  assert.equal(pressure.saturated(), false);
  // One request after another, a gap of 1 ms between them: busy 99 % of the time.
  for (let i = 0; i < 60; i++) {
    pressure.started();
    c.advance(19);
    pressure.finished();
    c.advance(1);
  }
  assert.equal(pressure.saturated(), true);
  // A quiet window ends it.
  c.advance(600);
  assert.equal(pressure.saturated(), false);
});

test('occasional requests never saturate', () => {
  const c = clock();
  const pressure = requestPressure(c.now);
  for (let i = 0; i < 40; i++) {
    pressure.started();
    c.advance(5);
    pressure.finished();
    c.advance(45); // in flight 10 % of the time
    assert.equal(pressure.saturated(), false);
  }
});
