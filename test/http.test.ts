import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { bootApp, createPartner, createTree, type TestApp } from './helpers/app.js';

/** Sends raw bytes on a plain TCP connection and returns everything the server answers. */
function plainRequest(port: number, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(payload));
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString();
    });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve(data);
    });
  });
}

describe('transport and envelope', () => {
  let app: TestApp;
  let secret: string;

  before(async () => {
    app = await bootApp();
    const tree = await createTree(app);
    secret = (await createPartner(app, { roots: [tree.ids.A!] })).secret;
  });
  after(() => app.close());

  test('plain HTTP on the service port gets 403 HTTPS_REQUIRED and never data', async () => {
    const answer = await plainRequest(
      app.running.port,
      `GET /api/external/v1/listings HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${secret}\r\nX-Request-Id: plain-1\r\n\r\n`,
    );
    assert.match(answer, /^HTTP\/1\.1 403/);
    assert.match(answer, /"code":"HTTPS_REQUIRED"/);
    assert.match(answer, /X-Request-Id: plain-1/i);
    assert.doesNotMatch(answer, /"data"/);
    assert.doesNotMatch(answer, /Location:/i);
  });

  test('X-Request-Id: echoed when acceptable, replaced when not, present on errors', async () => {
    const mine = await app.call('GET', '/api/external/v1/listings', {
      secret,
      headers: { 'x-request-id': 'partner-trace-42' },
    });
    assert.equal(mine.status, 200);
    assert.equal(mine.headers['x-request-id'], 'partner-trace-42');

    const tooLong = await app.call('GET', '/api/external/v1/listings', {
      secret,
      headers: { 'x-request-id': 'x'.repeat(129) },
    });
    assert.match(String(tooLong.headers['x-request-id']), /^[0-9a-f-]{36}$/);

    const failed = await app.call('GET', '/api/external/v1/listings', {
      headers: { 'x-request-id': 'err-7' },
    });
    assert.equal(failed.status, 401);
    assert.equal(failed.body.error.requestId, 'err-7');
    assert.equal(failed.headers['x-request-id'], 'err-7');
  });

  test('unknown path is 404 NOT_FOUND; known path with a wrong method is 405 with Allow', async () => {
    const missing = await app.call('GET', '/api/external/v1/nothing-here', { secret });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'NOT_FOUND');

    const wrong = await app.call('PATCH', '/api/external/v1/listings', { secret });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.body.error.code, 'METHOD_NOT_ALLOWED');
    assert.match(String(wrong.headers.allow), /GET/);
  });

  test('bodies: wrong content type 415, broken JSON 400 INVALID_JSON, over 5 MiB 413', async () => {
    const writer = (await createPartner(app, { global: true, scopes: ['read:listings', 'write:listings'] }))
      .secret;
    const textBody = await app.call('PUT', '/api/external/v1/listings/R1', {
      secret: writer,
      raw: 'title=x',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(textBody.status, 415);
    assert.equal(textBody.body.error.code, 'UNSUPPORTED_MEDIA_TYPE');

    const broken = await app.call('PUT', '/api/external/v1/listings/R1', {
      secret: writer,
      raw: '{"title": ',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(broken.status, 400);
    assert.equal(broken.body.error.code, 'INVALID_JSON');

    const huge = await app.call('POST', '/api/external/v1/listings/bulk-upsert', {
      secret: writer,
      raw: JSON.stringify([{ title: 'x'.repeat(6 * 1024 * 1024) }]),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.error.code, 'PAYLOAD_TOO_LARGE');
  });
});

describe('behind a TLS-terminating proxy (TRUST_PROXY)', () => {
  let app: TestApp;
  let secret: string;

  before(async () => {
    app = await bootApp({ TRUST_PROXY: 'true' });
    const tree = await createTree(app);
    secret = (await createPartner(app, { roots: [tree.ids.A!] })).secret;
  });
  after(() => app.close());

  test('a forwarded HTTPS request is served; a forwarded plain one gets 403 HTTPS_REQUIRED', async () => {
    const request = (proto: string) =>
      plainRequest(
        app.running.port,
        `GET /api/external/v1/listings HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer ${secret}\r\nX-Forwarded-Proto: ${proto}\r\n\r\n`,
      );
    assert.match(await request('https'), /^HTTP\/1\.1 200/);
    const refused = await request('http');
    assert.match(refused, /^HTTP\/1\.1 403/);
    assert.match(refused, /HTTPS_REQUIRED/);
  });
});
