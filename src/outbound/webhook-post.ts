import http from 'node:http';
import https from 'node:https';
import { hostOf } from './addresses.js';
import { guardedAgents, type OutboundRules, refusedLiteral } from './guard.js';

/** What came back from one webhook POST. */
export interface PostResult {
  /** The HTTP status; null when no response came (refused, timed out, TLS failure). */
  status: number | null;
  /** The response's first kilobyte. */
  body: string | null;
  /** Why no usable response came, or why it is not a success (a redirect). */
  error: string | null;
  durationMs: number;
}

export type PostWebhook = (url: string, headers: Record<string, string>, body: string) => Promise<PostResult>;

/** Only the first kilobyte of a response is kept (the delivery log shows it). */
const KEEP_BYTES = 1024;

/**
 * Sends webhook POSTs. The target's addresses are checked at every connection, after DNS, so a
 * name that resolved to a public address when the endpoint was saved and to 10.0.0.1 now (DNS
 * rebinding) is refused when it matters. Redirects are not followed; `timeoutMs` bounds the whole
 * exchange. `allowPrivate` (WEBHOOK_ALLOW_PRIVATE, tests and local development) lifts the check.
 */
export function webhookPoster(options: {
  allowPrivate: boolean;
  allowLoopback?: boolean;
  timeoutMs: number;
}): PostWebhook {
  const rules: OutboundRules = { ...options, rule: 'webhooks go to public addresses only' };
  const agents = guardedAgents(rules, { maxSockets: 4 });

  return (target, headers, body) => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const url = new URL(target);
    // An IP literal never reaches the lookup: it is checked here.
    const refused = refusedLiteral(hostOf(url), rules);
    if (refused) return Promise.resolve({ status: null, body: null, error: refused, durationMs: elapsed() });
    const protocol = url.protocol === 'http:' ? http : https;
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      const finish = (result: Omit<PostResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // The answer as it came: what the delivery log may keep of it is the domain's to say
        // (domain/webhooks/answer.ts).
        resolve({ ...result, durationMs: elapsed() });
      };
      const request = protocol.request(url, {
        method: 'POST',
        agent: agents[url.protocol as 'https:' | 'http:'],
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Forecourt-Webhooks/1',
        },
      });
      const timer = setTimeout(() => {
        finish({ status: null, body: null, error: `no response within ${options.timeoutMs} ms` });
        request.destroy();
      }, options.timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => {
        const code = error.code && !error.message.includes(error.code) ? ` (${error.code})` : '';
        finish({ status: null, body: null, error: `${error.message}${code}` });
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => {
          const status = response.statusCode ?? null;
          const redirect = status !== null && status >= 300 && status < 400;
          finish({
            status,
            body: Buffer.concat(chunks).toString('utf8'),
            error: redirect
              ? `redirects are not followed (Location: ${response.headers.location ?? 'none'})`
              : null,
          });
        };
        response.on('data', (chunk: Buffer) => {
          if (kept < KEEP_BYTES) {
            chunks.push(chunk.subarray(0, KEEP_BYTES - kept));
            kept += Math.min(chunk.length, KEEP_BYTES - kept);
          }
          // Past the first kilobyte the answer is not read further.
          if (kept >= KEEP_BYTES) {
            done();
            response.destroy();
          }
        });
        response.on('end', done);
        response.on('error', done);
      });
      request.end(body);
    });
  };
}
