import pino from 'pino';
import { configuredImageChecks } from '../../src/background/image-checks.js';
import type { Loop } from '../../src/background/loop.js';
import type { ImageCheck } from '../../src/domain/images/classify.js';
import { EXT, type TestApp } from './app.js';
import { eventually } from './eventually.js';

/**
 * The service of an image test: its own checker off (a test starts one with imageChecker, when
 * it wants results), loopback image servers allowed (test/helpers/image-server.ts), and a fetch
 * timeout that a busy machine does not reach.
 */
export const IMAGE_TEST_ENV = {
  IMAGE_CHECK_ALLOW_LOOPBACK: 'true',
  IMAGE_CHECK_TIMEOUT_MS: '4000',
  IMAGE_CHECK_CONCURRENCY: '0',
} as const;

/**
 * A checker on the app's database, as another instance would run it: `concurrency` checks at
 * once, polling every 50 ms, with no jitter. Not started: call start() (and stop() after).
 */
export function imageChecker(
  app: TestApp,
  concurrency = 8,
  observe?: (url: string, check: ImageCheck, durationMs: number) => void,
): Loop {
  return configuredImageChecks(
    { ...app.config, IMAGE_CHECK_CONCURRENCY: concurrency },
    app.running.db,
    { logger: pino({ level: 'silent' }), ...(observe ? { observe } : {}) },
    { everyMs: 50, random: () => 0 },
  );
}

/**
 * The partner's listings as it reads them (every status, at most 100), once none of their images
 * waits for its check: a checker must be running.
 */
export async function checkedListings(app: TestApp, secret: string): Promise<any[]> {
  let read: any[] = [];
  await eventually(
    async () => {
      const reply = await app.call('GET', `${EXT}/listings?status=all&mine=true&pageSize=100`, { secret });
      read = reply.body.data;
      return read.every((l) => l.images.every((i: any) => i.check.state !== 'pending'));
    },
    () => JSON.stringify(read.map((l) => l.images)),
  );
  return read;
}
