import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { demoImage } from '../../src/demo/images/index.js';
import { gif, picture, png } from './image-bytes.js';

/**
 * A local HTTP server of images and of everything that is not one, for black-box tests of the
 * image checker: each format, an HTML page answering 200, 404, 500, 503 with Retry-After, a slow
 * server, a trickling body, huge bodies (with and without Content-Length), tiny images, redirect
 * chains, a redirect loop and redirects to private addresses; and the demo's sample images
 * (src/demo/images/) at their own paths. It counts the requests to each path
 * and, for the bodies a client should abandon, the bytes it managed to write before the client
 * went away.
 */
export interface ImageServer {
  origin: string;
  url(path: string): string;
  /** Requests that reached a path (query left out). */
  hits(path: string): number;
  /** Bytes of a streamed body written before it ended or the client closed (huge, trickle). */
  written(path: string): number;
  /** Resolves when the streamed body of `path` has stopped (the client closed or it ended). */
  streamEnded(path: string): Promise<void>;
  close(): Promise<void>;
}

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/images');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

/** The size of /huge.png: past the 20 MB cap, a valid PNG of 1024×768 padded with a skipped chunk. */
export const HUGE_BYTES = 25_000_000;
/** What /endless.png would stream if nobody stopped it. */
export const ENDLESS_BYTES = 200_000_000;

type Route = (req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams) => void;

const HTML = `<!doctype html><html><head><title>Page not found</title></head><body><h1>Sorry</h1></body></html>`;

export async function startImageServer(): Promise<ImageServer> {
  const hits = new Map<string, number>();
  const written = new Map<string, number>();
  const ended = new Map<string, PromiseWithResolversLike>();
  const endedOf = (p: string) => {
    let entry = ended.get(p);
    if (!entry) {
      entry = resolvers();
      ended.set(p, entry);
    }
    return entry;
  };

  const send =
    (contentType: string, body: () => Buffer, status = 200, headers: Record<string, string> = {}): Route =>
    (_req, res) => {
      const bytes = body();
      res.writeHead(status, { 'content-type': contentType, 'content-length': bytes.length, ...headers });
      res.end(bytes);
    };
  const once = <T>(make: () => T) => {
    let value: T | undefined;
    return () => {
      value ??= make();
      return value;
    };
  };
  const photo = once(() => fixture('photo.jpg'));
  const hugePng = once(() => {
    // A padding chunk adds its length and 12 bytes (length, type, CRC): exactly HUGE_BYTES in all.
    const padding = HUGE_BYTES - png(1024, 768).length - 12;
    return png(1024, 768, { padding });
  });
  const redirect =
    (location: (origin: string) => string, status = 302): Route =>
    (_req, res) => {
      res.writeHead(status, { location: location(origin) });
      res.end();
    };

  /** Writes `total` bytes (head first, zeros after) as the client takes them, counting them. */
  const stream = (p: string, res: http.ServerResponse, head: Buffer, total: number, pauseMs = 0) => {
    let sent = 0;
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      written.set(p, sent);
      endedOf(p).resolve();
    };
    res.on('close', stop);
    const zeros = Buffer.alloc(pauseMs > 0 ? 1 : 64 * 1024);
    const next = () => {
      while (!stopped && sent < total) {
        const piece = sent < head.length ? head.subarray(sent, sent + zeros.length) : zeros;
        const part = piece.subarray(0, total - sent);
        sent += part.length;
        written.set(p, sent);
        const more = res.write(part);
        if (pauseMs > 0) return void setTimeout(next, pauseMs);
        if (!more) return void res.once('drain', next);
      }
      if (!stopped) res.end(stop);
    };
    next();
  };

  const routes: Record<string, Route> = {
    '/photo.jpg': send('image/jpeg', photo),
    '/progressive.jpg': send('image/jpeg', () => fixture('progressive.jpg')),
    '/tiny.jpg': send('image/jpeg', () => fixture('tiny.jpg')),
    '/lossy.webp': send('image/webp', () => fixture('lossy.webp')),
    '/lossless.webp': send('image/webp', () => fixture('lossless.webp')),
    '/extended.webp': send('image/webp', () => fixture('extended.webp')),
    '/photo.avif': send('image/avif', () => fixture('photo.avif')),
    '/photo.png': send(
      'image/png',
      once(() => png(800, 600, { pixel: picture(800, 600) })),
    ),
    '/photo.gif': send(
      'image/gif',
      once(() => gif(800, 600)),
    ),
    '/tiny.png': send(
      'image/png',
      once(() => png(40, 30)),
    ),
    '/wide.png': send(
      'image/png',
      once(() => png(13_000, 100)),
    ),
    // Content-Type says one thing, the bytes another.
    '/lying.jpg': send('image/jpeg', () => Buffer.from(HTML)),
    '/photo-as-text': send('text/plain', photo),
    '/page.html': send('text/html; charset=utf-8', () => Buffer.from(HTML)),
    '/data.json': send('application/json', () => Buffer.from('{"error":"not here"}')),
    '/empty.jpg': send('image/jpeg', () => Buffer.alloc(0)),
    '/truncated.png': send(
      'image/png',
      once(() => png(800, 600).subarray(0, 20)),
    ),
    '/missing.jpg': send('text/html', () => Buffer.from(HTML), 404),
    '/broken.jpg': send('text/plain', () => Buffer.from('Internal Server Error'), 500),
    '/busy.jpg': send('text/plain', () => Buffer.from('Slow down'), 503, { 'retry-after': '30' }),
    '/huge.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': HUGE_BYTES });
      stream('/huge.png', res, hugePng(), HUGE_BYTES);
    },
    // No Content-Length: only counting finds it too large.
    '/endless.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      stream('/endless.png', res, png(1024, 768), ENDLESS_BYTES);
    },
    // Headers after `ms`.
    '/slow': (_req, res, query) => {
      const timer = setTimeout(
        () => send('image/jpeg', photo)(_req, res, query),
        Number(query.get('ms') ?? 1000),
      );
      res.on('close', () => clearTimeout(timer));
    },
    // Headers at once, then the body a byte every `ms`.
    '/trickle.jpg': (_req, res, query) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo().length });
      stream('/trickle.jpg', res, photo(), photo().length, Number(query.get('ms') ?? 100));
    },
    // Content-Length promises the photo; the connection closes a kilobyte in.
    '/cut.jpg': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo().length });
      res.write(photo().subarray(0, 1024), () => res.destroy());
    },
    '/not-http': (req) => {
      req.socket.end('HELLO THERE\r\n\r\n');
    },
    '/redirect/private': redirect(() => 'http://10.0.0.1/photo.jpg'),
    '/redirect/metadata': redirect(() => 'http://169.254.169.254/latest/meta-data/'),
    '/redirect/ftp': redirect(() => 'ftp://files.example/photo.jpg'),
    '/redirect/loop': redirect(() => '/redirect/loop', 301),
    '/redirect/no-location': (_req, res) => {
      res.writeHead(302);
      res.end();
    },
  };

  let origin = '';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    // /chain/N: N relative redirects, then the photo.
    const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
    if (chain) {
      const left = Number(chain[1]);
      return left === 0
        ? routes['/photo.jpg']!(req, res, url.searchParams)
        : redirect(() => `/chain/${left - 1}`)(req, res, url.searchParams);
    }
    const route = routes[url.pathname];
    if (route) return route(req, res, url.searchParams);
    // The demo's own samples, at the paths the demo serves them.
    const sample = demoImage(url.pathname);
    if (sample) {
      res.writeHead(sample.status, {
        'content-type': sample.contentType,
        'content-length': sample.body.length,
      });
      return res.end(sample.body);
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('no such test route');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    url: (p) => `${origin}${p}`,
    hits: (p) => hits.get(p) ?? 0,
    written: (p) => written.get(p) ?? 0,
    streamEnded: (p) => endedOf(p).promise,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface PromiseWithResolversLike {
  promise: Promise<void>;
  resolve: () => void;
}

function resolvers(): PromiseWithResolversLike {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
