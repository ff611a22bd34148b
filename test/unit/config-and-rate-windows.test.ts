import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config.js';
import { memoryCounter, windowStart } from '../../src/ratelimit/counter.js';

// Configuration (docs/operations.md): every bad variable stops start-up with a one-line message
// naming it. And the in-process rate-limit counter, with an explicit `now`.

const refusal = (env: Record<string, string | undefined>) => {
  try {
    parseConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.ok(error.message.startsWith('Invalid configuration: '), error.message);
    assert.doesNotMatch(error.message, /\n/, 'one line');
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
};

const PG = 'postgres://app@db.internal/forecourt';

test('no variable at all: the documented defaults', () => {
  const config = parseConfig({});
  assert.deepEqual(
    [
      config.PORT,
      config.HOST,
      config.DATA_DIR,
      config.RATE_LIMIT_PER_MINUTE,
      config.AUTH_FAILURE_LIMIT_PER_MINUTE,
    ],
    [8443, '0.0.0.0', './data', 600, 20],
  );
  assert.deepEqual(
    [config.STATEMENT_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS, config.HEADERS_TIMEOUT_MS, config.WORKERS],
    [10_000, 30_000, 10_000, 1],
  );
  assert.deepEqual(
    [config.TRUST_PROXY, config.WEBHOOK_ALLOW_PRIVATE, config.LOG_LEVEL],
    [false, false, 'info'],
  );
  assert.deepEqual(config.HISTORY_REPORT_HOSTS, ['www.car-pass.be', 'car-pass.be']);
  assert.equal(config.DATABASE_URL, undefined);
});

test('the configuration is frozen', () => {
  const config = parseConfig({ PORT: '9000' });
  assert.ok(Object.isFrozen(config));
  assert.throws(() => {
    (config as { PORT: number }).PORT = 1;
  }, TypeError);
});

test('an empty variable counts as unset', () => {
  const config = parseConfig({ PORT: '', DATABASE_URL: '', ADMIN_TOKEN: '', LOG_LEVEL: '' });
  assert.equal(config.PORT, 8443);
  assert.equal(config.DATABASE_URL, undefined);
  assert.equal(config.ADMIN_TOKEN, undefined);
  assert.equal(config.LOG_LEVEL, 'info');
});

test('PORT: 0 to 65535, a whole number; anything else is refused naming PORT', () => {
  assert.equal(parseConfig({ PORT: '0' }).PORT, 0);
  assert.equal(parseConfig({ PORT: '65535' }).PORT, 65535);
  for (const value of ['65536', '-1', 'https', '80.5']) {
    assert.match(refusal({ PORT: value }), /^Invalid configuration: PORT: /, value);
  }
});

test('numeric limits refuse values outside their range, naming the variable', () => {
  const cases: [string, string, string][] = [
    ['STATEMENT_TIMEOUT_MS', '99', '100'],
    ['REDIS_TIMEOUT_MS', '9', '10'],
    ['DB_POOL_SIZE', '201', '200'],
    ['REQUEST_RECORDS_RETENTION_DAYS', '366', '365'],
    ['WEBHOOK_TIMEOUT_MS', '30001', '30000'],
    ['RATE_LIMIT_PER_MINUTE', '0', '1'],
    ['WRITE_TX_TIMEOUT_MS', '199', '200'],
  ];
  for (const [name, bad, edge] of cases) {
    assert.match(refusal({ [name]: bad }), new RegExp(`: ${name}: `), `${name}=${bad}`);
    assert.equal(parseConfig({ [name]: edge })[name as 'PORT'], Number(edge), `${name}=${edge}`);
  }
});

test('zero means "none" where documented: no records kept, no deliveries on this instance', () => {
  const config = parseConfig({ REQUEST_RECORDS_RETENTION_DAYS: '0', WEBHOOK_CONCURRENCY: '0' });
  assert.equal(config.REQUEST_RECORDS_RETENTION_DAYS, 0);
  assert.equal(config.WEBHOOK_CONCURRENCY, 0);
  assert.match(refusal({ REQUEST_RECORDS_PER_MINUTE: '0' }), /REQUEST_RECORDS_PER_MINUTE/);
});

test('flags take true/false, 1/0, yes/no in any case with spaces; anything else names the flag', () => {
  const read = (value: string) => parseConfig({ TRUST_PROXY: value }).TRUST_PROXY;
  assert.deepEqual(['true', 'TRUE', ' yes ', '1', 'false', 'No', '0'].map(read), [
    true,
    true,
    true,
    true,
    false,
    false,
    false,
  ]);
  assert.equal(
    refusal({ WEBHOOK_ALLOW_LOOPBACK: 'maybe' }),
    'Invalid configuration: WEBHOOK_ALLOW_LOOPBACK: must be true or false',
  );
});

test('database URLs must be postgres:// or postgresql://', () => {
  assert.equal(parseConfig({ DATABASE_URL: 'postgresql://x/y' }).DATABASE_URL, 'postgresql://x/y');
  assert.equal(
    refusal({ DATABASE_URL: 'mysql://x/y' }),
    'Invalid configuration: DATABASE_URL: must start with postgres:// or postgresql://',
  );
  assert.match(
    refusal({ DATABASE_URL: PG, DATABASE_READ_URL: 'http://replica' }),
    /DATABASE_READ_URL: must start/,
  );
});

test('DATABASE_READ_URL needs DATABASE_URL', () => {
  assert.equal(
    refusal({ DATABASE_READ_URL: PG }),
    'Invalid configuration: DATABASE_READ_URL needs DATABASE_URL (a replica of it)',
  );
  assert.equal(parseConfig({ DATABASE_URL: PG, DATABASE_READ_URL: PG }).DATABASE_READ_URL, PG);
});

test('ADMIN_TOKEN: at least 24 characters, counted after trimming', () => {
  assert.equal(parseConfig({ ADMIN_TOKEN: 'a'.repeat(24) }).ADMIN_TOKEN, 'a'.repeat(24));
  assert.equal(
    refusal({ ADMIN_TOKEN: 'a'.repeat(23) }),
    'Invalid configuration: ADMIN_TOKEN: must be at least 24 characters',
  );
  assert.match(refusal({ ADMIN_TOKEN: ` ${'a'.repeat(23)} ` }), /ADMIN_TOKEN/);
});

test('HISTORY_REPORT_HOSTS: a comma-separated list of host names, lowercased, blanks dropped', () => {
  assert.deepEqual(
    parseConfig({ HISTORY_REPORT_HOSTS: ' WWW.Car-Pass.be , autodna.nl,' }).HISTORY_REPORT_HOSTS,
    ['www.car-pass.be', 'autodna.nl'],
  );
  assert.match(
    refusal({ HISTORY_REPORT_HOSTS: 'car-pass.be/x' }),
    /HISTORY_REPORT_HOSTS.*: must be a comma-separated list of host names/,
  );
  assert.match(refusal({ HISTORY_REPORT_HOSTS: ' , ' }), /HISTORY_REPORT_HOSTS: /);
});

test('PUBLIC_LISTING_BASE_URL: an http or https URL', () => {
  assert.equal(
    parseConfig({ PUBLIC_LISTING_BASE_URL: 'https://cars.example/l/' }).PUBLIC_LISTING_BASE_URL,
    'https://cars.example/l/',
  );
  assert.match(refusal({ PUBLIC_LISTING_BASE_URL: 'ftp://cars.example' }), /PUBLIC_LISTING_BASE_URL: /);
  assert.match(refusal({ PUBLIC_LISTING_BASE_URL: 'cars.example' }), /PUBLIC_LISTING_BASE_URL: /);
});

test('REDIS_URL: redis:// or rediss://', () => {
  assert.equal(parseConfig({ REDIS_URL: 'rediss://cache:6380' }).REDIS_URL, 'rediss://cache:6380');
  assert.equal(
    refusal({ REDIS_URL: 'http://cache' }),
    'Invalid configuration: REDIS_URL: must start with redis:// or rediss://',
  );
});

test('LOG_LEVEL: one of pino levels or silent', () => {
  assert.equal(parseConfig({ LOG_LEVEL: 'silent' }).LOG_LEVEL, 'silent');
  assert.match(refusal({ LOG_LEVEL: 'verbose' }), /^Invalid configuration: LOG_LEVEL: /);
});

test('TLS_CERT_FILE and TLS_KEY_FILE: both or neither', () => {
  const message = 'Invalid configuration: TLS_CERT_FILE and TLS_KEY_FILE must be set together';
  assert.equal(refusal({ TLS_CERT_FILE: '/etc/tls/cert.pem' }), message);
  assert.equal(refusal({ TLS_KEY_FILE: '/etc/tls/key.pem' }), message);
  const both = parseConfig({ TLS_CERT_FILE: 'c.pem', TLS_KEY_FILE: 'k.pem' });
  assert.deepEqual([both.TLS_CERT_FILE, both.TLS_KEY_FILE], ['c.pem', 'k.pem']);
});

test('WORKERS above 1 needs DATABASE_URL and REDIS_URL; at most 64', () => {
  assert.match(refusal({ WORKERS: '2' }), /WORKERS above 1 needs DATABASE_URL/);
  assert.match(refusal({ WORKERS: '2', DATABASE_URL: PG }), /WORKERS above 1 needs REDIS_URL/);
  assert.equal(parseConfig({ WORKERS: '4', DATABASE_URL: PG, REDIS_URL: 'redis://r' }).WORKERS, 4);
  assert.match(refusal({ WORKERS: '65', DATABASE_URL: PG, REDIS_URL: 'redis://r' }), /WORKERS: /);
});

test('several bad variables are all named in the one line', () => {
  const message = refusal({ PORT: 'x', LOG_LEVEL: 'loud', REDIS_URL: 'tcp://r' });
  for (const name of ['PORT', 'LOG_LEVEL', 'REDIS_URL']) assert.match(message, new RegExp(`${name}: `));
  assert.equal(message.split('; ').length, 3);
});

test('rate windows are aligned to the epoch', () => {
  assert.equal(
    windowStart(Date.parse('2026-11-26T10:00:59.999Z'), 60_000),
    Date.parse('2026-11-26T10:00:00Z'),
  );
  assert.equal(
    windowStart(Date.parse('2026-11-26T10:01:00.000Z'), 60_000),
    Date.parse('2026-11-26T10:01:00Z'),
  );
  assert.equal(windowStart(12_345, 1000), 12_000);
});

test('the counter counts hits per key in a window and says when the window ends', async () => {
  const counter = memoryCounter();
  const t = Date.parse('2026-11-26T10:00:10Z');
  const end = Date.parse('2026-11-26T10:01:00Z');
  assert.deepEqual(await counter.hit('partner-a', 60_000, t), { count: 1, resetAt: end });
  assert.deepEqual(await counter.hit('partner-a', 60_000, t + 49_999), { count: 2, resetAt: end });
  assert.deepEqual(await counter.hit('partner-b', 60_000, t), { count: 1, resetAt: end });
});

test('a new window starts the count again, at the minute, not 60 s after the first hit', async () => {
  const counter = memoryCounter();
  const t = Date.parse('2026-11-26T10:00:59.000Z');
  await counter.hit('k', 60_000, t);
  await counter.hit('k', 60_000, t + 999);
  assert.deepEqual(await counter.hit('k', 60_000, t + 1000), {
    count: 1,
    resetAt: Date.parse('2026-11-26T10:02:00Z'),
  });
});

test('windows of different lengths are counted apart for the same key', async () => {
  const counter = memoryCounter();
  const t = Date.parse('2026-11-26T10:00:10Z');
  await counter.hit('k', 60_000, t);
  await counter.hit('k', 60_000, t);
  assert.deepEqual(await counter.hit('k', 1000, t), { count: 1, resetAt: t + 1000 });
  assert.equal((await counter.hit('k', 60_000, t)).count, 3);
});

test('a window that ended is forgotten; close forgets every count', async () => {
  const counter = memoryCounter();
  const t = Date.parse('2026-11-26T10:00:10Z');
  await counter.hit('k', 60_000, t);
  await counter.hit('k', 60_000, t + 60_000); // next window: the first is dropped
  assert.equal((await counter.hit('k', 60_000, t)).count, 1, 'an ended window starts afresh if seen again');
  await counter.close();
  assert.equal((await counter.hit('k', 60_000, t + 60_000)).count, 1);
});

test('a blank numeric variable (spaces only) counts as unset or is refused, never read as 0', () => {
  for (const name of ['PORT', 'REQUEST_RECORDS_RETENTION_DAYS', 'WEBHOOK_CONCURRENCY']) {
    let value: unknown;
    try {
      value = parseConfig({ [name]: ' ' })[name as 'PORT'];
    } catch (error) {
      assert.match(String(error), new RegExp(`${name}: `));
      continue;
    }
    assert.equal(value, parseConfig({})[name as 'PORT'], `${name}=" " is read as ${value}`);
  }
});

test('EMBEDDED_VACUUM_INTERVAL_MS: 5 s by default, 0 for never, and no busy loop under 100 ms', () => {
  assert.equal(parseConfig({}).EMBEDDED_VACUUM_INTERVAL_MS, 5000);
  assert.equal(parseConfig({ EMBEDDED_VACUUM_INTERVAL_MS: '0' }).EMBEDDED_VACUUM_INTERVAL_MS, 0);
  assert.equal(parseConfig({ EMBEDDED_VACUUM_INTERVAL_MS: '100' }).EMBEDDED_VACUUM_INTERVAL_MS, 100);
  assert.match(refusal({ EMBEDDED_VACUUM_INTERVAL_MS: '5' }), /EMBEDDED_VACUUM_INTERVAL_MS.*at least 100/);
});
