import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readCaFile } from '../import/errors.js';
import { waitText } from '../import/messages.js';
import { createClient, type Listing } from '../index.js';
import { testModeNotice } from '../mode.js';
import { sleep } from '../retry.js';
import { newWebhookSecret } from '../webhook-sign.js';
import { forward } from './forward.js';
import { serviceState } from './service-state.js';
import type { ListenSettings } from './settings.js';

/** Versions remembered to skip repeats; older ones than this behind the newest are forgotten. */
const REMEMBER_MS = 10 * 60_000;
/** How far before the start `--from now` reads events (delivery is at least once). */
const START_WINDOW_MS = 60_000;

/**
 * `forecourt listen`: follows the partner's changes with sync cursors and forwards each page (at
 * most 100 listings) as a `listings.changed` delivery, in order, the next only after a 2xx. A page
 * can show a listing again (cursors pass a fresh change only once every earlier write has
 * committed); a version already delivered is not delivered twice.
 */
export async function listen(s: ListenSettings, signal: AbortSignal): Promise<never> {
  const say = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  const ca = readCaFile(s.ca);
  // No retries inside the client: the listener retries the service itself, for as long as it is
  // away, and says so once (./service-state.ts) rather than once per attempt.
  const client = createClient({
    baseUrl: s.url,
    secret: s.secret,
    retries: 0,
    ...(ca ? { ca } : {}),
    onWait: (info) => say(waitText(info)),
  });
  const service = serviceState(say, signal, {
    firstMs: Math.min(1000, s.maxBackoffMs),
    maxMs: s.maxBackoffMs,
  });
  const secret = s.webhookSecret ?? newWebhookSecret();
  const kept = s.webhookSecretFile ?? (s.webhookSecret ? undefined : newSecretFile(secret));
  if (s.webhookSecretFile) writeFileSync(s.webhookSecretFile, `${secret}\n`, { mode: 0o600 });
  const mode = testModeNotice(s.secret);
  process.stdout.write(
    `forecourt listen: forwarding the changes of ${s.url} to ${s.forwardTo}\n` +
      (mode ? `  ${mode}\n` : '') +
      `  signing secret: ${s.showSecret ? secret : maskSecret(secret)}\n` +
      `  (verify deliveries with it, as with an endpoint's secret; ${
        s.webhookSecret
          ? 'the one you gave'
          : s.webhookSecretFile
            ? `kept in ${s.webhookSecretFile}`
            : `new for this run, written to ${kept} (mode 0600, removed when listen stops); --webhook-secret-file FILE keeps one between runs`
      })\n`,
  );

  /** `call` until the service answers it; a failure no retry fixes is thrown. */
  async function untilAnswered<T>(call: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        const result = await call();
        service.answered();
        return result;
      } catch (error) {
        await service.failed(error);
      }
    }
  }

  const walkListings = s.events.includes('listings.changed');
  const eventTypes = s.events.filter((t) => t !== 'listings.changed');
  // Events from about now on: those of the last START_WINDOW_MS too (delivery is at least once).
  const eventsSince = s.from === 'now' ? new Date(Date.now() - START_WINDOW_MS).toISOString() : undefined;
  let eventCursor: string | undefined;
  // No updatedSince: it filters by the partner's own edit (updatedAt), and a check result moves
  // only changedAt, the walk's position; a window on updatedAt would hide it for good.
  const query = { status: 'all', pageSize: 100 } as const;
  /**
   * listing id → the changedAt (sync position) of the version delivered or present at the start.
   * changedAt, not updatedAt: an image check's result moves changedAt alone, and is a change.
   */
  const seen = new Map<string, string>();
  let cursor: string | undefined;
  const options = { signal };
  if (s.from === 'now' && walkListings) {
    // The present is read once, page by page, and not forwarded: its cursor is where "now" is.
    // After a failure, on from the last page read.
    await untilAnswered(async () => {
      const present = client.listings.iterate({ ...query, ...(cursor ? { cursor } : {}) }, options);
      for await (const page of present.pages()) {
        for (const l of page.data) seen.set(l.id, l.changedAt);
        cursor = page.cursor;
      }
    });
  }
  process.stdout.write(
    `  listening (${s.from === 'now' ? 'changes from now on' : 'every listing, then the changes'}); Ctrl-C stops\n`,
  );

  for (;;) {
    try {
      if (walkListings) await deliverChanges();
      if (eventTypes.length > 0) await deliverEvents();
      service.answered();
    } catch (error) {
      // The walk starts again from the cursor after the last page delivered.
      await service.failed(error);
      continue;
    }
    forget(seen);
    await sleep(s.intervalMs, signal);
  }

  /** Every page of changes after `cursor`, each delivered (until a 2xx) before the next is read. */
  async function deliverChanges(): Promise<void> {
    const walk = client.listings.iterate({ ...query, ...(cursor ? { cursor } : {}) }, options);
    for await (const page of walk.pages()) {
      service.answered();
      const fresh = page.data.filter((l) => seen.get(l.id) !== l.changedAt);
      if (fresh.length > 0) {
        const body = deliveryBody(fresh, page.cursor);
        const { id, attempts } = await forward(s.forwardTo, secret, body, signal, say);
        for (const l of fresh) seen.set(l.id, l.changedAt);
        say(
          `${id} listings.changed: ${fresh.length} listing(s) delivered${attempts > 1 ? ` after ${attempts} attempts` : ''}`,
        );
      }
      cursor = page.cursor;
    }
  }

  /** Every page of events after `eventCursor`, each delivered (until a 2xx) before the next is read. */
  async function deliverEvents(): Promise<void> {
    for (;;) {
      const start = eventCursor ? { cursor: eventCursor } : eventsSince ? { since: eventsSince } : {};
      const page = await client.webhooks.events({ types: eventTypes.join(','), ...start }, options);
      service.answered();
      for (const body of eventDeliveries(page.data)) {
        const { id, attempts } = await forward(s.forwardTo, secret, body, signal, say);
        const { type, data } = JSON.parse(body) as { type: string; data: unknown[] };
        say(
          `${id} ${type}: ${data.length} event(s) delivered${attempts > 1 ? ` after ${attempts} attempts` : ''}`,
        );
      }
      eventCursor = page.pagination.nextCursor;
      // hasMore with nothing passed: events of a write still open lie ahead; the cursor cannot
      // pass them yet, so the next look waits the interval rather than asking at once.
      if (!page.pagination.hasMore || page.data.length === 0) return;
    }
  }
}

/** A page of GET /events as the service would deliver it: each run of one type, `{"type", "data"}`. */
function eventDeliveries(events: readonly { type: string }[]): string[] {
  const bodies: string[] = [];
  let run: Record<string, unknown>[] = [];
  let type = '';
  const close = () => {
    if (run.length > 0) bodies.push(JSON.stringify({ type, data: run }));
    run = [];
  };
  for (const { type: t, ...event } of events) {
    if (t !== type) close();
    type = t;
    run.push(event);
  }
  close();
  return bodies;
}

/**
 * The secret as the docs show it: `whsec_` and its first three characters. The whole secret stays
 * off the terminal (and out of scrollback, screen shares and CI logs); it is in the file named
 * beside it, or the one you gave.
 */
export function maskSecret(secret: string): string {
  const body = secret.startsWith('whsec_') ? secret.slice(6) : secret;
  return `whsec_${body.slice(0, 3)}…`;
}

/** A new secret nobody asked to keep: written to a file of this run's own (mode 0600) to be read from. */
function newSecretFile(secret: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-listen-'));
  const file = path.join(dir, 'webhook-secret');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  // A secret of this run only: no copy of it outlives the run in the temporary directory.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return file;
}

/** The body the service sends (domain/webhooks/payload.ts), with the sync cursor after the page. */
function deliveryBody(listings: Listing[], cursor: string | undefined): string {
  return JSON.stringify({ type: 'listings.changed', data: listings, cursor: cursor ?? '' });
}

/** Keeps the versions that can still come again: those near the newest. */
function forget(seen: Map<string, string>): void {
  let newest = 0;
  for (const at of seen.values()) newest = Math.max(newest, Date.parse(at));
  for (const [id, at] of seen) if (Date.parse(at) < newest - REMEMBER_MS) seen.delete(id);
}
