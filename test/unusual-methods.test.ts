import assert from 'node:assert/strict';
import { METHODS } from 'node:http';
import { after, before, describe, test } from 'node:test';
import tls from 'node:tls';
import { ALL_SCOPES, bootApp, createPartner, createTree, type TestApp } from './helpers/app.js';

/**
 * Issue 40, point 1: an OpenAPI fuzzer's `QUERY` without a Content-Type got 500 SERVER_ERROR on
 * every route (Fastify's own 400 turned into a 500). Every method Node's parser accepts, on every
 * route of the app, with and without a secret: a 4xx in our envelope, never a 5xx; a routed path
 * with a method it does not serve: 405 with `Allow`.
 */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** One request on its own TLS connection, read until the server closes (CONNECT included). */
function rawRequest(port: number, bytes: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
      socket.write(bytes),
    );
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 5 s to ${bytes.split('\r\n')[0]}`));
    }, 5_000);
    const parse = (): RawAnswer | undefined => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split === -1) return undefined;
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const length = Number(headers['content-length'] ?? Number.NaN);
      const raw = Buffer.from(text.slice(split + 4));
      if (!(raw.length >= length)) return undefined;
      const body = raw.subarray(0, length).toString('utf8');
      return {
        status: Number(statusLine!.split(' ')[1]),
        headers,
        body: body ? JSON.parse(body) : undefined,
      };
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const answer = parse();
      if (answer) {
        clearTimeout(timer);
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      reject(
        new Error(
          `no complete answer to ${bytes.split('\r\n')[0]}: "${Buffer.concat(chunks).toString().slice(0, 200)}"`,
        ),
      );
    });
  });
}

/** Methods also sent with a JSON body (the ones that carry one, and WebDAV's). */
const WITH_BODY = new Set([
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'QUERY',
  'PROPFIND',
  'SEARCH',
  'REPORT',
]);

/** A route's URL with each parameter filled in (`:id` → a UUID, anything else → a word). */
function concrete(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) =>
    /id$/i.test(name) ? '00000000-0000-4000-8000-000000000000' : 'sample',
  );
}

describe('every method on every route: a 4xx in the envelope, never a 5xx (issue 40)', () => {
  let app: TestApp;
  let port: number;
  let secret: string;
  let paths: Map<string, Set<string>>;

  before(async () => {
    app = await bootApp();
    port = Number(new URL(app.url).port);
    const tree = await createTree(app);
    secret = (await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES })).secret;
    // A path's methods: those of every route whose pattern matches it (GET /listings/bulk-upsert
    // is GET /listings/:id; PUT /listings/<uuid> is PUT /listings/:externalReference).
    const routes = app.running.app.routeList;
    const pattern = (url: string) => new RegExp(`^${url.replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`);
    paths = new Map();
    for (const route of routes) {
      const path = concrete(route.url);
      if (paths.has(path)) continue;
      paths.set(path, new Set(routes.filter((r) => pattern(r.url).test(path)).map((r) => r.method)));
    }
    for (const prefix of ['/api/external/v1/', '/api/admin/v1/', '/docs', '/healthz', '/console'])
      assert.ok(
        [...paths.keys()].some((p) => p.startsWith(prefix)),
        `no route under ${prefix}: ${[...paths.keys()].join(' ')}`,
      );
  });
  after(() => app?.close());

  const send = (method: string, path: string, extra: string[] = []) =>
    `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${extra.map((h) => `${h}\r\n`).join('')}Connection: close\r\n\r\n`;

  /** Runs `each` over `items`, eight at a time. */
  async function inBatches<T>(items: T[], each: (item: T) => Promise<void>): Promise<void> {
    for (let i = 0; i < items.length; i += 8) await Promise.all(items.slice(i, i + 8).map(each));
  }

  // QUERY is a method of Node's HTTP parser only in later releases (20.20 has it, 20.19, the
  // oldest package.json claims, does not): where it is not, the parser refuses the request line
  // before any route sees it, and the answer is that refusal, in the envelope.
  const parsesQuery = METHODS.includes('QUERY');
  const refusedByParser = (answer: RawAnswer) =>
    answer.status === 400 &&
    answer.body?.error?.code === 'BAD_REQUEST' &&
    /not a valid HTTP method/.test(answer.body.error.message);

  test("QUERY without a Content-Type: 405 with Allow on every route, with and without a secret (the parser's 400 where it does not know QUERY)", async () => {
    const failures: string[] = [];
    await inBatches([...paths], async ([path, methods]) => {
      for (const auth of [[], [`Authorization: Bearer ${secret}`]]) {
        const answer = await rawRequest(port, send('QUERY', path, auth));
        const answered = parsesQuery
          ? answer.status === 405 && answer.body?.error?.code === 'METHOD_NOT_ALLOWED'
          : refusedByParser(answer);
        if (!answered) failures.push(`QUERY ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
        else if (
          parsesQuery &&
          ![...methods].every((m) => (answer.headers.allow ?? '').split(/,\s*/).includes(m))
        )
          failures.push(`QUERY ${path}: Allow "${answer.headers.allow}" lacks ${[...methods].join(', ')}`);
      }
    });
    assert.deepEqual(failures, []);
  });

  test('every method Node parses that a route does not serve: 405 with its Allow', async () => {
    const failures: string[] = [];
    const requests: [string, string, Set<string>, string[]][] = [];
    for (const [path, methods] of paths)
      for (const method of METHODS)
        if (!methods.has(method) && method !== 'HEAD')
          for (const extra of WITH_BODY.has(method)
            ? [[], ['Content-Type: application/json', 'Content-Length: 2']]
            : [[]])
            requests.push([method, path, methods, extra]);
    await inBatches(requests, async ([method, path, methods, extra]) => {
      const body = extra.length ? '{}' : '';
      const answer = await rawRequest(port, send(method, path, extra) + body);
      const allow = new Set((answer.headers.allow ?? '').split(/,\s*/));
      if (answer.status !== 405 || answer.body?.error?.code !== 'METHOD_NOT_ALLOWED')
        failures.push(
          `${method} ${path} ${extra.length ? 'with' : 'without'} a body: ${answer.status} ${JSON.stringify(answer.body)}`,
        );
      else if (![...methods].every((m) => allow.has(m)))
        failures.push(
          `${method} ${path}: Allow "${answer.headers.allow}" lacks one of ${[...methods].join(', ')}`,
        );
      else if (answer.body.error.requestId !== answer.headers['x-request-id'])
        failures.push(`${method} ${path}: no X-Request-Id`);
    });
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} failures`);
  });

  test('methods the parser refuses (lower case, unknown, odd tokens): 400 BAD_REQUEST, never 5xx', async () => {
    for (const method of ['get', 'Get', 'query', 'FOO', 'PRI', 'GET-X', 'BREW']) {
      const answer = await rawRequest(port, send(method, '/api/external/v1/listings'));
      assert.ok(answer.status >= 400 && answer.status < 500, `${method}: ${answer.status}`);
      assert.equal(
        answer.body.error.code,
        answer.status === 405 ? 'METHOD_NOT_ALLOWED' : 'BAD_REQUEST',
        method,
      );
    }
  });

  test('CONNECT in its own form (host:port) and on an unknown path: a 4xx in the envelope', async () => {
    for (const target of ['localhost:443', '127.0.0.1:5432', '/nowhere']) {
      const answer = await rawRequest(port, send('CONNECT', target));
      assert.ok(answer.status >= 400 && answer.status < 500, `${target}: ${answer.status}`);
      assert.match(answer.body.error.code, /^(NOT_FOUND|METHOD_NOT_ALLOWED|BAD_REQUEST)$/);
    }
  });

  test("QUERY with a JSON body on an unknown path is 404 NOT_FOUND (the parser's 400 where it does not know QUERY), and the service is healthy after", async () => {
    const answer = await rawRequest(
      port,
      `${send('QUERY', '/api/external/v1/nowhere', ['Content-Type: application/json', 'Content-Length: 2'])}{}`,
    );
    if (parsesQuery) {
      assert.equal(answer.status, 404, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, 'NOT_FOUND');
    } else assert.ok(refusedByParser(answer), JSON.stringify(answer.body));
    const health = await app.call('GET', '/healthz');
    assert.equal(health.status, 200);
  });
});
