import { writeFileSync } from 'node:fs';
import { readCaFile } from '../import/errors.js';
import { waitText } from '../import/messages.js';
import { createClient, type Listing } from '../index.js';
import { sleep } from '../retry.js';
import { newWebhookSecret } from '../webhook-sign.js';
import { forward } from './forward.js';
import type { ListenSettings } from './settings.js';

/**
 * How far before the newest listing `--from now` starts reading. A write that began before that
 * listing's may still commit behind it (the service bounds writes in time and its cursors wait
 * for them); the versions already in this window are the present, not changes, and are skipped by
 * version, so a late commit inside it is still delivered.
 */
const START_WINDOW_MS = 60_000;
/** Versions remembered to skip repeats; older ones than this behind the newest are forgotten. */
const REMEMBER_MS = 10 * 60_000;

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
  const client = createClient({
    baseUrl: s.url,
    secret: s.secret,
    ...(ca ? { ca } : {}),
    onWait: (info) => say(waitText(info)),
  });
  const secret = s.webhookSecret ?? newWebhookSecret();
  if (s.webhookSecretFile) writeFileSync(s.webhookSecretFile, `${secret}\n`, { mode: 0o600 });
  process.stdout.write(
    `forecourt listen: forwarding the changes of ${s.url} to ${s.forwardTo}\n` +
      `  signing secret: ${secret}\n` +
      `  (verify deliveries with it, as with an endpoint's secret; ${
        s.webhookSecret
          ? 'the one you gave'
          : s.webhookSecretFile
            ? `kept in ${s.webhookSecretFile}`
            : 'new for this run: --webhook-secret-file FILE keeps one between runs'
      })\n`,
  );

  const query: { status: 'all'; pageSize: number; updatedSince?: string } = { status: 'all', pageSize: 100 };
  /** listing id → the updatedAt of the version delivered (or present at the start). */
  const seen = new Map<string, string>();
  let cursor: string | undefined;
  const options = { signal };
  if (s.from === 'now') {
    const newest = await client.listings.list({ status: 'all', sort: '-updatedAt', pageSize: 1 }, options);
    const last = newest.data[0];
    if (last) {
      query.updatedSince = new Date(Date.parse(last.updatedAt) - START_WINDOW_MS).toISOString();
      const present = client.listings.iterate(query, options);
      for await (const page of present.pages()) for (const l of page.data) seen.set(l.id, l.updatedAt);
      cursor = present.cursor;
    }
  }
  process.stdout.write(
    `  listening (${s.from === 'now' ? 'changes from now on' : 'every listing, then the changes'}); Ctrl-C stops\n`,
  );

  for (;;) {
    const walk = client.listings.iterate({ ...query, ...(cursor ? { cursor } : {}) }, options);
    for await (const page of walk.pages()) {
      const fresh = page.data.filter((l) => seen.get(l.id) !== l.updatedAt);
      if (fresh.length > 0) {
        const body = deliveryBody(fresh, page.cursor);
        const { id, attempts } = await forward(s.forwardTo, secret, body, signal, say);
        for (const l of fresh) seen.set(l.id, l.updatedAt);
        say(
          `${id} listings.changed: ${fresh.length} listing(s) delivered${attempts > 1 ? ` after ${attempts} attempts` : ''}`,
        );
      }
      cursor = page.cursor;
    }
    forget(seen);
    await sleep(s.intervalMs, signal);
  }
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
