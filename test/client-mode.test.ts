import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createClient, ForecourtError, type ListingInput } from '@forecourt/client';
import { ALL_SCOPES, bootApp, createPartner, createTree, type TestApp, type Tree } from './helpers/app.js';

/**
 * `client.mode` (docs/client.md, "Test mode or live"): the client says which data it works on from
 * its secret alone, and the service agrees: a test client's answers carry `Forecourt-Mode: test`
 * and its writes stay out of the live client's sight; a live client's carry no such header.
 * Over HTTPS with the service's own certificate (`ca`), as a partner runs it.
 */
const car = (dealerProfileId: string): ListingInput => ({
  title: 'Škoda Octavia Combi 2.0 TDI',
  price: 18750,
  brand: 'Škoda',
  model: 'Octavia',
  year: 2020,
  dealerProfileId,
});

describe('@forecourt/client: test mode or live', () => {
  let app: TestApp;
  let tree: Tree;
  let ca: string;
  const secrets = { live: '', test: '' };
  /** The Forecourt-Mode header of every answer each client received (null: none). */
  const seen: Record<'live' | 'test', (string | null)[]> = { live: [], test: [] };

  const client = (mode: 'live' | 'test') =>
    createClient({
      baseUrl: app.url,
      secret: secrets[mode],
      ca,
      // The partner's own fetch, only to look at the headers of each answer.
      fetch: async (url, init) => {
        const { fetch: undiciFetch, Agent } = await import('undici');
        const response = (await undiciFetch(url, {
          ...(init as object),
          dispatcher: new Agent({ connect: { ca } }),
        })) as unknown as Response;
        seen[mode].push(response.headers.get('forecourt-mode'));
        return response;
      },
    });

  before(async () => {
    app = await bootApp();
    tree = await createTree(app);
    ca = readFileSync(path.join(app.dataDir, 'tls', 'localhost-cert.pem'), 'utf8');
    const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ALL_SCOPES });
    secrets.live = partner.secret;
    secrets.test = (
      await app.admin<{ secret: string }>('POST', `/partners/${partner.id}/test-secret`)
    ).secret;
  });
  after(() => app.close());

  test('mode comes from the secret alone, before any request', () => {
    // Nothing answers at this address: mode needs no request.
    const offline = (secret: string) => createClient({ baseUrl: 'https://127.0.0.1:9', secret }).mode;
    assert.equal(offline(secrets.test), 'test');
    assert.equal(offline(secrets.live), 'live');
    assert.match(secrets.test, /^fc_test_/);
    // A live secret that merely contains "test" later on is live.
    assert.equal(offline('fc_testless'), 'live');
  });

  test("a test client's writes and reads are test mode's, and the live client never sees them", async () => {
    const test = client('test');
    const live = client('live');
    assert.equal(test.mode, 'test');
    assert.equal(live.mode, 'live');

    const written = await test.listings.put('MODE-1', car(tree.ids.A1!));
    assert.equal(written.outcome, 'created');
    assert.equal((await test.listings.get(written.listingId)).externalReference, 'MODE-1');
    const testPage = await test.listings.list({ status: 'all', externalReference: 'MODE-1' });
    assert.deepEqual(
      testPage.data.map((l) => l.id),
      [written.listingId],
    );

    const livePage = await live.listings.list({ status: 'all', externalReference: 'MODE-1' });
    assert.deepEqual(livePage.data, []);
    const unseen = await live.listings.get(written.listingId).then(
      () => assert.fail('the live client read a test listing'),
      (e: unknown) => e,
    );
    assert.ok(unseen instanceof ForecourtError && unseen.status === 404, String(unseen));

    // Every answer to the test client said test mode (the 404 above was the live client's).
    assert.ok(seen.test.length >= 3, String(seen.test));
    assert.deepEqual(new Set(seen.test), new Set(['test']));
    assert.ok(seen.live.length >= 2, String(seen.live));
    assert.deepEqual(new Set(seen.live), new Set([null]));
  });
});
