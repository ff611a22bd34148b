import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { PROBLEMS, type ProblemCode, problem } from '../../src/domain/errors.js';
import { classifyDbError, DbError, labelDbError } from '../../src/store/errors.js';

// The error table and the one reading of database errors: pure rules, no service needed.
const SRC = path.resolve(import.meta.dirname, '../../src');
const STORE = path.join(SRC, 'store');

test('every code of the table has a status, a when and an action; problem() takes its status from it', () => {
  for (const [code, kind] of Object.entries(PROBLEMS) as [ProblemCode, (typeof PROBLEMS)[ProblemCode]][]) {
    assert.match(code, /^[A-Z_]+$/);
    assert.ok(kind.status >= 400 && kind.status < 600, `${code}: ${kind.status}`);
    assert.ok(kind.when.length > 5 && kind.action.length > 5, code);
    const error = problem(code, 'why');
    assert.equal(error.status, kind.status, code);
    assert.deepEqual(error.body('req-1'), { error: { code, message: 'why', requestId: 'req-1' } });
  }
  assert.equal(PROBLEMS.CONFLICT.status, 409);
  assert.equal(
    problem('VALIDATION_FAILED', 'bad', [{ path: 'price', message: 'x', code: 'too_small' }]).status,
    422,
  );
});

test('a broken constraint is read by its name, whatever the driver', () => {
  // node-postgres and PGlite both give code and constraint on the error object.
  const unique = { code: '23505', constraint: 'dealer_profiles_location_code_key', severity: 'ERROR' };
  assert.equal(classifyDbError(unique.code, unique.constraint), 'location-code-taken');
  assert.equal(classifyDbError('23514', 'dealer_profiles_no_cycle'), 'dealer-cycle');
  assert.equal(classifyDbError('23514', 'dealer_profiles_check'), 'dealer-own-parent');
  assert.equal(classifyDbError('23503', 'dealer_profiles_parent_id_fkey'), 'dealer-parent-missing');
  assert.equal(classifyDbError('23514', 'listings_price_when_listed'), 'price-when-listed');
  // Two new listings' random slugs met: the write is retried, drawing new ones.
  assert.equal(classifyDbError('23505', 'listings_slug_key'), 'retryable');
  // A constraint nobody explains is not guessed at: it stays a server error upstream.
  assert.equal(classifyDbError('23505', 'listing_images_pkey'), 'other');
});

test('codes that mean the same for any statement: retry, unavailable, start-up causes', () => {
  assert.equal(classifyDbError('40P01', undefined), 'retryable');
  assert.equal(classifyDbError('40001', undefined), 'retryable');
  // 25P03/25P04: the server ended a transaction that sat idle or ran too long (nothing applied).
  for (const code of ['57014', '55P03', '53300', '08006', '57P01', '25P03', '25P04']) {
    assert.equal(classifyDbError(code, undefined), 'unavailable', code);
  }
  assert.equal(classifyDbError('ECONNRESET', undefined), 'unavailable');
  assert.equal(
    classifyDbError(undefined, undefined, 'timeout exceeded when trying to connect'),
    'unavailable',
  );
  assert.equal(classifyDbError('3D000', undefined), 'database-missing');
  assert.equal(classifyDbError('28P01', undefined), 'authentication-failed');
  assert.equal(classifyDbError('ECONNREFUSED', undefined), 'connection-refused');
  assert.equal(classifyDbError('42P01', undefined), 'other');
});

test('labelDbError wraps what the driver threw and lets our own errors through', () => {
  const fromServer = Object.assign(new Error('deadlock detected'), { code: '40P01', severity: 'ERROR' });
  const labelled = labelDbError(fromServer, 'LockListings');
  assert.ok(labelled instanceof DbError);
  assert.equal(labelled.failure, 'retryable');
  assert.equal(labelled.queryName, 'LockListings');
  assert.match(labelled.message, /^LockListings: deadlock detected/);
  assert.equal(labelled.unavailable, false);

  const refused = labelDbError(
    Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    'Ping',
  );
  assert.ok(refused instanceof DbError && refused.unavailable);

  const ours = problem('NOT_FOUND', 'no listing');
  assert.equal(labelDbError(ours, 'Anything'), ours);
});

test('no module outside src/store names a SQLSTATE or a constraint', () => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (file !== STORE) walk(file);
      } else if (file.endsWith('.ts')) {
        const text = readFileSync(file, 'utf8');
        // '23505', '40P01', '57014'...: five-character SQLSTATEs; constraint names end like these.
        for (const m of text.matchAll(
          /'(\d{2}[0-9A-Z]\d{2}|\d{2}P\d{2}|[a-z_]+_(?:key|fkey|check|pkey))'/g,
        )) {
          offenders.push(`${path.relative(SRC, file)}: ${m[1]}`);
        }
      }
    }
  };
  walk(SRC);
  assert.deepEqual(offenders, []);
});
