import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// Up to 128 visible ASCII characters: safe to echo in a header and to write to a log line.
export const REQUEST_ID_PATTERN = /^[\x21-\x7e]{1,128}$/;
const ACCEPTABLE = REQUEST_ID_PATTERN;

/** The partner's own X-Request-Id when it is acceptable, else a new UUID (docs/contract.md#request-ids). */
export function requestIdFor(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && ACCEPTABLE.test(sent) ? sent : randomUUID();
}
