import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { bootApp, createTree, EXT, listingBody, type TestApp } from './helpers/app.js';
import { baseEnv } from './helpers/base-env.js';
import { startFlakyProxy } from './helpers/flaky-proxy.js';
import { bulkUpsert, putOk } from './helpers/listings-api.js';
import { sleep, writer } from './helpers/write-fixtures.js';

/**
 * `forecourt listen --forward-to` (packages/client): follows the partner's changes with sync
 * cursors and delivers them to a local receiver exactly as the service's webhooks would. The
 * receiver here is a real HTTP server that verifies every signature with the `standardwebhooks`
 * package (not our own code), and fails its first answers so the retries are exercised.
 */
const BIN = path.resolve(import.meta.dirname, '../packages/client/dist/bin.js');
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

interface Received {
  id: string;
  answered: number;
  body: { type: string; data: Record<string, any>[]; cursor: string };
  raw: string;
}

let app: TestApp;
let secret: string;
/** The same partner's test secret (docs/test-mode.md). */
let testSecret: string;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
const problems: string[] = [];
/** Answers to give before the ordinary 204s. */
const script = [500, 503];
let listener: ChildProcess | undefined;
let output = '';

function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));
}

before(async () => {
  app = await bootApp();
  const tree = await createTree(app);
  const partner = await writer(app, [tree.ids.A!]);
  secret = partner.secret;
  testSecret = (await app.admin<{ secret: string }>('POST', `/partners/${partner.id}/test-secret`)).secret;
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        new Webhook(WEBHOOK_SECRET).verify(raw, headersOf(req.headers));
      } catch (error) {
        problems.push(`signature: ${(error as Error).message}`);
      }
      if (req.headers['content-type'] !== 'application/json')
        problems.push(`type ${req.headers['content-type']}`);
      const answered = script.shift() ?? 204;
      received.push({ id: String(req.headers['webhook-id']), answered, body: JSON.parse(raw), raw });
      res.writeHead(answered).end(answered === 204 ? undefined : 'not now');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/forecourt`;
});

after(async () => {
  if (listener && listener.exitCode === null) listener.kill('SIGKILL');
  await new Promise((resolve) => receiver.close(resolve));
  await app.close();
});

async function waitFor(what: string, done: () => boolean, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!done()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; listen said:\n${output}`);
    await sleep(100);
  }
}

test('changes reach the local receiver as signed webhooks: in order, at most 100 a delivery, retried while it fails', async () => {
  // Listings that exist before it starts are the present, not changes: not delivered.
  await putOk(app, secret, 'LISTEN-OLD-1', listingBody({ price: 10000 }));
  await putOk(app, secret, 'LISTEN-OLD-2', listingBody());

  listener = spawn(
    process.execPath,
    [
      BIN,
      'listen',
      '--forward-to',
      receiverUrl,
      '--url',
      app.url,
      '--ca',
      path.join(app.dataDir, 'tls', 'localhost-cert.pem'),
      '--webhook-secret',
      WEBHOOK_SECRET,
      '--interval-ms',
      '100',
    ],
    { env: { ...baseEnv(), FORECOURT_SECRET: secret }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  listener.stdout!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  listener.stderr!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  await waitFor('listen to start', () => output.includes('listening'));
  // Shortened as docs/webhooks.md shows it: the whole secret never reaches the terminal.
  assert.match(
    output,
    new RegExp(`signing secret: ${WEBHOOK_SECRET.slice(0, 9).replace(/[+/]/g, '\\$&')}…\n`),
  );
  assert.ok(!output.includes(WEBHOOK_SECRET), 'the whole secret is not printed');
  assert.match(output, /the one you gave/);

  const items = Array.from({ length: 150 }, (_, i) => ({
    externalReference: `LISTEN-${String(i).padStart(3, '0')}`,
    ...listingBody({ mileage: i }),
  }));
  await bulkUpsert(app, secret, items.slice(0, 100));
  await bulkUpsert(app, secret, items.slice(100));
  await putOk(app, secret, 'LISTEN-OLD-1', listingBody({ price: 12345 }));

  const delivered = () => received.filter((r) => r.answered === 204);
  const references = () => delivered().flatMap((r) => r.body.data.map((l) => l.externalReference as string));
  await waitFor('151 listings delivered', () => new Set(references()).size >= 151);

  assert.deepEqual(problems, [], 'every request verified by standardwebhooks');
  // The first delivery failed twice and was retried as the same message (one webhook-id).
  assert.deepEqual(
    received.slice(0, 3).map((r) => r.answered),
    [500, 503, 204],
  );
  assert.equal(new Set(received.slice(0, 3).map((r) => r.id)).size, 1);
  assert.equal(received[0]!.raw, received[2]!.raw, 'a retry sends the same body');
  assert.match(output, /attempt 1 answered 500: not now; retrying in 1 s/);
  // Distinct deliveries have distinct ids; each holds 1 to 100 listings, in the service's order.
  const ok = delivered();
  assert.equal(new Set(ok.map((r) => r.id)).size, ok.length);
  const all = ok.flatMap((r) => r.body.data);
  for (const r of ok) {
    assert.deepEqual(Object.keys(r.body), ['type', 'data', 'cursor']);
    assert.equal(r.body.type, 'listings.changed');
    assert.ok(r.body.data.length >= 1 && r.body.data.length <= 100, `${r.body.data.length} listings`);
    assert.equal(typeof r.body.cursor, 'string');
  }
  for (let i = 1; i < all.length; i++) {
    const [a, b] = [all[i - 1]!, all[i]!];
    assert.ok(a.updatedAt < b.updatedAt || (a.updatedAt === b.updatedAt && a.id < b.id), 'in order');
  }
  // Each version once: no listing delivered twice in the same state.
  assert.equal(new Set(all.map((l) => `${l.id}@${l.updatedAt}`)).size, all.length);
  assert.ok(!references().includes('LISTEN-OLD-2'), 'the present is not a change');
  const old = all.filter((l) => l.externalReference === 'LISTEN-OLD-1');
  assert.deepEqual(
    old.map((l) => l.price),
    [12345],
  );
  // The body's listings are the listings as GET /listings/{id} shows them.
  const one = all.find((l) => l.externalReference === 'LISTEN-149')!;
  const read = await app.call('GET', `${EXT}/listings/${one.id}`, { secret });
  assert.deepEqual(one, read.body.data);

  const exited = new Promise<number | null>((resolve) => listener!.once('exit', (code) => resolve(code)));
  listener.kill('SIGTERM');
  assert.equal(await exited, 0, output);
});

test('--from start delivers every listing in scope first, then goes on', async () => {
  received.length = 0;
  output = '';
  const run = spawn(
    process.execPath,
    [BIN, 'listen', '--forward-to', receiverUrl, '--from', 'start', '--interval-ms', '100'],
    {
      env: {
        ...baseEnv(),
        FORECOURT_URL: app.url,
        FORECOURT_SECRET: secret,
        FORECOURT_CA: path.join(app.dataDir, 'tls', 'localhost-cert.pem'),
        FORECOURT_WEBHOOK_SECRET: WEBHOOK_SECRET,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  run.stdout!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  run.stderr!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const references = () => received.flatMap((r) => r.body.data.map((l) => l.externalReference as string));
  // The 152 listings of this partner (the 150, and the two that existed before the first test).
  await waitFor('every listing', () => new Set(references()).size >= 152);
  assert.ok(references().includes('LISTEN-OLD-2'));
  assert.ok(received.every((r) => r.body.data.length <= 100));
  assert.deepEqual(problems, []);
  const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
  run.kill('SIGTERM');
  assert.equal(await exited, 0, output);
});

test('listen refuses bad options with exit code 2 and its usage', async () => {
  const run = spawn(process.execPath, [BIN, 'listen', '--url', 'https://x.example', '--secret', 'fc_x'], {
    env: baseEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  run.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => run.once('exit', resolve));
  assert.equal(code, 2);
  assert.match(err, /missing --forward-to/);
  assert.match(err, /Usage: forecourt listen/);
});

/** Starts `forecourt listen` with `args`; its stdout and stderr go to `sink`. */
function startListen(args: string[], sink: { text: string }): ChildProcess {
  const child = spawn(process.execPath, [BIN, 'listen', '--forward-to', receiverUrl, ...args], {
    env: {
      ...baseEnv(),
      FORECOURT_SECRET: secret,
      FORECOURT_CA: path.join(app.dataDir, 'tls', 'localhost-cert.pem'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => {
    sink.text += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    sink.text += c.toString();
  });
  return child;
}

async function stopListen(child: ChildProcess, said: { text: string }): Promise<void> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0, said.text);
}

test('with a test secret, listen says it forwards test data (docs/test-mode.md)', async () => {
  const said = { text: '' };
  const run = startListen(['--url', app.url, '--interval-ms', '100', '--secret', testSecret], said);
  try {
    const until = Date.now() + 60_000;
    while (!said.text.includes('listening') && Date.now() < until) await sleep(100);
    assert.match(said.text, /^ {2}test mode: /m);
  } finally {
    await stopListen(run, said);
  }
  const live = { text: '' };
  const liveRun = startListen(['--url', app.url, '--interval-ms', '100'], live);
  try {
    const until = Date.now() + 60_000;
    while (!live.text.includes('listening') && Date.now() < until) await sleep(100);
    assert.doesNotMatch(live.text, /test mode/);
  } finally {
    await stopListen(liveRun, live);
  }
});

test('a new signing secret is printed shortened and written to a file of its own (mode 0600) to read it from', async () => {
  const said = { text: '' };
  const run = startListen(['--url', app.url, '--interval-ms', '100'], said);
  try {
    const until = Date.now() + 60_000;
    while (!said.text.includes('listening') && Date.now() < until) await sleep(100);
    const printed = /signing secret: (whsec_\S{3})…\n/.exec(said.text);
    assert.ok(printed, said.text);
    const file = /new for this run, written to (\S+) \(mode 0600/.exec(said.text)?.[1];
    assert.ok(file, said.text);
    const whole = readFileSync(file, 'utf8').trim();
    assert.match(whole, /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/);
    assert.ok(whole.startsWith(printed[1]!));
    assert.ok(!said.text.includes(whole), 'the whole secret is not printed');
    assert.equal((await import('node:fs')).statSync(file).mode & 0o777, 0o600);
  } finally {
    await stopListen(run, said);
  }
  const file = /new for this run, written to (\S+) \(mode 0600/.exec(said.text)?.[1];
  assert.ok(file && !existsSync(file), `the run's secret file is removed when listen stops: ${file}`);
  // --show-secret prints it whole, when that is what you want.
  const shown = { text: '' };
  const again = startListen(['--url', app.url, '--webhook-secret', WEBHOOK_SECRET, '--show-secret'], shown);
  try {
    const until = Date.now() + 60_000;
    while (!shown.text.includes('listening') && Date.now() < until) await sleep(100);
    assert.ok(shown.text.includes(`signing secret: ${WEBHOOK_SECRET}\n`), shown.text);
  } finally {
    await stopListen(again, shown);
  }
});

test('the service away for a while stops nothing: one line when it goes, one when it is back, and the changes made meanwhile arrive', async () => {
  received.length = 0;
  const proxy = await startFlakyProxy(app);
  const said = { text: '' };
  const run = startListen(
    [
      '--url',
      proxy.url,
      '--webhook-secret',
      WEBHOOK_SECRET,
      '--interval-ms',
      '100',
      '--max-backoff-ms',
      '400',
    ],
    said,
  );
  try {
    const until = Date.now() + 60_000;
    while (!said.text.includes('listening') && Date.now() < until) await sleep(100);
    assert.match(said.text, /listening/);
    // Twelve requests in a row get no answer (the client alone gave up after five), and a few get
    // the 503 of a load balancer whose service is restarting.
    proxy.plan(
      ...Array.from({ length: 12 }, () => 'reset' as const),
      { status: 503 },
      { status: 502 },
      'reset',
    );
    await putOk(app, secret, 'LISTEN-AWAY-1', listingBody({ price: 15555 }));
    const delivered = () =>
      received.some(
        (r) => r.answered === 204 && r.body.data.some((l) => l.externalReference === 'LISTEN-AWAY-1'),
      );
    const deadline = Date.now() + 60_000;
    while (!delivered() && Date.now() < deadline) await sleep(100);
    assert.ok(delivered(), said.text);
    assert.ok(run.exitCode === null, 'still running');
    assert.ok(proxy.seen.filter((r) => r.action === 'reset').length >= 13, 'every planned failure was met');
    const away = said.text.match(/service not answering/g) ?? [];
    const back =
      said.text.match(/service answering again after [\d.]+ s \(15 failed attempts\); going on/g) ?? [];
    assert.equal(away.length, 1, said.text);
    assert.equal(back.length, 1, said.text);
    assert.match(
      said.text,
      /service not answering \(NETWORK_ERROR: .*\); retrying with back-off up to 0\.4 s until it answers/,
    );
    assert.doesNotMatch(said.text, /attempt \d+ failed/, 'no line per attempt');
  } finally {
    await stopListen(run, said);
    await proxy.close();
  }
});
