import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Dispatcher, request as undiciRequest } from 'undici';
import type { TestApp } from './app.js';

/**
 * What the proxy does with the next request:
 * - `forward`: pass it to the real service and its answer back;
 * - `reset`: drop the connection before the service sees the request (a network failure);
 * - `lose-answer`: pass it to the service, then drop the connection instead of answering (the
 *   write happened, the client cannot know);
 * - `take`: pass it on, like `forward`, but count it only once the service took it: when the service
 *   itself answers 5xx or 429 (a write past its time limit on a busy machine), the next request is
 *   passed on in its place, so a plan of "two taken, then a failure" holds however loaded the
 *   machine is (requests must come one at a time for this to mean anything);
 * - `{status, retryAfter?}`: answer like a failing load balancer, with a plain-text body.
 */
export type ProxyAction =
  | 'forward'
  | 'take'
  | 'reset'
  | 'lose-answer'
  | { status: number; retryAfter?: number };

export interface FlakyProxy {
  url: string;
  /** Actions for the next requests, in order; after them every request is forwarded. */
  plan(...actions: ProxyAction[]): void;
  /** Every request seen, with what was done to it. */
  seen: {
    method: string;
    path: string;
    action: string;
    at: number;
    /** The request's Accept-Encoding, and, once forwarded, the answer's Content-Encoding and size. */
    acceptEncoding?: string;
    contentEncoding?: string;
    bytes?: number;
    /** The service's status, once forwarded and answered. */
    status?: number;
  }[];
  close(): Promise<void>;
}

// Hop-by-hop headers belong to one connection, not to the message being relayed.
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

/**
 * A small HTTPS proxy in front of the real service (test infrastructure, not a stand-in for it):
 * it fails the requests it is told to, the way networks and load balancers fail, and forwards the
 * rest. It serves the service's own certificate, so a client trusting that CA trusts the proxy.
 */
export async function startFlakyProxy(app: TestApp): Promise<FlakyProxy> {
  const tls = path.join(app.dataDir, 'tls');
  const queue: ProxyAction[] = [];
  const seen: FlakyProxy['seen'] = [];

  const server = https.createServer(
    {
      key: readFileSync(path.join(tls, 'localhost-key.pem')),
      cert: readFileSync(path.join(tls, 'localhost-cert.pem')),
    },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const action = queue.shift() ?? 'forward';
        const entry: FlakyProxy['seen'][number] = {
          method: req.method!,
          path: req.url!,
          action: typeof action === 'string' ? action : String(action.status),
          at: Date.now(),
          ...(req.headers['accept-encoding'] ? { acceptEncoding: req.headers['accept-encoding'] } : {}),
        };
        seen.push(entry);
        if (action === 'reset') return void req.socket.destroy();
        if (typeof action === 'object') {
          res.writeHead(action.status, {
            'content-type': 'text/plain',
            ...(action.retryAfter === undefined ? {} : { 'retry-after': String(action.retryAfter) }),
          });
          return void res.end('upstream unavailable');
        }
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (!HOP.has(name) && typeof value === 'string') headers[name] = value;
        }
        const answer = await undiciRequest(`${app.url}${req.url}`, {
          method: req.method as Dispatcher.HttpMethod,
          headers,
          ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
          dispatcher: app.dispatcher,
        });
        // Relayed as the service sent it: still compressed, when it was.
        const body = Buffer.from(await answer.body.arrayBuffer());
        const encoding = answer.headers['content-encoding'];
        if (typeof encoding === 'string') entry.contentEncoding = encoding;
        entry.bytes = body.length;
        entry.status = answer.statusCode;
        if (action === 'take' && (answer.statusCode >= 500 || answer.statusCode === 429))
          queue.unshift('take');
        if (action === 'lose-answer') return void req.socket.destroy();
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (!HOP.has(name) && value !== undefined) out[name] = value;
        }
        res.writeHead(answer.statusCode, out);
        res.end(body);
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    plan: (...actions) => void queue.push(...actions),
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
