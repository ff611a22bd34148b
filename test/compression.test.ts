import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import { Agent, type Dispatcher, request } from 'undici';
import { createClient } from '../packages/client/src/index.js';
import { gzipEngine, gzipSync } from '../src/http/gzip.js';
import {
  ALL_SCOPES,
  bootApp,
  createPartner,
  createTree,
  EXT,
  listingBody,
  type TestApp,
} from './helpers/app.js';

/**
 * Issue 45: answers compressed as the client asks (docs/api.md#compression). Raw bytes over HTTPS
 * with undici's request, which decodes nothing, so what is measured is what the wire carries.
 */

const decoders: Record<string, (bytes: Buffer) => Buffer> = {
  gzip: (b) => zlib.gunzipSync(b),
  br: (b) => zlib.brotliDecompressSync(b),
  ...(typeof (zlib as { zstdDecompressSync?: unknown }).zstdDecompressSync === 'function'
    ? {
        zstd: (b: Buffer) =>
          (zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer }).zstdDecompressSync(b),
      }
    : {}),
};

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

describe('compression of answers, negotiated by Accept-Encoding', () => {
  let app: TestApp;
  let secret: string;
  const listPath = `${EXT}/listings?pageSize=50`;

  const raw = async (method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
    const res = await request(`${app.url}${path}`, {
      method: method as Dispatcher.HttpMethod,
      headers: { authorization: `Bearer ${secret}`, ...headers },
      ...(body !== undefined ? { body } : {}),
      dispatcher: app.dispatcher,
    });
    return {
      status: res.statusCode,
      headers: res.headers,
      bytes: Buffer.from(await res.body.arrayBuffer()),
    } as Raw;
  };
  const decoded = (answer: Raw) => {
    const encoding = answer.headers['content-encoding'] as string | undefined;
    return encoding ? decoders[encoding]!(answer.bytes) : answer.bytes;
  };

  before(async () => {
    app = await bootApp();
    const tree = await createTree(app);
    ({ secret } = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES }));
    // A page of 50 listings with the fields a dealer system sends.
    const items = Array.from({ length: 50 }, (_, i) =>
      listingBody({
        externalReference: `cmp-${i}`,
        dealerLocationCode: tree.codes.A,
        description: `Well kept, full service history, ${i} previous owners. `.repeat(4),
        images: Array.from({ length: 10 }, (_, k) => ({ url: `https://cdn.example/cars/${i}/${k}.jpg` })),
      }),
    );
    const bulk = await app.call('POST', `${EXT}/listings/bulk-upsert`, { secret, body: items });
    assert.equal(bulk.status, 200, bulk.text);
  });
  after(() => app?.close());

  test('each encoding the client accepts is used, and decodes to exactly the uncompressed answer', async () => {
    const plain = await raw('GET', listPath);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    const data = JSON.parse(plain.bytes.toString('utf8')).data;
    assert.equal(data.length, 50);
    for (const encoding of Object.keys(decoders)) {
      const answer = await raw('GET', listPath, { 'accept-encoding': encoding });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-encoding'], encoding);
      assert.match(String(answer.headers.vary), /accept-encoding/i);
      assert.deepEqual(JSON.parse(decoded(answer).toString('utf8')).data, data, encoding);
      if (encoding === 'gzip') {
        // The bytes are those of the engine the process loaded (ISA-L where built, in CI always).
        assert.ok(answer.bytes.equals(gzipSync(decoded(answer), { level: 3 })), gzipEngine);
      }
      // The bar: a 50-listing page at most a quarter of its bytes.
      assert.ok(
        answer.bytes.length * 4 <= plain.bytes.length,
        `${encoding}: ${answer.bytes.length} of ${plain.bytes.length} bytes`,
      );
    }
  });

  test('preferences: q-values first, then zstd, br, gzip; identity and q=0 are honoured', async () => {
    const cases: [string, string | undefined][] = [
      ['gzip, br', 'br'],
      ['gzip;q=1, br;q=0.5', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['identity', undefined],
      ['deflate', undefined],
    ];
    for (const [accept, expected] of cases) {
      const answer = await raw('GET', listPath, { 'accept-encoding': accept });
      assert.equal(answer.status, 200, accept);
      assert.equal(answer.headers['content-encoding'], expected, accept);
      assert.equal(JSON.parse(decoded(answer).toString('utf8')).data.length, 50, accept);
    }
    // "*" takes whatever the service prefers, and it decodes.
    const any = await raw('GET', listPath, { 'accept-encoding': '*' });
    assert.ok(any.headers['content-encoding'], 'an encoding for *');
    assert.equal(JSON.parse(decoded(any).toString('utf8')).data.length, 50);
  });

  test("the service's sockets send without Nagle's delay: a compressed page leaves in pieces", async () => {
    // zlib's stream hands a compressed page to the socket in several writes; with Nagle's
    // algorithm on, the last waits for the client's delayed ACK (about 40 ms a page, the
    // 2026-11-28 matrix: 38 pages/s with gzip against 600 without). Node's HTTP servers turn it
    // off on the sockets they accept; ours are accepted by the TLS-or-plain front
    // (http/listener.ts) and handed over, so the front must. What a socket was set to is Node's
    // own bookkeeping (the symbol kSetNoDelay of net.Socket): read from the socket the service
    // accepted for this very request, in this process.
    const accepted = new Promise<object>((resolve) =>
      app.running.app.server.once('secureConnection', (tls: { _parent?: object }) =>
        resolve(tls._parent ?? tls),
      ),
    );
    const fresh = new Agent({
      connect: { ca: readFileSync(path.join(app.dataDir, 'tls', 'localhost-cert.pem'), 'utf8') },
    });
    try {
      const res = await request(`${app.url}${listPath}`, {
        headers: { authorization: `Bearer ${secret}`, 'accept-encoding': 'gzip' },
        dispatcher: fresh,
      });
      await res.body.arrayBuffer();
      assert.equal(res.headers['content-encoding'], 'gzip');
      const socket = await accepted;
      const noDelay = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'kSetNoDelay');
      assert.ok(noDelay, 'this Node.js keeps no kSetNoDelay on its sockets: the test must find another way');
      assert.equal((socket as Record<symbol, unknown>)[noDelay], true);
    } finally {
      await fresh.close();
    }
  });

  test('small answers go uncompressed, still with Vary: a cache must not mix encodings', async () => {
    const answer = await raw('GET', `${EXT}/listings?pageSize=1&externalReference=nothing-has-this`, {
      'accept-encoding': 'gzip',
    });
    assert.equal(answer.status, 200);
    assert.ok(answer.bytes.length < 1024, `${answer.bytes.length} bytes`);
    assert.equal(answer.headers['content-encoding'], undefined);
    assert.match(String(answer.headers.vary), /accept-encoding/i);
  });

  test('refusals are compressed like answers and keep their envelope', async () => {
    const answer = await raw('GET', `${EXT}/listings?pageSize=50&unknownParameter=${'x'.repeat(1500)}`, {
      'accept-encoding': 'gzip',
    });
    assert.equal(answer.status, 400);
    const body = JSON.parse(decoded(answer).toString('utf8'));
    assert.equal(body.error.code, 'INVALID_QUERY');
  });

  test('a listing read keeps its ETag whichever encoding carries it; If-Match takes it', async () => {
    const list = JSON.parse((await raw('GET', `${EXT}/listings?pageSize=1`)).bytes.toString('utf8'));
    const id = list.data[0].id as string;
    const plain = await raw('GET', `${EXT}/listings/${id}`);
    const gz = await raw('GET', `${EXT}/listings/${id}`, { 'accept-encoding': 'gzip' });
    assert.ok(plain.headers.etag);
    assert.equal(gz.headers.etag, plain.headers.etag);
  });

  test('a compressed request body is refused with 415 and a reason, never read as broken UTF-8', async () => {
    const body = zlib.gzipSync(JSON.stringify(listingBody()));
    const res = await request(`${app.url}${EXT}/listings/cmp-gz`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${secret}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      body,
      dispatcher: app.dispatcher,
    });
    const answer = (await res.body.json()) as { error: { code: string; message: string } };
    assert.equal(res.statusCode, 415);
    assert.equal(answer.error.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(answer.error.message, /Content-Encoding: gzip.*uncompressed/);
    const read = await app.call('GET', `${EXT}/listings?externalReference=cmp-gz&status=all`, { secret });
    assert.equal(read.body.data.length, 0, 'nothing was written');
  });

  test('the client package asks for compression and reads the compressed page', async () => {
    const seen: { accept?: string; encoding?: string } = {};
    const agent = new Agent({ connect: { rejectUnauthorized: false } }).compose(
      (dispatch) => (options, handler) => {
        const headers = options.headers as Record<string, string> | string[] | undefined;
        if (Array.isArray(headers)) {
          const at = headers.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'accept-encoding');
          if (at !== -1) seen.accept = headers[at + 1];
        } else if (headers) {
          seen.accept = Object.entries(headers).find(([k]) => k.toLowerCase() === 'accept-encoding')?.[1];
        }
        // Whatever handler API undici calls (onHeaders, or onResponseStart in undici 7), its headers.
        const note = (raw: unknown) => {
          if (Array.isArray(raw)) {
            for (let i = 0; i < raw.length; i += 2)
              if (String(raw[i]).toLowerCase() === 'content-encoding') seen.encoding = String(raw[i + 1]);
          } else if (raw && typeof raw === 'object') {
            const value = (raw as Record<string, unknown>)['content-encoding'];
            if (value !== undefined) seen.encoding = String(value);
          }
        };
        const watched = new Proxy(handler, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver);
            if (typeof value !== 'function') return value;
            if (prop === 'onHeaders')
              return (status: number, raw: unknown, ...rest: unknown[]) => {
                note(raw);
                return value.call(target, status, raw, ...rest);
              };
            if (prop === 'onResponseStart')
              return (controller: unknown, status: number, headers: unknown, ...rest: unknown[]) => {
                note(headers);
                return value.call(target, controller, status, headers, ...rest);
              };
            return value.bind(target);
          },
        });
        return dispatch(options, watched);
      },
    );
    try {
      const client = createClient({ baseUrl: app.url, secret, dispatcher: agent as unknown as Agent });
      const page = await client.listings.list({ pageSize: 50 });
      assert.equal(page.data.length, 50);
      assert.match(seen.accept ?? '', /gzip/);
      assert.ok(seen.encoding && ['br', 'gzip', 'zstd'].includes(seen.encoding), `wire: ${seen.encoding}`);
    } finally {
      await agent.close();
    }
  });
});
