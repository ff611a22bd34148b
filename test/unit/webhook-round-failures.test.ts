import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  afterRoundFailure,
  MAX_ROUND_BACKOFF_MS,
  type RoundFailures,
  SET_ASIDE_AFTER,
} from '../../src/domain/webhooks/round-failures.js';
import { DbError } from '../../src/store/errors.js';

// What a failed delivery round means for its endpoint (docs/operations.md, Webhooks): it waits,
// longer each time; only refusals of its data, five in a row, set it aside.

const outage = () =>
  new DbError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'Ack');
const deadlock = () => new DbError(Object.assign(new Error('deadlock detected'), { code: '40P01' }), 'Ack');
const refusal = () =>
  new DbError(Object.assign(new Error('invalid byte sequence'), { code: '22021' }), 'Ack');

function run(errors: unknown[]) {
  let state: RoundFailures | undefined;
  return errors.map((error) => {
    const next = afterRoundFailure(state, error);
    state = next.state;
    return next;
  });
}

test('a failed round waits 1 s, then twice as long each time, up to five minutes', () => {
  const waits = run(Array.from({ length: 12 }, outage)).map((r) => r.waitMs);
  assert.deepEqual(waits.slice(0, 4), [1000, 2000, 4000, 8000]);
  assert.equal(waits.at(-1), MAX_ROUND_BACKOFF_MS);
});

test('five refusals of the data in a row set the endpoint aside, saying why', () => {
  const rounds = run(Array.from({ length: SET_ASIDE_AFTER }, refusal));
  assert.deepEqual(
    rounds.map((r) => r.setAside !== null),
    [false, false, false, false, true],
  );
  assert.match(rounds.at(-1)!.setAside!, /could not record this endpoint's deliveries 5 times in a row/);
});

test('an outage or a deadlock never sets an endpoint aside, and breaks a run of refusals', () => {
  assert.ok(run(Array.from({ length: 50 }, outage)).every((r) => r.setAside === null));
  assert.ok(run(Array.from({ length: 50 }, deadlock)).every((r) => r.setAside === null));
  // Four outages then one refusal: the reviewer's case that disabled an endpoint.
  assert.equal(run([outage(), outage(), outage(), outage(), refusal()]).at(-1)!.setAside, null);
  // Four refusals, an outage, four refusals: never five in a row.
  const broken = run([
    ...Array.from({ length: 4 }, refusal),
    outage(),
    ...Array.from({ length: 4 }, refusal),
  ]);
  assert.ok(broken.every((r) => r.setAside === null));
});

test('a cause is logged when it changes, not at every round', () => {
  const logged = run([outage(), outage(), refusal(), refusal(), outage()]).map((r) => r.log);
  assert.deepEqual(logged, [true, false, true, false, true]);
});
