import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createClient, ForecourtError } from '@forecourt/client';
import { bootApp, createPartner, createTree, type TestApp, unique } from './helpers/app.js';

/** The typed client's request-record methods against the real service. */
let app: TestApp;

before(async () => {
  app = await bootApp();
});
after(() => app.close());

test('client.requests: the failed request a write just got, by list and by its request id', async () => {
  const tree = await createTree(app);
  const partner = await createPartner(app, { roots: [tree.ids.A!], scopes: ['write:listings'] });
  const forecourt = createClient({ baseUrl: app.url, secret: partner.secret, dispatcher: app.dispatcher });
  const refused = await forecourt.listings
    .put(unique('ref'), { title: 'Golf', price: 1000, dealerLocationCode: tree.codes.A1, year: 1850 })
    .then(
      () => assert.fail('a year of 1850 must be refused'),
      (error: unknown) => error as ForecourtError,
    );
  assert.ok(refused instanceof ForecourtError);
  const page = await forecourt.requests.list({ status: '4xx' });
  assert.equal(page.data[0]!.requestId, refused.requestId);
  assert.deepEqual(
    page.data[0]!.issues.map((i) => i.path),
    ['year'],
  );
  const one = await forecourt.requests.get(refused.requestId!);
  assert.equal(one.code, 'VALIDATION_FAILED');
  await assert.rejects(forecourt.requests.get(unique('none')), (error: unknown) => {
    assert.ok(error instanceof ForecourtError);
    assert.equal(error.status, 404);
    return true;
  });
});
