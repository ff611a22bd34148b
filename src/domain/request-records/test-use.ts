import type { TestUseInput } from '../../store/request-records.js';

/** What the recorder needs to know of an answered request to tell what it tried. */
interface Tried {
  method: string;
  /** The route as the OpenAPI document writes it (`/listings/{listing}`). */
  route: string;
  status: number;
  /** The request named a cursor: it followed `nextCursor`, the sync loop of docs/sync.md. */
  cursor?: boolean | undefined;
}

const LISTS = new Set(['/listings', '/locations/{id}/listings']);
const WRITES = new Set(['PUT', 'PATCH', 'POST', 'DELETE']);

/**
 * The activity a test request shows on its partner's page (docs/test-mode.md, "What the operator
 * sees"), or undefined: a refused request shows nothing tried, nor do webhook management, request
 * records or a wipe (their own pages say what they did). 304 counts: a conditional read that found
 * nothing new is a read the partner's code made.
 */
export function testActivityOf(request: Tried): TestUseInput['activity'] | undefined {
  if (request.status >= 400) return undefined;
  const reads = request.method === 'GET' || request.method === 'HEAD';
  if (request.route === '/events') return reads ? 'events' : undefined;
  const listings = request.route.startsWith('/listings');
  if (reads) {
    if (LISTS.has(request.route) && request.cursor) return 'sync';
    return listings || request.route.startsWith('/locations') ? 'read' : undefined;
  }
  return listings && WRITES.has(request.method) ? 'write' : undefined;
}
