import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { demoImages } from '../src/demo/images/index.js';
import { classifyFetch, IMAGE_LIMITS, type ImageCheck } from '../src/domain/images/classify.js';
import {
  type FetchedImage,
  type FetchFailure,
  type ImageFetcher,
  type ImageFetchOptions,
  type ImageFetchResult,
  imageFetcher,
} from '../src/outbound/image-fetch.js';
import { ENDLESS_BYTES, HUGE_BYTES, type ImageServer, startImageServer } from './helpers/image-server.js';

// The image fetcher against a local image server (test/helpers/image-server.ts), and the check
// each answer ends in (docs/images.md). The server is on loopback: the fetcher admits loopback as
// the demo's does, and every other private address stays refused.

const OPTIONS: ImageFetchOptions = {
  allowPrivate: false,
  allowLoopback: true,
  connectTimeoutMs: 1000,
  timeoutMs: 3000,
  maxBytes: IMAGE_LIMITS.maxBytes,
};
const NOW = new Date('2026-11-28T10:00:00.000Z');
const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, 'fixtures/images', name));

let server: ImageServer;
let fetcher: ImageFetcher;
const fetchers: ImageFetcher[] = [];
const withOptions = (options: Partial<ImageFetchOptions>) => {
  const own = imageFetcher({ ...OPTIONS, ...options });
  fetchers.push(own);
  return own;
};

before(async () => {
  server = await startImageServer();
  fetcher = withOptions({});
});
after(async () => {
  for (const f of fetchers) f.close();
  await server.close();
});

const fetched = (result: ImageFetchResult): FetchedImage => {
  assert.ok(result.ok, `expected a body, got ${JSON.stringify(result)}`);
  return result;
};
const failed = (result: ImageFetchResult): FetchFailure => {
  assert.ok(!result.ok, `expected a failure, got status ${result.ok && result.status}`);
  return result;
};
const checkOf = async (p: string, using = fetcher): Promise<[ImageCheck, ImageFetchResult]> => {
  const result = await using.fetch(server.url(p));
  return [classifyFetch(result, NOW), result];
};

test('each format is fetched and checked ok, with its dimensions, size and Content-Type', async () => {
  const cases: [string, string, number | null][] = [
    ['/photo.jpg', 'jpeg', fixture('photo.jpg').length],
    ['/progressive.jpg', 'jpeg', fixture('progressive.jpg').length],
    ['/lossy.webp', 'webp', fixture('lossy.webp').length],
    ['/lossless.webp', 'webp', fixture('lossless.webp').length],
    ['/extended.webp', 'webp', fixture('extended.webp').length],
    ['/photo.avif', 'avif', fixture('photo.avif').length],
    ['/photo.png', 'png', null],
    ['/photo.gif', 'gif', null],
  ];
  for (const [p, format, size] of cases) {
    const [check, result] = await checkOf(p);
    const body = fetched(result);
    assert.equal(check.state, 'ok', `${p}: ${JSON.stringify(check.problem)}`);
    assert.deepEqual([check.format, check.width, check.height], [format, 800, 600], p);
    assert.equal(check.bytes, size ?? body.bytes);
    assert.equal(body.complete, true);
    assert.equal(body.head.length, body.bytes);
    assert.equal(check.contentType, `image/${format}`);
    assert.equal(body.finalUrl, server.url(p));
  }
});

test('an HTML page answered with 200 is not_an_image, even served as image/jpeg', async () => {
  const [page] = await checkOf('/page.html');
  assert.equal(page.state, 'not_an_image');
  assert.equal(page.problem?.code, 'html_page');
  const [lying] = await checkOf('/lying.jpg');
  assert.deepEqual(lying.problem, {
    code: 'html_page',
    message: 'the server sent an HTML page titled "Page not found", not an image, though it said image/jpeg',
  });
  const [text] = await checkOf('/photo-as-text');
  assert.equal(text.state, 'ok');
  assert.equal(text.contentType, 'text/plain');
  for (const [p, code] of [
    ['/data.json', 'not_an_image'],
    ['/empty.jpg', 'empty_body'],
    ['/truncated.png', 'unreadable_image'],
  ]) {
    const [check] = await checkOf(p!);
    assert.equal(check.problem?.code, code, p);
  }
});

test('404 is unreachable not_found, 500 http_error; 503 hands on Retry-After', async () => {
  const [missing, missingResult] = await checkOf('/missing.jpg');
  assert.equal(missing.state, 'unreachable');
  assert.deepEqual(missing.problem, { code: 'not_found', message: 'the server answered 404 (Not Found)' });
  assert.equal(failed(missingResult).status, 404);
  const [broken] = await checkOf('/broken.jpg');
  assert.deepEqual(broken.problem, {
    code: 'http_error',
    message: 'the server answered 500 (Internal Server Error)',
  });
  const busy = failed(await fetcher.fetch(server.url('/busy.jpg')));
  assert.deepEqual([busy.failure, busy.status, busy.retryAfter], ['http_status', 503, '30']);
});

test('too small and too large by dimensions are told from the image header', async () => {
  const [tiny] = await checkOf('/tiny.png');
  assert.equal(tiny.state, 'too_small');
  assert.deepEqual([tiny.width, tiny.height], [40, 30]);
  const [tinyJpeg] = await checkOf('/tiny.jpg');
  assert.equal(tinyJpeg.state, 'too_small');
  const [wide] = await checkOf('/wide.png');
  assert.equal(wide.state, 'too_large');
  assert.equal(wide.problem?.code, 'dimensions_too_large');
});

test('a huge body with Content-Length: the head is read, the rest is not, and the check is too_large', async () => {
  const [check, result] = await checkOf('/huge.png');
  const body = fetched(result);
  assert.deepEqual([body.overCap, body.bytes, body.complete], [true, HUGE_BYTES, false]);
  assert.ok(body.head.length <= 256 * 1024, `kept ${body.head.length} bytes`);
  assert.equal(check.state, 'too_large');
  assert.deepEqual([check.format, check.width, check.height, check.bytes], ['png', 1024, 768, HUGE_BYTES]);
  assert.equal(check.problem?.message, 'the PNG is 25.0 MB; images may be at most 20.0 MB');
  await server.streamEnded('/huge.png');
  assert.ok(
    server.written('/huge.png') < HUGE_BYTES,
    `the server wrote ${server.written('/huge.png')} bytes`,
  );
});

test('a body without Content-Length is counted to one byte past the cap, then the connection is closed', async () => {
  const small = withOptions({ maxBytes: 2_000_000 });
  const result = fetched(await small.fetch(server.url('/endless.png')));
  assert.deepEqual([result.overCap, result.bytes], [true, 2_000_001]);
  const check = classifyFetch(result, NOW, { ...IMAGE_LIMITS, maxBytes: 2_000_000 });
  assert.equal(check.problem?.message, 'the PNG is more than 2.0 MB; images may be at most 2.0 MB');
  await server.streamEnded('/endless.png');
  // What the socket buffers hold beside what was read, and not the 200 MB on offer.
  assert.ok(
    server.written('/endless.png') < 40_000_000,
    `the server wrote ${server.written('/endless.png')}`,
  );
  assert.ok(server.written('/endless.png') < ENDLESS_BYTES);
});

test('timeouts: headers too slow, a body trickling, a TLS handshake never answered', async () => {
  const quick = withOptions({ timeoutMs: 400, connectTimeoutMs: 300 });
  let started = performance.now();
  const slow = failed(await quick.fetch(server.url('/slow?ms=3000')));
  assert.deepEqual([slow.failure, slow.phase], ['timeout', 'response']);
  assert.equal(slow.message, 'no complete answer within 400 ms (connected, no answer yet)');
  assert.ok(performance.now() - started < 1500);

  started = performance.now();
  const trickle = failed(await quick.fetch(server.url('/trickle.jpg?ms=50')));
  assert.deepEqual([trickle.failure, trickle.phase], ['timeout', 'body']);
  assert.ok(performance.now() - started < 1500);
  assert.equal(classifyFetch(trickle, NOW).problem?.code, 'timeout');

  // A server that takes the TCP connection and never answers the TLS handshake.
  const silent = net.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const port = (silent.address() as net.AddressInfo).port;
    const handshake = failed(await quick.fetch(`https://127.0.0.1:${port}/photo.jpg`));
    assert.deepEqual([handshake.failure, handshake.phase], ['timeout', 'tls']);
    assert.equal(
      handshake.message,
      `no connection to 127.0.0.1:${port} within 300 ms (still in the TLS handshake)`,
    );
  } finally {
    silent.close();
  }
});

test('a redirect to a private or metadata address is refused before any connection', async () => {
  const privateHop = failed(await fetcher.fetch(server.url('/redirect/private')));
  assert.deepEqual(
    [privateHop.failure, privateHop.redirects, privateHop.finalUrl],
    ['refused_address', 1, 'http://10.0.0.1/photo.jpg'],
  );
  assert.equal(
    privateHop.message,
    '10.0.0.1 is a private network address: images are fetched from public addresses only',
  );
  const metadata = failed(await fetcher.fetch(server.url('/redirect/metadata')));
  assert.equal(metadata.failure, 'refused_address');
  assert.match(metadata.message, /^169\.254\.169\.254 is a link-local address/);
  assert.equal(classifyFetch(metadata, NOW).problem?.code, 'forbidden_address');
});

test('loopback is refused unless allowed: as an IP literal, and as a name that resolves to it', async () => {
  const strict = withOptions({ allowLoopback: false });
  const before = server.hits('/photo.jpg');
  const literal = failed(await strict.fetch(server.url('/photo.jpg')));
  assert.equal(literal.failure, 'refused_address');
  assert.match(literal.message, /^127\.0\.0\.1 is a loopback address/);
  const port = new URL(server.origin).port;
  const named = failed(await strict.fetch(`http://localhost:${port}/photo.jpg`));
  assert.equal(named.failure, 'refused_address');
  assert.match(named.message, /^localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
  assert.equal(server.hits('/photo.jpg'), before, 'no request reached the server');
});

test('redirects: three are followed, a fourth is too many; a loop and a non-http target end too', async () => {
  const chain = fetched(await fetcher.fetch(server.url('/chain/3')));
  assert.deepEqual([chain.redirects, chain.finalUrl], [3, server.url('/chain/0')]);
  assert.equal(classifyFetch(chain, NOW).state, 'ok');

  const before = server.hits('/chain/0');
  const long = failed(await fetcher.fetch(server.url('/chain/4')));
  assert.deepEqual([long.failure, long.redirects, long.status], ['too_many_redirects', 3, 302]);
  assert.equal(long.message, 'more than 3 redirects (the last, 302, to "/chain/0")');
  assert.equal(server.hits('/chain/0'), before, 'the fifth URL was not asked for');

  const loop = failed(await fetcher.fetch(server.url('/redirect/loop')));
  assert.equal(loop.failure, 'too_many_redirects');
  const ftp = failed(await fetcher.fetch(server.url('/redirect/ftp')));
  assert.deepEqual(
    [ftp.failure, ftp.message],
    ['invalid_url', 'a redirect leads to ftp: only http and https are fetched'],
  );
  const noLocation = failed(await fetcher.fetch(server.url('/redirect/no-location')));
  assert.deepEqual([noLocation.failure, noLocation.status], ['http_status', 302]);
});

test('DNS failure, refused connection, TLS failure and broken HTTP each say what happened', async () => {
  const dns = failed(await fetcher.fetch('https://images.forecourt.invalid/a.jpg'));
  assert.equal(dns.failure, 'dns');
  assert.match(dns.message, /^looking up images\.forecourt\.invalid failed: .*ENOTFOUND/);
  assert.equal(classifyFetch(dns, NOW).problem?.code, 'dns_failed');

  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as net.AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const refused = failed(await fetcher.fetch(`http://127.0.0.1:${port}/a.jpg`));
  assert.equal(refused.failure, 'connect');
  assert.match(refused.message, /ECONNREFUSED/);

  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 } as never);
  const tls = https.createServer({ key: pems.private, cert: pems.cert }, (_req, res) => res.end('x'));
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
  try {
    const tlsPort = (tls.address() as net.AddressInfo).port;
    const untrusted = failed(await fetcher.fetch(`https://127.0.0.1:${tlsPort}/a.jpg`));
    assert.equal(untrusted.failure, 'tls');
    assert.match(untrusted.message, /^TLS with 127\.0\.0\.1:\d+ failed: .*(SELF_SIGNED|self-signed)/i);
  } finally {
    tls.close();
  }

  const garbage = failed(await fetcher.fetch(server.url('/not-http')));
  assert.equal(garbage.failure, 'bad_response');
  const cut = failed(await fetcher.fetch(server.url('/cut.jpg')));
  assert.equal(cut.failure, 'interrupted');
  assert.equal(classifyFetch(cut, NOW).problem?.code, 'bad_response');
});

test('URLs other than http and https are not fetched; an abandoned fetch stays pending', async () => {
  for (const [raw, message] of [
    ['file:///etc/passwd', 'the URL uses file: only http and https are fetched'],
    ['not a url', '"not a url" is not an absolute URL'],
  ]) {
    const result = failed(await fetcher.fetch(raw!));
    assert.deepEqual([result.failure, result.message], ['invalid_url', message]);
  }
  const controller = new AbortController();
  const pending = fetcher.fetch(server.url('/slow?ms=2000'), controller.signal);
  setTimeout(() => controller.abort(), 50);
  const aborted = failed(await pending);
  assert.equal(aborted.failure, 'aborted');
  assert.equal(classifyFetch(aborted, NOW).state, 'pending');
});

test('kept-alive connections are reused across checks of one host', async () => {
  const results = await Promise.all(
    ['/photo.jpg', '/lossy.webp', '/photo.avif', '/photo.jpg'].map((p) => fetcher.fetch(server.url(p))),
  );
  for (const result of results) assert.equal(classifyFetch(result, NOW).state, 'ok');
  const again = fetched(await fetcher.fetch(server.url('/photo.jpg')));
  assert.equal(again.status, 200);
});

test("the demo's sample images end in the states the demo promises, every state but pending among them", async () => {
  const states = new Set<string>();
  for (const sample of demoImages()) {
    const [check] = await checkOf(sample.path);
    assert.equal(check.state, sample.expected, `${sample.path}: ${JSON.stringify(check.problem)}`);
    states.add(check.state);
  }
  assert.deepEqual([...states].sort(), ['not_an_image', 'ok', 'too_large', 'too_small', 'unreachable']);
  const formats = await Promise.all(
    demoImages()
      .filter((s) => s.expected === 'ok')
      .map(async (s) => (await checkOf(s.path))[0].format),
  );
  assert.deepEqual(formats.sort(), ['avif', 'jpeg', 'webp']);
});
