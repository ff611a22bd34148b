import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judgeSessions } from '../../src/store/postgres-sessions.js';

// DATABASE_POOL_MODE=session is proven at start (issue 40): two connections held at once take
// turns asking for their backend's pid (test/pooler.test.ts runs it behind a real PgBouncer).

test('a session each: each connection keeps its backend, and the two differ', () => {
  assert.deepEqual(judgeSessions([101, 101, 101], [202, 202, 202]), { sessions: true });
});

test('a transaction-mode pooler: both connections on one backend, or one connection on several', () => {
  const same = judgeSessions([101, 101, 101], [101, 101, 101]);
  assert.equal(same.sessions, false);
  assert.match(
    !same.sessions ? same.detail : '',
    /two connections open at once .* same server session \(backend pid 101\)/,
  );
  const moved = judgeSessions([101, 303, 101], [202, 202, 202]);
  assert.equal(moved.sessions, false);
  assert.match(
    !moved.sessions ? moved.detail : '',
    /the first of two connections .* 2 different server sessions \(backend pids 101, 303\)/,
  );
  assert.equal(judgeSessions([101, 101, 101], [202, 101, 202]).sessions, false);
});
