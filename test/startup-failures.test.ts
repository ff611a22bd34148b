import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { baseEnv } from './helpers/base-env.js';

/**
 * Issue 16: every start-up failure is one clear line naming what to fix, and a non-zero exit; a
 * database that does not exist once printed a DbError stack trace.
 */
const BIN = path.resolve(import.meta.dirname, '../bin/forecourt.js');

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...baseEnv(), HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'error', ...env },
      cwd: os.tmpdir(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    // Generous: several of these start a fresh embedded database first, and in CI two test passes
    // share two cores (one such start took over 20 s there).
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, err });
    });
  });
}

function assertOneLine(result: { code: number | null; err: string }, expected: RegExp): void {
  assert.notEqual(result.code, 0, result.err);
  assert.notEqual(result.code, null, 'the process exited by itself');
  const lines = result.err.trim().split('\n');
  assert.equal(lines.length, 1, `one line, got:\n${result.err}`);
  assert.match(lines[0]!, /^forecourt: /);
  assert.match(lines[0]!, expected);
  assert.doesNotMatch(result.err, /^\s+at /m, 'no stack trace');
}

const dir = () => mkdtempSync(path.join(os.tmpdir(), 'forecourt-start-'));
const PG = 'postgres://root@127.0.0.1:5432';

test('PostgreSQL: a database that does not exist, a refused connection', async () => {
  // In CI another pass may be restarting this PostgreSQL (test/postgres-operations.test.ts): while
  // it is down the answer is "connection refused", so wait for it to be back.
  let missing = await run(['serve'], {
    DATA_DIR: dir(),
    DATABASE_URL: `${PG}/forecourt_no_such_db_${process.pid}`,
  });
  for (let i = 0; i < 30 && /connection refused/.test(missing.err); i++) {
    await new Promise((r) => setTimeout(r, 1_000));
    missing = await run(['serve'], {
      DATA_DIR: dir(),
      DATABASE_URL: `${PG}/forecourt_no_such_db_${process.pid}`,
    });
  }
  assertOneLine(missing, /database does not exist.*DATABASE_URL/);
  assertOneLine(
    await run(['migrate'], { DATA_DIR: dir(), DATABASE_URL: 'postgres://root@127.0.0.1:1/x' }),
    /connection refused.*DATABASE_URL/,
  );
});

test('a port already in use, a DATA_DIR that is a file, TLS files missing or not PEM, a bad variable', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = String((blocker.address() as net.AddressInfo).port);
  try {
    assertOneLine(await run(['serve'], { DATA_DIR: dir(), PORT: port }), new RegExp(`port ${port}.*in use`));
  } finally {
    blocker.close();
  }
  const file = path.join(dir(), 'not-a-dir');
  writeFileSync(file, 'x');
  assertOneLine(await run(['serve'], { DATA_DIR: file }), /not-a-dir/);
  const tls = dir();
  assertOneLine(
    await run(['serve'], {
      DATA_DIR: tls,
      TLS_CERT_FILE: path.join(tls, 'missing.pem'),
      TLS_KEY_FILE: path.join(tls, 'missing-key.pem'),
    }),
    /missing.*(does not exist|TLS)/,
  );
  writeFileSync(path.join(tls, 'cert.pem'), 'not a certificate');
  writeFileSync(path.join(tls, 'key.pem'), 'not a key');
  assertOneLine(
    await run(['serve'], {
      DATA_DIR: tls,
      TLS_CERT_FILE: path.join(tls, 'cert.pem'),
      TLS_KEY_FILE: path.join(tls, 'key.pem'),
    }),
    /TLS/,
  );
  assertOneLine(await run(['serve'], { DATA_DIR: dir(), PORT: 'eighty' }), /PORT/);
});
