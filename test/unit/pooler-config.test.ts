import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config.js';

// The settings for running behind a connection pooler (docs/operations.md): validated at start,
// a bad value naming its variable.
const url = 'postgres://forecourt@pooler:6432/forecourt';

test('DATABASE_POOL_MODE: session by default, transaction when said, nothing else', () => {
  assert.equal(parseConfig({ DATABASE_URL: url }).DATABASE_POOL_MODE, 'session');
  assert.equal(
    parseConfig({ DATABASE_URL: url, DATABASE_POOL_MODE: 'transaction' }).DATABASE_POOL_MODE,
    'transaction',
  );
  assert.throws(
    () => parseConfig({ DATABASE_URL: url, DATABASE_POOL_MODE: 'statement' }),
    (error: Error) => error instanceof ConfigError && /DATABASE_POOL_MODE/.test(error.message),
  );
});

test('DATABASE_DIRECT_URL: a PostgreSQL URL, and only beside DATABASE_URL', () => {
  const direct = 'postgres://forecourt@db:5432/forecourt';
  assert.equal(parseConfig({ DATABASE_URL: url, DATABASE_DIRECT_URL: direct }).DATABASE_DIRECT_URL, direct);
  assert.equal(parseConfig({ DATABASE_URL: url, DATABASE_DIRECT_URL: '' }).DATABASE_DIRECT_URL, undefined);
  assert.throws(
    () => parseConfig({ DATABASE_URL: url, DATABASE_DIRECT_URL: 'mysql://db/forecourt' }),
    /DATABASE_DIRECT_URL: must start with postgres/,
  );
  assert.throws(() => parseConfig({ DATABASE_DIRECT_URL: direct }), /DATABASE_DIRECT_URL needs DATABASE_URL/);
});
