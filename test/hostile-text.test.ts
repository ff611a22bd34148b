import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
  type Tree,
  unique,
} from './helpers/app.js';
import { eventually } from './helpers/eventually.js';

/**
 * Issue 28: text nobody designed for, one test per point the issue found (each failed on the code
 * before it). What the service answers, and that afterwards records, usage and deliveries still
 * work for everyone. The OpenAPI-driven layer over every route is test/hostile-layer.test.ts.
 */

const ADMIN = '/api/admin/v1';
const SCOPES = [...ALL_SCOPES, 'manage:webhooks'];
type Partner = { id: string; secret: string };

/** A request sent as bytes, past the test helpers' JSON and contract checks. */
async function raw(
  app: TestApp,
  method: string,
  path: string,
  options: { secret?: string; admin?: boolean; body?: string | Buffer; contentType?: string } = {},
) {
  const headers: Record<string, string> = {};
  if (options.secret) headers.authorization = `Bearer ${options.secret}`;
  if (options.admin) headers.authorization = `Bearer ${app.running.adminToken}`;
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const res = await request(`${app.url}${path}`, {
    method: method as 'GET',
    headers,
    body: options.body,
    dispatcher: app.dispatcher,
  });
  const text = await res.body.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.statusCode, headers: res.headers, text, body };
}

describe('hostile text: nothing a client sends corrupts, silences or stalls the service', () => {
  let app: TestApp;
  let tree: Tree;
  let acme: Partner;
  let other: Partner;

  before(async () => {
    app = await bootApp({ WEBHOOK_ALLOW_PRIVATE: '1' });
    tree = await createTree(app);
    acme = await createPartner(app, { roots: [tree.ids.A!], scopes: SCOPES, name: unique('Acme') });
    other = await createPartner(app, { roots: [tree.ids.B!], scopes: SCOPES });
  });
  after(() => app.close());

  /** The partner's newest kept failure with this request's id (GET /requests flushes first). */
  async function recorded(partner: Partner, requestId: string) {
    const reply = await app.call('GET', `${EXT}/requests/${encodeURIComponent(requestId)}`, {
      secret: partner.secret,
    });
    assert.equal(reply.status, 200, reply.text);
    return reply.body.data;
  }

  /** A refused request of `partner` is kept and counted: the recorder still writes. */
  async function recorderStillWrites(partner: Partner): Promise<void> {
    const reply = await app.call('GET', `${EXT}/listings?stauts=sold`, { secret: partner.secret });
    assert.equal(reply.status, 400);
    const kept = await recorded(partner, reply.headers['x-request-id'] as string);
    assert.ok(kept, 'the ordinary failure after the hostile ones was kept');
    assert.equal(kept.code, 'INVALID_QUERY');
  }

  test('1. a NUL in a query name, a body key or a malformed body is refused, kept readable, and silences nothing', async () => {
    const query = await raw(app, 'GET', `${EXT}/listings?a%00b=1`, { secret: acme.secret });
    assert.equal(query.status, 400, query.text);
    assert.equal(query.body.error.code, 'INVALID_QUERY');
    assert.equal(query.body.error.issues[0].code, 'invalid_text');
    assert.match(query.body.error.issues[0].message, /U\+0000/);

    const key = await raw(app, 'PUT', `${EXT}/listings/${unique('nul')}`, {
      secret: acme.secret,
      body: JSON.stringify({ ...listingBody({ dealerLocationCode: tree.codes.A }), 'a\u0000b': 1 }),
    });
    assert.equal(key.status, 422, key.text);
    assert.equal(key.body.error.issues[0].code, 'unknown_field');

    const malformed = await raw(app, 'PUT', `${EXT}/listings/${unique('nul')}`, {
      secret: acme.secret,
      body: '{"a": \u0000}',
    });
    assert.equal(malformed.status, 400, malformed.text);
    assert.equal(malformed.body.error.code, 'INVALID_JSON');
    assert.match(malformed.body.error.message, /unexpected character U\+0000 at line 1, column 7/);

    // Each was kept, its NUL made visible as U+FFFD, and every later record of anyone is kept too.
    for (const reply of [query, key, malformed]) {
      const kept = await recorded(acme, reply.headers['x-request-id'] as string);
      assert.ok(kept, `kept: ${reply.text}`);
      assert.doesNotMatch(JSON.stringify(kept), /\\u0000/);
    }
    assert.match((await recorded(acme, query.headers['x-request-id'] as string)).issues[0].path, /a\uFFFDb/);
    await recorderStillWrites(acme);
    await recorderStillWrites(other);
    // Usage is counted for the partner after them (the operator's view of the last hour).
    const usage = await app.admin('GET', `/partners/${other.id}/usage?window=24h`);
    const requests = usage.buckets.reduce((n: number, b: { requests: number }) => n + b.requests, 0);
    assert.ok(requests >= 2, JSON.stringify(usage));
  });

  test('2. a receiver answering 200 with a NUL gets the delivery once; the log and the test ping work', async () => {
    const seen: string[] = [];
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(String(req.headers['webhook-id']));
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok\u0000thanks');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const created = await app.call('POST', `${EXT}/webhooks`, { secret: acme.secret, body: { url } });
      assert.equal(created.status, 201, created.text);
      const endpoint = created.body.data;
      const put = await app.call('PUT', `${EXT}/listings/${unique('hook')}`, {
        secret: acme.secret,
        body: listingBody({ dealerLocationCode: tree.codes.A }),
      });
      assert.equal(put.status, 201, put.text);
      const deliveries = async () =>
        (await app.call('GET', `${EXT}/webhooks/${endpoint.id}/deliveries`, { secret: acme.secret })).body
          .data as any[];
      await eventually(
        async () =>
          (await deliveries()).some((d) => d.type === 'listings.changed' && d.status === 'succeeded'),
        () => `requests: ${seen.join(', ')}`,
      );
      // A while longer: a delivery that was not acknowledged would come again at once.
      await new Promise((r) => setTimeout(r, 1500));
      const changed = seen.filter((id, i) => seen.indexOf(id) === i);
      assert.equal(seen.length, changed.length, `each delivery once, got ${seen.join(', ')}`);
      const [logged] = (await deliveries()).filter((d) => d.type === 'listings.changed');
      assert.equal(logged.responseBody, 'ok\uFFFDthanks');

      const ping = await app.call('POST', `${EXT}/webhooks/${endpoint.id}/test`, { secret: acme.secret });
      assert.equal(ping.status, 200, ping.text);
      assert.equal(ping.body.data.status, 'succeeded');
      assert.equal(ping.body.data.responseBody, 'ok\uFFFDthanks');
      await app.call('DELETE', `${EXT}/webhooks/${endpoint.id}`, { secret: acme.secret });
    } finally {
      server.close();
    }
  });

  test('2. a delivery the service cannot record waits, longer each time, and goes on once it can', async () => {
    const seen: number[] = [];
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(Date.now());
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const hidden = 'webhook_attempts_hidden';
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const created = await app.call('POST', `${EXT}/webhooks`, { secret: other.secret, body: { url } });
      assert.equal(created.status, 201, created.text);
      // The delivery log refuses every write: each round's acknowledgement fails.
      await app.running.db.exec('hide', `ALTER TABLE webhook_attempts RENAME TO ${hidden}`);
      await app.call('PUT', `${EXT}/listings/${unique('wait')}`, {
        secret: other.secret,
        body: listingBody({ dealerLocationCode: tree.codes.B }),
      });
      await eventually(
        () => seen.length >= 1,
        () => 'no first delivery',
      );
      await new Promise((r) => setTimeout(r, 3500));
      // Rounds at 0, 1 s and 3 s; without a floor it was dozens a second.
      assert.ok(seen.length >= 2 && seen.length <= 4, `deliveries while refused: ${seen.length}`);
      await app.running.db.exec('show', `ALTER TABLE ${hidden} RENAME TO webhook_attempts`);
      const deliveries = async () =>
        (
          await app.call('GET', `${EXT}/webhooks/${created.body.data.id}/deliveries`, {
            secret: other.secret,
          })
        ).body.data as { status: string }[];
      await eventually(
        async () => (await deliveries()).some((d) => d.status === 'succeeded'),
        () => 'no delivery recorded after the log came back',
      );
      await app.call('DELETE', `${EXT}/webhooks/${created.body.data.id}`, { secret: other.secret });
    } finally {
      await app.running.db.exec('show', `ALTER TABLE IF EXISTS ${hidden} RENAME TO webhook_attempts`);
      server.close();
    }
  });

  test('3. GET /requests/%00 and a%00b: 400 naming the path, on the partner and the admin API', async () => {
    for (const id of ['%00', 'a%00b']) {
      for (const [path, options] of [
        [`${EXT}/requests/${id}`, { secret: acme.secret }],
        [`${ADMIN}/requests/${id}`, { admin: true }],
      ] as const) {
        const reply = await raw(app, 'GET', path, options);
        assert.equal(reply.status, 400, `${path}: ${reply.text}`);
        assert.equal(reply.body.error.code, 'BAD_REQUEST');
        assert.match(reply.body.error.message, /path contains U\+0000/);
        assert.ok(reply.headers['x-request-id']);
      }
    }
  });

  test('4. Latin-1 is refused, never stored as U+FFFD: a declared charset, bare bytes, a lone surrogate', async () => {
    const reference = unique('latin');
    const latin1 = Buffer.from(
      JSON.stringify(listingBody({ dealerLocationCode: tree.codes.A, title: 'Citroën C3' })),
      'latin1',
    );
    const declared = await raw(app, 'PUT', `${EXT}/listings/${reference}`, {
      secret: acme.secret,
      body: latin1,
      contentType: 'application/json; charset=iso-8859-1',
    });
    assert.equal(declared.status, 415, declared.text);
    assert.equal(declared.body.error.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(declared.body.error.message, /charset=iso-8859-1.*UTF-8/);

    const bare = await raw(app, 'PUT', `${EXT}/listings/${reference}`, { secret: acme.secret, body: latin1 });
    assert.equal(bare.status, 400, bare.text);
    assert.equal(bare.body.error.code, 'INVALID_JSON');
    const offset = latin1.indexOf(0xeb);
    assert.match(bare.body.error.message, new RegExp(`byte 0xEB at offset ${offset}`));

    const surrogate = await raw(app, 'PUT', `${EXT}/listings/${reference}`, {
      secret: acme.secret,
      body: JSON.stringify(listingBody({ dealerLocationCode: tree.codes.A })).replace(
        '"title":"',
        '"title":"\\ud800',
      ),
    });
    assert.equal(surrogate.status, 422, surrogate.text);
    assert.equal(surrogate.body.error.issues[0].path, 'title');

    // Nothing was stored; the same listing in UTF-8 keeps its ë.
    const none = await app.call('GET', `${EXT}/listings?externalReference=${reference}&status=all`, {
      secret: acme.secret,
    });
    assert.equal(none.body.data.length, 0);
    const utf8 = await raw(app, 'PUT', `${EXT}/listings/${reference}`, {
      secret: acme.secret,
      body: latin1.toString('latin1'),
      contentType: 'application/json; charset=UTF-8',
    });
    assert.equal(utf8.status, 201, utf8.text);
    const back = await app.call('GET', `${EXT}/listings?externalReference=${reference}`, {
      secret: acme.secret,
    });
    assert.equal(back.body.data[0].title, 'Citroën C3');
  });

  test('5. 200,000 unknown names: refused at once; names of a bulk capped at 100 issues with the total', async () => {
    const huge = `{${Array.from({ length: 200_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
    const reply = await raw(app, 'PUT', `${EXT}/listings/${unique('keys')}`, {
      secret: acme.secret,
      body: huge,
    });
    assert.equal(reply.status, 400, reply.text.slice(0, 300));
    assert.equal(reply.body.error.code, 'INVALID_BODY');
    assert.match(reply.body.error.message, /more than 1000 names; at most 1000/);
    assert.ok(reply.text.length < 2000, `a short answer, not 200,000 issues (${reply.text.length})`);

    // Within the limit: 100 items of 998 unknown names each; each item lists 100 and the total.
    const items = Array.from({ length: 100 }, (_, j) => ({
      externalReference: unique(`b${j}`),
      title: 'x',
      ...Object.fromEntries(Array.from({ length: 998 }, (_, i) => [`zz${i}`, 1])),
    }));
    const bulk = await app.call('POST', `${EXT}/listings/bulk-upsert`, { secret: acme.secret, body: items });
    assert.equal(bulk.status, 200, bulk.text.slice(0, 300));
    assert.equal(bulk.body.data.errorCount, 100);
    for (const error of bulk.body.data.errors) {
      assert.equal(error.issues.length, 100);
      assert.ok(error.issueCount >= 998, String(error.issueCount));
    }
    // One object's names past the limit are refused wherever the object is.
    const deep = {
      items: [
        {
          externalReference: 'x',
          title: 'y',
          features: [Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, 1]))],
        },
      ],
    };
    const nested = await raw(app, 'POST', `${EXT}/listings/bulk-upsert`, {
      secret: acme.secret,
      body: JSON.stringify(deep),
    });
    assert.equal(nested.status, 400, nested.text);
    assert.equal(nested.body.error.issues[0].path, 'items.0.features.0');
  });

  test('6. records never quote a body, and an unknown path is cut in the message as in the route', async () => {
    const secretish = 'an.peeters@dealer.example';
    const malformed = await raw(app, 'PUT', `${EXT}/listings/${unique('q')}`, {
      secret: acme.secret,
      body: `{"c": ${secretish}}`,
    });
    assert.equal(malformed.status, 400);
    assert.doesNotMatch(malformed.text, /peeters/);
    const kept = await recorded(acme, malformed.headers['x-request-id'] as string);
    assert.doesNotMatch(JSON.stringify(kept), /peeters/);
    assert.match(kept.message, /unexpected character 'a' at line 1, column 7/);

    const long = `/x${'y'.repeat(5300)}`;
    const unknown = await raw(app, 'GET', `${EXT}${long}`, { secret: acme.secret });
    assert.equal(unknown.status, 404);
    const record = await recorded(acme, unknown.headers['x-request-id'] as string);
    assert.ok(record.route.length < 300, `route ${record.route.length}`);
    assert.ok(record.message.length <= 1100, `message ${record.message.length}`);
    assert.match(record.message, /characters\)/);
  });

  test('7. after rotate-secret, the test ping is signed with the new and the old secret', async () => {
    const bodies: { body: string; headers: Record<string, string> }[] = [];
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({
          body: Buffer.concat(chunks).toString('utf8'),
          headers: {
            'webhook-id': String(req.headers['webhook-id']),
            'webhook-timestamp': String(req.headers['webhook-timestamp']),
            'webhook-signature': String(req.headers['webhook-signature']),
          },
        });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const created = await app.call('POST', `${EXT}/webhooks`, {
        secret: other.secret,
        body: { url, filter: { status: ['sold'] } },
      });
      assert.equal(created.status, 201, created.text);
      const oldSecret = created.body.data.secret;
      const rotated = await app.call('POST', `${EXT}/webhooks/${created.body.data.id}/rotate-secret`, {
        secret: other.secret,
      });
      assert.equal(rotated.status, 200, rotated.text);
      const newSecret = rotated.body.data.secret;
      const ping = await app.call('POST', `${EXT}/webhooks/${created.body.data.id}/test`, {
        secret: other.secret,
      });
      assert.equal(ping.status, 200, ping.text);
      const message = bodies.find((b) => JSON.parse(b.body).type === 'ping')!;
      assert.equal(message.headers['webhook-signature']!.split(' ').length, 2);
      for (const secret of [newSecret, oldSecret]) {
        // Each secret alone verifies: a receiver not yet switched keeps accepting.
        new Webhook(secret).verify(message.body, message.headers);
      }
      await app.call('DELETE', `${EXT}/webhooks/${created.body.data.id}`, { secret: other.secret });
    } finally {
      server.close();
    }
  });

  test('8. webhook URLs with NUL, CR, LF, tab or space are refused, not rewritten; IPv4 written as IPv6 too', async () => {
    const app2 = await bootApp();
    try {
      const partner = await createPartner(app2, {
        global: true,
        scopes: ['read:listings', 'manage:webhooks'],
      });
      for (const url of [
        'https://203.0.114.7/a\r\nX-Injected: 1',
        'https://203.0.114.7/a\u0000b',
        'https://203.0.114.7/a\tb',
        'https://203.0.114.7/a b',
        '\nhttps://203.0.114.7/a',
        'https://203.0.114.7/\ud800',
      ]) {
        const reply = await app2.call('POST', `${EXT}/webhooks`, { secret: partner.secret, body: { url } });
        assert.equal(reply.status, 422, `${JSON.stringify(url)}: ${reply.text}`);
        assert.equal(reply.body.error.issues[0].code, 'invalid_url', reply.text);
        assert.match(reply.body.error.issues[0].message, /control characters/);
      }
      for (const url of [
        'https://[::127.0.0.1]/hook',
        'https://[::10.0.0.1]/hook',
        'https://[::8.8.8.8]/hook',
      ]) {
        const reply = await app2.call('POST', `${EXT}/webhooks`, { secret: partner.secret, body: { url } });
        assert.equal(reply.status, 422, `${url}: ${reply.text}`);
        assert.equal(reply.body.error.issues[0].code, 'forbidden_address');
        assert.match(reply.body.error.issues[0].message, /IPv4 written as IPv6/);
      }
    } finally {
      await app2.close();
    }
  });

  test('8. a URL field of the operator API (a dealer logo) with NUL, a tab or a lone surrogate inside: 422, never stored', async () => {
    for (const logoUrl of [
      'https://a.example/x\u0000y',
      'https://a.example/a\tb',
      'https://a.example/\ud800',
    ]) {
      for (const [path, body] of [
        ['/dealers', { locationCode: unique('LOGO'), logoUrl }],
        ['/dealers/import', { dealers: [{ locationCode: unique('LOGO'), logoUrl }] }],
      ] as const) {
        const reply = await raw(app, 'POST', `${ADMIN}${path}`, { admin: true, body: JSON.stringify(body) });
        assert.equal(reply.status, 422, `${path} ${JSON.stringify(logoUrl)}: ${reply.text}`);
        assert.match(JSON.stringify(reply.body.error.issues), /logoUrl/);
      }
    }
  });

  test('9. every admin API answer carries Cache-Control: no-store', async () => {
    for (const [path, options] of [
      [`${ADMIN}/partners`, { admin: true }],
      [`${ADMIN}/dealers`, { admin: true }],
      [`${ADMIN}/requests`, { admin: true }],
      [`${ADMIN}/partners`, {}],
      [`${ADMIN}/no-such-thing`, { admin: true }],
    ] as const) {
      const reply = await raw(app, 'GET', path, options);
      assert.equal(reply.headers['cache-control'], 'no-store', `${path} → ${reply.status}`);
    }
  });

  test('10. a trailing slash names the same resource: /listings/?pageSize=1 is the list', async () => {
    const slash = await app.call('GET', `${EXT}/listings/?pageSize=1&status=all`, { secret: acme.secret });
    const plain = await app.call('GET', `${EXT}/listings?pageSize=1&status=all`, { secret: acme.secret });
    assert.equal(slash.status, 200, slash.text);
    assert.equal(slash.body.pagination.pageSize, 1);
    assert.deepEqual(
      slash.body.data.map((l: { id: string }) => l.id),
      plain.body.data.map((l: { id: string }) => l.id),
    );
    const locations = await app.call('GET', `${EXT}/locations/`, { secret: acme.secret });
    assert.equal(locations.status, 200, locations.text);
  });
});

/**
 * Issue 41: a Windows-1252 export read as ISO-8859-1 turns `Škoda` into `\u008Akoda`; PUT answered
 * 201 and the listing was stored so. C1 control characters (U+0080 to U+009F) in a listing's or a
 * dealer's text are refused on every write route (docs/contract.md#text), naming the field and
 * the character's position; tab, CR and LF keep their rules.
 */
describe('C1 control characters in text: refused on every write route, naming the field and where', () => {
  let app: TestApp;
  let tree: Tree;
  let partner: Partner;
  const C1_RULE = /C1 control character.*Windows-1252.*send UTF-8/;

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    partner = await createPartner(app, { roots: [tree.ids.A!], scopes: SCOPES });
  });
  after(() => app.close());

  function assertC1(reply: { status: number; body: any; text: string }, path: string, message: RegExp) {
    assert.equal(reply.status, 422, reply.text);
    assert.equal(reply.body.error.code, 'VALIDATION_FAILED');
    const issue = reply.body.error.issues.find((i: { path: string }) => i.path === path);
    assert.ok(issue, `no issue at ${path}: ${reply.text}`);
    assert.match(issue.message, message);
    assert.match(issue.message, C1_RULE);
    assert.equal(issue.code, 'c1_control_character');
  }

  test('PUT: "\\u008akoda" as brand is a 422 naming brand and character 1, and nothing is stored', async () => {
    const reference = unique('c1-put');
    const reply = await app.call('PUT', `${EXT}/listings/${reference}`, {
      secret: partner.secret,
      body: listingBody({ brand: '\u008akoda', description: 'Line one\r\n\tline two' }),
    });
    assertC1(reply, 'brand', /^character 1 is U\+008A, a C1 control character/);
    assert.match(reply.body.error.message, /brand: character 1 is U\+008A|brand character 1 is U\+008A/);
    const read = await app.call('GET', `${EXT}/listings?externalReference=${reference}&status=all`, {
      secret: partner.secret,
    });
    assert.equal(read.body.data.length, 0, 'nothing was stored');
  });

  test('PUT: nested texts (features, location) and positions past the first character', async () => {
    const reply = await app.call('PUT', `${EXT}/listings/${unique('c1-nested')}`, {
      secret: partner.secret,
      body: listingBody({
        title: 'Citro\u0091n C3',
        features: [{ category: 'comfort', name: 'Cruise control' }, 'Stoel\u0092s'],
        location: { city: 'Li\u0088ge' },
      }),
    });
    assertC1(reply, 'title', /^character 6 is U\+0091/);
    assertC1(reply, 'features.1', /^character 6 is U\+0092/);
    assertC1(reply, 'location.city', /^character 3 is U\+0088/);
  });

  test('PATCH: a C1 character in the patch is refused; tab, CR and LF in a description still pass', async () => {
    const reference = unique('c1-patch');
    const created = await app.call('PUT', `${EXT}/listings/${reference}`, {
      secret: partner.secret,
      body: listingBody(),
    });
    assert.equal(created.status, 201, created.text);
    const refused = await app.call('PATCH', `${EXT}/listings/${reference}`, {
      secret: partner.secret,
      body: { model: 'Octavia \u0080 edition' },
    });
    assertC1(refused, 'model', /^character 9 is U\+0080/);
    const fine = await app.call('PATCH', `${EXT}/listings/${reference}`, {
      secret: partner.secret,
      body: { description: 'Line one\r\n\tline two' },
    });
    assert.equal(fine.status, 200, fine.text);
  });

  test('PATCH: a C1 character stored before the rule, in a field the patch leaves alone, does not refuse it', async () => {
    const reference = unique('c1-stored');
    const created = await app.call('PUT', `${EXT}/listings/${reference}`, {
      secret: partner.secret,
      body: listingBody({ description: 'Plain' }),
    });
    assert.equal(created.status, 201, created.text);
    // Stored before the rule existed: written straight to the database, past the API.
    await app.running.db.query(
      'TestStoreC1',
      'UPDATE listings SET description = $1, updated_at = next_updated_at(updated_at) WHERE external_reference = $2',
      ['Gar\u0080antie', reference],
    );
    const read = await app.call('GET', `${EXT}/listings/${created.body.data.listingId}`, {
      secret: partner.secret,
    });
    assert.equal(read.body.data.description, 'Gar\u0080antie', read.text);
    const price = await app.call('PATCH', `${EXT}/listings/${reference}`, {
      secret: partner.secret,
      body: { price: 1 },
    });
    assert.equal(price.status, 200, price.text);
    const description = await app.call('PATCH', `${EXT}/listings/${reference}`, {
      secret: partner.secret,
      body: { description: 'Ga\u0081rantie' },
    });
    assertC1(description, 'description', /^character 3 is U\+0081/);
    // A PUT replaces everything, so it checks everything.
    const put = await app.call('PUT', `${EXT}/listings/${reference}`, {
      secret: partner.secret,
      body: listingBody({ description: 'Gar\u0080antie' }),
    });
    assertC1(put, 'description', /^character 4 is U\+0080/);
  });

  test('bulk upsert: the item with a C1 character fails with the field named, the others are written', async () => {
    const reply = await app.call('POST', `${EXT}/listings/bulk-upsert`, {
      secret: partner.secret,
      body: [
        listingBody({ externalReference: unique('c1-ok') }),
        listingBody({ externalReference: unique('c1-bad'), color: 'Gris m\u009ftal' }),
      ],
    });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.data.successCount, 1, reply.text);
    const [failed] = reply.body.data.errors;
    assert.equal(failed.index, 1);
    assert.equal(failed.status, 422);
    assert.equal(failed.code, 'VALIDATION_FAILED');
    const issue = failed.issues.find((i: { path: string }) => i.path === 'color');
    assert.match(issue.message, /^character 7 is U\+009F, a C1 control character/);
  });

  test('admin dealer create, import and patch: a C1 character in a name is a 422 naming the field', async () => {
    const create = await app.call('POST', '/api/admin/v1/dealers', {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
      body: { locationCode: unique('c1'), displayName: '\u008aKODA Gent' },
    });
    assertC1(create, 'body.displayName', /^character 1 is U\+008A/);
    const imported = await app.call('POST', '/api/admin/v1/dealers/import', {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
      body: { dealers: [{ locationCode: unique('c1'), displayName: 'Garage', city: 'Li\u0088ge' }] },
    });
    assert.equal(imported.status, 422, imported.text);
    assert.match(imported.text, /character 3 is U\+0088/);
    const patch = await app.call('PATCH', `/api/admin/v1/dealers/${tree.ids.A1}`, {
      headers: { authorization: `Bearer ${app.running.adminToken}` },
      body: { companyName: 'Garage \u0080 NV' },
    });
    assertC1(patch, 'body.companyName', /^character 8 is U\+0080/);
  });
});
