import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// Up to 128 visible ASCII characters: safe to echo in a header and to write to a log line.
const ACCEPTABLE = /^[\x21-\x7e]{1,128}$/;

/** The partner's own X-Request-Id when it is acceptable, else a new UUID (decisions.md). */
export function requestIdFor(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && ACCEPTABLE.test(sent) ? sent : randomUUID();
}
