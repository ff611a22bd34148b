import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A webhook receiver as a partner would write one, for the end-to-end tests: it verifies every
 * signature with the `standardwebhooks` package (written by no one here), de-duplicates by
 * webhook-id, and keeps the newest copy of each listing. `failRate` of its answers are 500s and
 * `slowRate` come after `slowMs` (past the service's timeout), after the delivery was applied: the
 * at-least-once case a receiver must handle.
 */
export interface Receiver {
  url: string;
  /** listing id → the listing as last delivered. */
  listings: Map<string, Record<string, any>>;
  /** Every request, in arrival order. */
  requests: {
    id: string;
    type: string;
    count: number;
    answered: number;
    cursor: string;
    raw: { body: string; headers: Record<string, string> };
  }[];
  /** Distinct deliveries applied, in the order they were applied. */
  applied: string[];
  /** Whatever went wrong: a bad signature, a delivery out of order. Must stay empty. */
  problems: string[];
  /** Secrets it accepts (any one verifying is enough); replace after a rotation. */
  secrets: string[];
  /** Share of answers that are 500, and of answers that come late; change them at any time. */
  failRate: number;
  slowRate: number;
  /** Requests being answered right now. */
  inFlight: number;
  /** Answers to come, taken before the random ones: e.g. [410] or [500, 500]. */
  script: number[];
  close(): Promise<void>;
}

export async function startReceiver(
  options: { failRate?: number; slowRate?: number; slowMs?: number; random?: () => number } = {},
): Promise<Receiver> {
  const random = options.random ?? Math.random;
  const seen = new Set<string>();
  let newest = '';
  const receiver: Receiver = {
    url: '',
    close: async () => {},
    listings: new Map(),
    requests: [],
    applied: [],
    problems: [],
    secrets: [],
    inFlight: 0,
    failRate: options.failRate ?? 0,
    slowRate: options.slowRate ?? 0,
    script: [],
  };
  const server: Server = createServer((req, res) => {
    receiver.inFlight++;
    res.on('close', () => receiver.inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      };
      const verified = receiver.secrets.some((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      const payload = JSON.parse(body) as { type: string; data: Record<string, any>[]; cursor: string };
      const id = headers['webhook-id'];
      const answer = receiver.script.shift() ?? (random() < receiver.failRate ? 500 : 200);
      receiver.requests.push({
        id,
        type: payload.type,
        count: payload.data.length,
        answered: answer,
        cursor: payload.cursor,
        raw: { body, headers },
      });
      if (!verified) {
        receiver.problems.push(`${id}: no signature verified (${headers['webhook-signature']})`);
        res.writeHead(401).end();
        return;
      }
      if (answer !== 200) {
        res.writeHead(answer, { 'content-type': 'text/plain' }).end('try again later');
        return;
      }
      if (payload.type === 'listings.changed' && !seen.has(id)) {
        seen.add(id);
        receiver.applied.push(id);
        for (const listing of payload.data) {
          // The walk's order is changedAt (an image check's result moves it, not updatedAt).
          const at: string = listing.changedAt ?? listing.updatedAt;
          if (at < newest) {
            receiver.problems.push(
              `${id}: listing ${listing.id} changedAt ${at} is before ${newest}, delivered earlier`,
            );
          }
          newest = at > newest ? at : newest;
          receiver.listings.set(listing.id, listing);
        }
      }
      const slow = random() < receiver.slowRate;
      setTimeout(() => res.writeHead(200).end('ok'), slow ? (options.slowMs ?? 1500) : 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
