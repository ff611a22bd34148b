import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import tls from 'node:tls';
import { ALL_SCOPES, bootApp, createPartner, createTree, type TestApp } from './helpers/app.js';

/**
 * Issue 16: requests refused below the router. Sent over a raw TLS socket, byte for byte, and
 * read until the server closes: "no answer" (what a 20 KB header once got, 12 times in 12) fails.
 */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

function rawRequest(port: number, bytes: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
      socket.write(bytes),
    );
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`no complete answer within 5 s; got: ${Buffer.concat(chunks).toString().slice(0, 200)}`),
      );
    }, 5_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {}); // a reset after the answer is fine; judged on what arrived
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split === -1) return reject(new Error(`no HTTP answer before the connection closed: "${text}"`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const raw = text.slice(split + 4);
      try {
        resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(raw) });
      } catch {
        reject(new Error(`the body is not JSON: ${statusLine} ${raw.slice(0, 200)}`));
      }
    });
    // Requests that keep the connection open are closed by us once answered.
    socket.on('data', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const length = /content-length:\s*(\d+)/i.exec(text.slice(0, split))?.[1];
      if (split !== -1 && length !== undefined && Buffer.byteLength(text) >= split + 4 + Number(length))
        socket.end();
    });
  });
}

describe('protocol-level refusals: our envelope and X-Request-Id, written before the close', () => {
  let app: TestApp;
  let port: number;
  let secret: string;

  before(async () => {
    app = await bootApp();
    port = Number(new URL(app.url).port);
    const tree = await createTree(app);
    secret = (await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES })).secret;
  });
  after(() => app?.close());

  const get = (target: string, headers: string[] = ['Host: localhost']) =>
    `GET ${target} HTTP/1.1\r\n${headers.join('\r\n')}\r\nConnection: close\r\n\r\n`;

  const cases: [string, () => string, number, string][] = [
    [
      'a 20 KB header',
      () => get('/api/external/v1/listings', ['Host: localhost', `X-Big: ${'a'.repeat(20_000)}`]),
      431,
      'HEADERS_TOO_LARGE',
    ],
    [
      '3,000 header lines',
      () =>
        get('/api/external/v1/listings', [
          'Host: localhost',
          ...Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`),
        ]),
      431,
      'HEADERS_TOO_LARGE',
    ],
    [
      'a 20 KB query string',
      () => get(`/api/external/v1/listings?search=${'a'.repeat(20_000)}`),
      414,
      'URI_TOO_LONG',
    ],
    [
      'both Content-Length and Transfer-Encoding',
      () =>
        'POST /api/external/v1/listings/bulk-upsert HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
    [
      'a bad method',
      () => 'G@T /api/external/v1/listings HTTP/1.1\r\nHost: localhost\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
    [
      'a control character in a header',
      () => get('/api/external/v1/listings', ['Host: localhost', 'X-Bad: a\u0001b']),
      400,
      'BAD_REQUEST',
    ],
    ['no Host header', () => get('/api/external/v1/listings', []), 400, 'BAD_REQUEST'],
    [
      'two Host headers',
      () => get('/api/external/v1/listings', ['Host: localhost', 'Host: evil.example']),
      400,
      'BAD_REQUEST',
    ],
    ['broken %-encoding in the path', () => get('/api/external/v1/listings/%E0%A4%A'), 400, 'BAD_REQUEST'],
  ];

  for (const [name, bytes, status, code] of cases) {
    test(`${name}: ${status} ${code}, answered every time`, async () => {
      for (let i = 0; i < 5; i++) {
        const answer = await rawRequest(port, bytes());
        assert.equal(answer.status, status, JSON.stringify(answer.body));
        assert.equal(answer.body.error.code, code);
        assert.equal(typeof answer.body.error.message, 'string');
        assert.match(answer.headers['x-request-id'] ?? '', /\S/);
        assert.equal(answer.body.error.requestId, answer.headers['x-request-id']);
      }
    });
  }

  test('a 1,100-character reference is 400 INVALID_REFERENCE, not a router error', async () => {
    const body = JSON.stringify({ title: 'x', price: 1 });
    const answer = await rawRequest(
      port,
      `PUT /api/external/v1/listings/${'r'.repeat(1100)} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${secret}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.error.code, 'INVALID_REFERENCE');
  });
});
