import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent } from 'undici';
import { type AdminGroup, runAdminCommand } from '../src/cli/admin-commands.js';
import { parseConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { type Running, start } from '../src/runtime.js';
import { baseEnv } from './helpers/base-env.js';
import { httpsCall } from './helpers/https-call.js';
import { startReceiver } from './helpers/webhook-receiver.js';

// The CLI against the real service, over HTTPS, finding the admin token and the service's
// self-signed certificate in the data directory as an operator's shell would.
const dir = mkdtempSync(path.join(os.tmpdir(), 'fc-cli-'));
// Tests may share one PostgreSQL database with other files: codes get a random suffix.
const sfx = randomBytes(4).toString('hex').toUpperCase();
let running: Running;

before(async () => {
  const config = parseConfig({
    DATA_DIR: dir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    // The webhook test's receiver listens on this machine.
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  });
  running = await start(config, createLogger(config));
});

after(async () => {
  await running?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a command as `forecourt` would, capturing its output. */
async function capture(group: AdminGroup, args: string[], env: Record<string, string | undefined>) {
  let out = '';
  let err = '';
  const io = {
    out: (text: string) => {
      out += text;
    },
    err: (text: string) => {
      err += text;
    },
  };
  const code = await runAdminCommand(group, args, env, io);
  return { code, out, err };
}

/** Against the test service, with only DATA_DIR set: the token and certificate come from there. */
const cli = (group: AdminGroup, ...args: string[]) =>
  capture(group, [...args, '--url', running.url], { DATA_DIR: dir });

async function cliJson<T>(group: AdminGroup, ...args: string[]): Promise<T> {
  const result = await cli(group, ...args, '--json');
  assert.equal(result.code, 0, result.err);
  return JSON.parse(result.out) as T;
}

interface Dealer {
  id: string;
  locationCode: string;
  parentId: string | null;
  parent: { locationCode: string } | null;
  city: string | null;
}

test('dealers create: a root, then a child under it by parent code', async () => {
  const root = await cliJson<Dealer>(
    'dealers',
    'create',
    '--code',
    `ROOT-${sfx}`,
    '--display-name',
    'Root Motors',
    '--city',
    'Gent',
    '--metadata',
    '{"crm":"A-1"}',
  );
  assert.equal(root.locationCode, `ROOT-${sfx}`);
  assert.equal(root.parentId, null);
  assert.equal(root.city, 'Gent');

  // Readable output; the parent code is case-insensitive.
  const child = await cli('dealers', 'create', '--code', `CHILD-${sfx}`, '--parent-code', `root-${sfx}`);
  assert.equal(child.code, 0, child.err);
  assert.match(child.out, new RegExp(`^locationCode: +CHILD-${sfx}$`, 'm'));
  assert.match(child.out, new RegExp(`^parent: +ROOT-${sfx} \\(${root.id}\\)$`, 'm'));

  // get by location code, update with --parent none.
  const got = await cliJson<Dealer>('dealers', 'get', `child-${sfx}`);
  assert.equal(got.parentId, root.id);
  const moved = await cliJson<Dealer>('dealers', 'update', got.id, '--parent', 'none', '--city', 'Brugge');
  assert.equal(moved.parentId, null);
  assert.equal(moved.city, 'Brugge');
});

test('dealers import: a nested tree from a file, then again to update it', async () => {
  const tree = [
    {
      locationCode: `IMP-${sfx}`,
      displayName: 'Import Group',
      children: [
        { locationCode: `IMP-${sfx}-A`, children: [{ locationCode: `IMP-${sfx}-A1`, city: 'Leuven' }] },
      ],
    },
  ];
  const file = path.join(dir, 'tree.json');
  writeFileSync(file, JSON.stringify({ dealers: tree }));
  const first = await cli('dealers', 'import', file);
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, /3 created, 0 updated, 0 unchanged/);

  writeFileSync(file, JSON.stringify(tree)); // the bare array form
  const second = await cli('dealers', 'import', file);
  assert.equal(second.code, 0, second.err);
  // The same tree again changes nothing, and says so (it once reported "0 created, 3 updated").
  assert.match(second.out, /0 created, 0 updated, 3 unchanged/);

  tree[0]!.displayName = 'Import Group NV';
  writeFileSync(file, JSON.stringify(tree));
  const third = await cli('dealers', 'import', file);
  assert.equal(third.code, 0, third.err);
  assert.match(third.out, /0 created, 1 updated, 2 unchanged/);

  // A misspelt field anywhere in the tree is refused with the field it resembles.
  writeFileSync(
    file,
    JSON.stringify([{ ...tree[0], children: [{ locationCode: `IMP-${sfx}-B`, dispayName: 'B' }] }]),
  );
  const typo = await cli('dealers', 'import', file);
  assert.notEqual(typo.code, 0);
  assert.match(typo.err, /dispayName/);
  assert.match(typo.err, /did you mean `displayName`\?/);

  // Saved by Windows Notepad: a byte order mark first, which is no part of the JSON.
  writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(tree))]));
  const bom = await cli('dealers', 'import', file);
  assert.equal(bom.code, 0, bom.err);
  assert.match(bom.out, /0 created, 0 updated, 3 unchanged/);
  // A Windows-1252 "ë": refused with its offset, never sent as U+FFFD.
  writeFileSync(file, Buffer.from(`[{"locationCode":"IMP-${sfx}","city":"Li\xebge"}]`, 'latin1'));
  const latin = await cli('dealers', 'import', file);
  assert.notEqual(latin.code, 0);
  assert.match(latin.err, /is not UTF-8: byte 0xEB at offset/);
});

test('dealers list: JSON for scripts, a table for people', async () => {
  const dealers = await cliJson<Dealer[]>('dealers', 'list');
  const byCode = new Map(dealers.map((d) => [d.locationCode, d]));
  assert.ok(byCode.has(`ROOT-${sfx}`));
  assert.equal(byCode.get(`IMP-${sfx}-A1`)?.parent?.locationCode, `IMP-${sfx}-A`);

  const readable = await cli('dealers', 'list');
  assert.equal(readable.code, 0, readable.err);
  assert.match(readable.out, /^ID +LOCATIONCODE +DISPLAYNAME +PARENT +CITY$/m);
  assert.match(readable.out, new RegExp(`IMP-${sfx}-A1 +- +IMP-${sfx}-A +Leuven$`, 'm'));
});

test('partners create --root-codes, get, update and rotate-secret', async () => {
  const dealers = await cliJson<Dealer[]>('dealers', 'list');
  const idOf = (code: string) => dealers.find((d) => d.locationCode === code)?.id;

  const partner = await cliJson<{
    id: string;
    secret: string;
    scopes: string[];
    access: { rootProfileIds: string[] };
  }>(
    'partners',
    'create',
    '--name',
    `Portal ${sfx}`,
    '--root-codes',
    `root-${sfx},IMP-${sfx}`,
    '--scopes',
    'read:listings,write:listings',
  );
  assert.match(partner.secret, /^fc_/);
  assert.deepEqual(partner.scopes, ['read:listings', 'write:listings']);
  assert.deepEqual(partner.access.rootProfileIds.sort(), [idOf(`ROOT-${sfx}`), idOf(`IMP-${sfx}`)].sort());

  const shown = await cli('partners', 'get', partner.id);
  assert.equal(shown.code, 0, shown.err);
  assert.doesNotMatch(shown.out, /fc_/);
  assert.match(shown.out, new RegExp(`restricted to .*ROOT-${sfx}`));

  const updated = await cliJson<{ disabled: boolean; rateLimitPerMinute: number | null }>(
    'partners',
    'update',
    partner.id,
    '--disable',
    '--rate-limit',
    '120',
  );
  assert.equal(updated.disabled, true);
  assert.equal(updated.rateLimitPerMinute, 120);

  const rotated = await cliJson<{ id: string; secret: string; previousSecretValidUntil: string | null }>(
    'partners',
    'rotate-secret',
    partner.id,
    '--grace',
    '60',
  );
  assert.equal(rotated.id, partner.id);
  assert.match(rotated.secret, /^fc_/);
  assert.notEqual(rotated.secret, partner.secret);
  assert.ok(rotated.previousSecretValidUntil);

  const readable = await cli('partners', 'rotate-secret', partner.id);
  assert.equal(readable.code, 0, readable.err);
  assert.match(readable.out, /API secret: +fc_\w+/);
  assert.match(readable.out, /shown only once/);
  assert.match(readable.out, /previous secret no longer works/);

  const listed = await cli('partners', 'list');
  assert.match(
    listed.out,
    new RegExp(`^${partner.id} +Portal ${sfx} +read:listings,write:listings +restricted`, 'm'),
  );
});

test('partners test-secret and revoke-test-secret (docs/test-mode.md)', async () => {
  const partner = await cliJson<{ id: string }>(
    'partners',
    'create',
    '--name',
    `Test mode ${sfx}`,
    '--global',
  );
  const issued = await cli('partners', 'test-secret', partner.id);
  assert.equal(issued.code, 0, issued.err);
  assert.match(issued.out, /API secret: +fc_test_\w{46}\n/);
  assert.match(issued.out, /forecourt partners test-secret /);
  const shown = await cli('partners', 'get', partner.id);
  assert.match(shown.out, /testSecret: +issued \d{4}-/);
  const again = await cliJson<{ id: string; secret: string }>('partners', 'test-secret', partner.id);
  assert.match(again.secret, /^fc_test_/);
  const revoked = await cli('partners', 'revoke-test-secret', partner.id);
  assert.equal(revoked.code, 0, revoked.err);
  assert.match(revoked.out, /test secret of partner .* is revoked/);
  assert.match((await cli('partners', 'get', partner.id)).out, /testSecret: +none/);
  // None left to revoke: the service's 404, on stderr, exit 1.
  const none = await cli('partners', 'revoke-test-secret', partner.id);
  assert.equal(none.code, 1);
  assert.match(none.err, /NOT_FOUND/);
  assert.match(none.err, /has no test secret/);
});

test('an API error: exit 1, the code and message on stderr', async () => {
  const duplicate = await cli('dealers', 'create', '--code', `root-${sfx}`);
  assert.equal(duplicate.code, 1);
  assert.equal(duplicate.out, '');
  assert.match(duplicate.err, /^forecourt: CONFLICT: Location code .* is already in use/);

  const invalid = await cli('dealers', 'create', '--code', `BAD-${sfx}`, '--email', 'not-an-email');
  assert.equal(invalid.code, 1);
  assert.match(invalid.err, /^forecourt: VALIDATION_FAILED: /);
  assert.match(invalid.err, /^ {2}body\.email: /m);

  const unknownCode = await cli('partners', 'create', '--name', 'X', '--root-codes', `NOPE-${sfx}`);
  assert.equal(unknownCode.code, 1);
  assert.match(unknownCode.err, new RegExp(`no dealer profile has the location code "NOPE-${sfx}"`));
});

test('an unreachable service: exit 1 with the URL and how to start it', async () => {
  const port = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
  const url = `https://127.0.0.1:${port}`;
  const { code, err } = await capture('dealers', ['list', '--url', url], { DATA_DIR: dir });
  assert.equal(code, 1);
  assert.ok(err.includes(url), err);
  assert.match(err, /npm start/);
});

test("TLS: the service's certificate is verified, found in the data directory or given with --ca", async () => {
  const token = readFileSync(path.join(dir, 'admin-token'), 'utf8').trim();
  const elsewhere = { DATA_DIR: path.join(dir, 'elsewhere') }; // no certificate here to trust
  const run = (...args: string[]) =>
    capture('dealers', ['list', '--json', '--url', running.url, '--token', token, ...args], elsewhere);
  const untrusted = await run();
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.err, /could not be verified/);
  assert.equal((await run('--ca', path.join(dir, 'tls', 'localhost-cert.pem'))).code, 0);
  assert.equal((await run('--insecure')).code, 0);
});

test('usage: --help exits 0, mistakes exit 2 with the usage text', async () => {
  const help = await cli('partners', '--help');
  assert.equal(help.code, 0);
  assert.match(help.out, /^Usage: forecourt partners/);
  assert.equal((await cli('dealers', 'get', '--help')).code, 0);

  const noAccess = await cli('partners', 'create', '--name', 'X');
  assert.equal(noAccess.code, 2);
  assert.match(noAccess.err, /--global, --roots ID,\.\.\. or --root-codes/);
  assert.equal((await cli('partners', 'create', '--name', 'X', '--global', '--roots', 'a')).code, 2);
  assert.equal((await cli('dealers', 'create', '--city', 'Gent')).code, 2);
  assert.equal((await cli('dealers', 'create', '--code', 'X', '--metadata', '[1]')).code, 2);
  // A number JSON cannot keep (it would be sent as null, or with other digits): refused unsent.
  const infinite = await cli('dealers', 'create', '--code', 'X', '--metadata', '{"crm":{"id":1e999}}');
  assert.equal(infinite.code, 2);
  assert.match(infinite.err, /--metadata at crm\.id: 1e999 is beyond ±1\.8e308/);
  // Read as the service reads it: 1e-400 would have been sent as 0.
  const tiny = await cli('dealers', 'create', '--code', 'X', '--metadata', '{"crm":{"rate":1e-400}}');
  assert.equal(tiny.code, 2);
  assert.match(tiny.err, /--metadata at crm\.rate: 1e-400 is nearer zero than 5e-324/);
  const file = path.join(dir, 'big-number.json');
  writeFileSync(file, `[{"locationCode":"BIG-${sfx}","metadata":{"id":12345678901234567890}}]`);
  const big = await cli('dealers', 'import', file);
  assert.notEqual(big.code, 0);
  assert.match(big.err, /at 0\.metadata\.id: 12345678901234567890 is a whole number past 2\^53/);
  // Held exactly, but past what metadata takes (the service's rule, said before sending).
  const exact = await cli('dealers', 'create', '--code', 'X', '--metadata', '{"id":1e20}');
  assert.equal(exact.code, 2);
  assert.match(exact.err, /--metadata holds a whole number past ±9007199254740991 \(100000000000000000000\)/);
  const empty = path.join(dir, 'empty.json');
  writeFileSync(empty, ' \n');
  assert.match((await cli('dealers', 'import', empty)).err, /empty\.json is empty/);
  assert.equal((await cli('dealers', 'list', '--bogus')).code, 2);
  assert.equal((await cli('dealers', 'frobnicate')).code, 2);
  assert.equal((await cli('partners', 'rotate-secret', 'x', '--grace', '-1')).code, 2);
});

test('serve, demo and migrate --help print help and start nothing; an argument they do not take is refused', () => {
  const bin = path.resolve(import.meta.dirname, '../bin/forecourt.js');
  const empty = mkdtempSync(path.join(os.tmpdir(), 'fc-cli-help-'));
  try {
    const forecourt = (...args: string[]) =>
      spawnSync(process.execPath, [bin, ...args], {
        env: { ...baseEnv(), DATA_DIR: empty, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        // Issue 29: `forecourt demo --help` started the demo, which runs until stopped.
        timeout: 20_000,
      });
    for (const command of ['demo', 'serve', 'migrate']) {
      for (const flag of ['--help', '-h']) {
        const help = forecourt(command, flag);
        assert.equal(help.status, 0, `${command} ${flag}: ${help.error ?? help.stderr}`);
        assert.match(help.stdout, new RegExp(`^Usage: forecourt ${command}\n`));
      }
    }
    const wrong = forecourt('demo', '--port', '9000');
    assert.equal(wrong.status, 2, wrong.stderr);
    assert.match(wrong.stderr, /forecourt demo: unexpected argument "--port"/);
    assert.deepEqual(readdirSync(empty), [], 'nothing was started: no database, no certificate');
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test('audit-log: shows operator actions newest first, filtered, as a table or JSON; never a secret', async () => {
  const partner = await cliJson<{ id: string; secret: string }>(
    'partners',
    'create',
    '--name',
    `Audit CLI ${sfx}`,
    '--global',
  );
  const rotated = await cliJson<{ secret: string }>('partners', 'rotate-secret', partner.id);
  const entries = await cliJson<{ action: string; partnerId: string }[]>(
    'audit-log',
    'show',
    '--partner',
    partner.id,
  );
  assert.deepEqual(
    entries.map((e) => e.action),
    ['partner.secret_rotated', 'partner.created'],
  );
  const text = await cli('audit-log', 'show', '--action', 'partner.', '--limit', '5');
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /^AT\s+ACTION\s+SUBJECT/);
  assert.match(text.out, /partner\.secret_rotated/);
  for (const secret of [partner.secret, rotated.secret]) {
    assert.ok(!JSON.stringify(entries).includes(secret) && !text.out.includes(secret));
  }
  const bad = await cli('audit-log', 'show', '--since', 'yesterday');
  assert.equal(bad.code, 1);
  assert.match(bad.err, /INVALID_QUERY/);
});

test('webhooks: list, show with the delivery log, disable with a reason (the partner cannot resume), enable', async () => {
  const partner = await cliJson<{ id: string; secret: string }>(
    'partners',
    'create',
    '--name',
    `Webhook CLI ${sfx}`,
    '--global',
    '--scopes',
    'read:listings,manage:webhooks',
  );
  const dispatcher = new Agent({
    connect: { ca: readFileSync(path.join(dir, 'tls', 'localhost-cert.pem')) },
  });
  const receiver = await startReceiver();
  const asPartner = (method: string, urlPath: string, body?: unknown) =>
    httpsCall(running.url, dispatcher, method, `/api/external/v1${urlPath}`, {
      headers: { authorization: `Bearer ${partner.secret}` },
      ...(body === undefined ? {} : { body }),
    });
  try {
    const created = await asPartner('POST', '/webhooks', { url: receiver.url, description: 'CLI test' });
    assert.equal(created.status, 201, created.text);
    const id: string = created.body.data.id;
    receiver.secrets.push(created.body.data.secret);
    assert.equal((await asPartner('POST', `/webhooks/${id}/test`)).status, 200);

    const listed = await cli('webhooks', 'list', '--partner', partner.id);
    assert.equal(listed.code, 0, listed.err);
    assert.match(listed.out, /^ID +PARTNERID +URL +STATE +DISABLEDREASON$/m);
    assert.match(listed.out, new RegExp(`${id} +${partner.id} +${receiver.url} +delivering`));

    const disabled = await cli('webhooks', 'disable', id, '--reason', 'answers 200 without storing');
    assert.equal(disabled.code, 0, disabled.err);
    assert.match(disabled.out, /state: +disabled/);
    assert.match(disabled.out, /disabledReason: +disabled by the operator: answers 200 without storing/);
    for (const attempt of [
      () => asPartner('POST', `/webhooks/${id}/resume`),
      () => asPartner('PATCH', `/webhooks/${id}`, { enabled: true }),
    ]) {
      const refused = await attempt();
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.error.code, 'CONFLICT');
      assert.match(refused.body.error.message, /only the operator can enable it again/);
    }
    const seen = await asPartner('GET', `/webhooks/${id}`);
    assert.match(seen.body.data.disabledReason, /answers 200 without storing/);

    const shown = await cli('webhooks', 'show', id);
    assert.equal(shown.code, 0, shown.err);
    assert.match(shown.out, /description: +CLI test/);
    assert.match(shown.out, /^AT +WEBHOOKID +TYPE +ATTEMPT +STATUS +CODE +LISTINGS +TOOK +ERROR$/m);
    assert.match(shown.out, /msg_\S+ +ping +1 +succeeded +200 +0/);

    const enabled = await cliJson<{ enabled: boolean; disabledReason: string | null }>(
      'webhooks',
      'enable',
      id,
    );
    assert.deepEqual([enabled.enabled, enabled.disabledReason], [true, null]);
    const audit = await cliJson<{ action: string; actor: string }[]>(
      'audit-log',
      'show',
      '--partner',
      partner.id,
    );
    assert.deepEqual(
      audit.slice(0, 3).map((e) => `${e.actor} ${e.action}`),
      ['operator webhook.enabled', 'operator webhook.disabled', 'partner webhook.created'],
    );

    const missing = await cli('webhooks', 'show', '00000000-0000-4000-8000-000000000000');
    assert.equal(missing.code, 1);
    assert.match(missing.err, /NOT_FOUND/);
  } finally {
    await receiver.close();
    await dispatcher.close();
  }
});

test('requests and operators: a partner failure found by its id and in usage; a named token signs the CLI in', async () => {
  const partner = await cliJson<{ id: string; secret: string }>(
    'partners',
    'create',
    '--name',
    `Requests CLI ${sfx}`,
    '--global',
    '--scopes',
    'write:listings',
  );
  const dispatcher = new Agent({
    connect: { ca: readFileSync(path.join(dir, 'tls', 'localhost-cert.pem')) },
  });
  const requestId = `cli-${sfx}-failed`;
  const refused = await httpsCall(running.url, dispatcher, 'PUT', '/api/external/v1/listings/CLI-1', {
    headers: { authorization: `Bearer ${partner.secret}`, 'x-request-id': requestId },
    body: { title: 'Golf', price: 1000, year: 1850 },
  });
  await dispatcher.close();
  assert.equal(refused.status, 422);

  const shown = await cli('requests', 'show', requestId);
  assert.equal(shown.code, 0, shown.err);
  assert.match(shown.out, new RegExp(`partner:\\s+Requests CLI ${sfx} \\(${partner.id}\\)`));
  assert.match(shown.out, /answer:\s+422 VALIDATION_FAILED/);
  assert.match(shown.out, /issue 1:\s+year: must be between 1900/);
  const listed = await cli('requests', 'list', '--partner', partner.id, '--status', '4xx');
  assert.match(listed.out, /PUT \/listings\/\{listing\}\s+422\s+VALIDATION_FAILED/);
  const usage = await cli('requests', 'usage', partner.id);
  assert.match(usage.out, /^24h: 1 requests, 1 4xx \(0 rate-limited\), 0 5xx/);
  const missing = await cli('requests', 'show', 'no-such-request');
  assert.equal(missing.code, 1);
  assert.match(missing.err, /NOT_FOUND/);

  const created = await cli('operators', 'create', `Dana ${sfx}`);
  assert.equal(created.code, 0, created.err);
  const token = /Operator token:\s+(fco_[0-9a-f]{48})/.exec(created.out)?.[1];
  assert.ok(token, created.out);
  const whoami = await capture('operators', ['whoami', '--url', running.url, '--token', token], {
    DATA_DIR: dir,
  });
  assert.equal(whoami.out, `Dana ${sfx} (${/Created operator token (\S+) /.exec(created.out)![1]})\n`);
  const listedOps = await cli('operators', 'list');
  assert.match(listedOps.out, new RegExp(`Dana ${sfx}`));
  assert.ok(!listedOps.out.includes(token), 'a token is shown only when created');
});
