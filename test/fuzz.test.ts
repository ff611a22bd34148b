import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { type Case, invalidCase, methodCase, rawCase, validCase } from './fuzz/cases.js';
import { methodsAt, operation, operations, PREFIX } from './fuzz/document.js';
import { authHeaders, buildWorld, resolveDeep, resolveText, type World, WRITER_SCOPE } from './fuzz/world.js';
import { dealerAllowed, writeCase } from './fuzz/writes.js';
import { bootApp, type Reply, type TestApp } from './helpers/app.js';

/**
 * Fuzzing from the OpenAPI document (docs/openapi.json): for every partner operation, requests
 * drawn from its parameters and body schemas, valid and broken, as every kind of caller, sent to
 * the real service over HTTPS. For every answer:
 * - never a 5xx;
 * - the status is documented for the operation and the body matches the document exactly
 *   (test/helpers/contract.ts, on every call), and an error's code is one the document names for
 *   that status;
 * - no secret, a bad one or a malformed one: 401 UNAUTHORIZED, whatever else the request holds;
 * - a request with one part that breaks the document: a 4xx (in a bulk upsert, an item's error);
 * - a body that is not JSON under a JSON content type: 400 INVALID_JSON; under another: 415;
 * - a method the path does not have: 405 with an Allow header naming the documented methods;
 * - a listing write valid by every documented rule is written, unless its dealer is outside the
 *   writer's scope: then 403 PROFILE_FORBIDDEN (in a bulk upsert: item by item);
 * - a restricted partner's answers hold nothing outside its dealer tree.
 *
 * test/fuzz/corpus.json holds every case that ever failed (and the bugs found before the fuzzer):
 * they are replayed first, on every run. FUZZ_RUNS (default 100) cases per operation and kind;
 * FUZZ_SEED repeats a run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const corpus = JSON.parse(readFileSync(path.join(import.meta.dirname, 'fuzz/corpus.json'), 'utf8')) as {
  why: string;
  case: Case;
  /** The answer the bug's fix gives: status, and error code where it is an error. */
  expect: { status: number; code?: string };
}[];

let app: TestApp;
let world: World;
let inScope: Set<string>;
const counts = { requests: 0, byStatus: new Map<number, number>() };

before(async () => {
  app = await bootApp();
  world = await buildWorld(app);
  inScope = new Set([...WRITER_SCOPE].map((key) => world.tree.ids[key]!));
});
after(() => app?.close());

async function send(c: Case): Promise<Reply> {
  const query = new URLSearchParams(c.query.map(([k, v]) => [k, resolveText(world, v)])).toString();
  const url = `${PREFIX}${resolveText(world, c.path)}${query ? `?${query}` : ''}`;
  const headers = authHeaders(world, c.who);
  counts.requests++;
  if (c.raw) {
    if (c.raw.contentType) headers['content-type'] = c.raw.contentType;
    return app.call(c.method, url, { headers, raw: c.raw.body });
  }
  return app.call(c.method, url, {
    headers,
    ...(c.json === undefined ? {} : { body: resolveDeep(world, c.json) }),
  });
}

/** Operations the reader's scopes (read:listings, read:locations) do not allow: it gets 403 first. */
const beyondReader = new Set([
  'upsertListing',
  'patchListing',
  'markListingSold',
  'bulkUpsertListings',
  'setListingStatus',
  'createWebhookEndpoint',
  'listWebhookEndpoints',
  'getWebhookEndpoint',
  'updateWebhookEndpoint',
  'deleteWebhookEndpoint',
  'rotateWebhookSecret',
  'testWebhookEndpoint',
  'resumeWebhookEndpoint',
  'listWebhookDeliveries',
]);
const authenticated = (c: Case) => c.who === 'writer' || c.who === 'writer-key' || c.who === 'reader';
// A JSON Merge Patch has its own media type, taken by PATCH (RFC 7396) and refused elsewhere.
const jsonType = (type: string | undefined, method: string) =>
  type !== undefined &&
  (/^application\/json(;|$)/i.test(type) ||
    (method === 'PATCH' && /^application\/merge-patch\+json(;|$)/i.test(type)));
const parses = (text: string) => {
  try {
    // A leading byte order mark is allowed (RFC 8259 lets a parser ignore it; the service does).
    JSON.parse(text.replace(/^\uFEFF/, ''));
    return true;
  } catch {
    return false;
  }
};

/** What is wrong with an answer, or undefined. */
function judge(c: Case, reply: Reply): string | undefined {
  const { status } = reply;
  const code: string | undefined = reply.body?.error?.code;
  if (status >= 500) return `a ${status}`;
  if (!authenticated(c)) {
    // An unknown method on a known path may be refused before authentication: 405 is fine too.
    if (status === 401 && code === 'UNAUTHORIZED') return undefined;
    return c.kind === 'method' && status === 405 ? undefined : `${status} ${code} where 401 was due`;
  }
  if (c.kind === 'method') {
    if (status !== 405) return `${status} for a method the path does not have`;
    const allow = String(reply.headers.allow ?? '').split(/,\s*/);
    const documented = methodsAt(resolveText(world, c.path));
    if (documented.some((m) => !allow.includes(m)))
      return `Allow "${reply.headers.allow}" lacks ${documented}`;
    return undefined;
  }
  const documentedCodes = operation(c.op).responses.get(status) ?? [];
  if (code && documentedCodes.length && !documentedCodes.includes(code))
    return `code ${code} is not documented for ${status} (${documentedCodes.join(', ')})`;
  const writer = c.who !== 'reader';
  const mayWrite = writer || !beyondReader.has(c.op);
  if (c.kind === 'invalid' && mayWrite) {
    const itemRefused = c.op === 'bulkUpsertListings' && status === 200 && reply.body.data.errorCount > 0;
    if (!(status >= 400 && status < 500) && !itemRefused)
      return `${status} for a request whose ${c.broke} breaks the document`;
  }
  if (c.kind === 'raw' && mayWrite && c.raw!.body !== '') {
    if (!jsonType(c.raw!.contentType, c.method) && status !== 415)
      return `${status} for Content-Type ${c.raw!.contentType}`;
    // A JSON body of white space only is no body (EMPTY_PAYLOAD, INVALID_BODY), not broken JSON.
    const blank = c.raw!.body.trim() === '';
    if (jsonType(c.raw!.contentType, c.method) && !blank && !parses(c.raw!.body) && code !== 'INVALID_JSON')
      return `${status} ${code} for a body that is not JSON`;
  }
  if (c.kind === 'write') {
    const wrong = writeOutcome(c, reply);
    if (wrong) return wrong;
  }
  if (status === 200 && c.who !== 'reader') return outsideScope(reply);
  return undefined;
}

/** A rule-valid write: written when its dealer is the writer's, else refused for that dealer. */
function writeOutcome(c: Case, reply: Reply): string | undefined {
  if (c.op === 'upsertListing') {
    const allowed = dealerAllowed(c.json as Record<string, unknown>);
    const ok = allowed
      ? reply.status === 200 || reply.status === 201
      : reply.body?.error?.code === 'PROFILE_FORBIDDEN';
    return ok
      ? undefined
      : `${reply.status} for a valid listing whose dealer is ${allowed ? '' : 'not '}in scope`;
  }
  if (reply.status !== 200) return `${reply.status} for a valid bulk upsert`;
  const items = (Array.isArray(c.json) ? c.json : (c.json as { items: unknown[] }).items) as Record<
    string,
    unknown
  >[];
  const { results, errors } = reply.body.data as {
    results: { index: number }[];
    errors: { index: number; status: number }[];
  };
  for (const [index, item] of items.entries()) {
    const written = results.some((r) => r.index === index);
    const refused = errors.find((e) => e.index === index);
    if (dealerAllowed(item) ? !written || refused : written || refused?.status !== 403)
      return `item ${index}: ${written ? 'written' : `refused ${JSON.stringify(refused)}`}, its dealer ${dealerAllowed(item) ? 'is' : 'is not'} in scope`;
  }
  return undefined;
}

/** A restricted partner's answer naming a dealer outside its tree. */
function outsideScope(reply: Reply): string | undefined {
  const data = reply.body?.data;
  const items: Record<string, unknown>[] = Array.isArray(data)
    ? data
    : data && typeof data === 'object'
      ? [data]
      : [];
  for (const item of items) {
    const dealer = (item.dealerProfileId ?? (item.locationCode !== undefined ? item.id : undefined)) as
      | string
      | undefined;
    if (dealer !== undefined && !inScope.has(dealer))
      return `item ${String(item.id)} of dealer ${dealer} is outside the partner's scope`;
  }
  return undefined;
}

async function check(c: Case): Promise<Reply> {
  let reply: Reply;
  try {
    reply = await send(c);
  } catch (error) {
    // app.call throws when an answer breaks the OpenAPI document.
    throw new Error(`${(error as Error).message}\ncase: ${JSON.stringify(c)}`);
  }
  counts.byStatus.set(reply.status, (counts.byStatus.get(reply.status) ?? 0) + 1);
  const wrong = judge(c, reply);
  if (wrong)
    throw new Error(
      `${c.method} ${c.path}: ${wrong}\nanswer: ${reply.text.slice(0, 400)}\ncase: ${JSON.stringify(c)}`,
    );
  return reply;
}

describe(`fuzzing from the OpenAPI document, seed ${SEED}`, () => {
  test(`the corpus: ${corpus.length} cases that once failed`, async () => {
    for (const entry of corpus) {
      const reply = await check(entry.case);
      assert.deepEqual(
        { status: reply.status, code: reply.body?.error?.code },
        { status: entry.expect.status, code: entry.expect.code },
        `${entry.why}: ${reply.text.slice(0, 300)}`,
      );
    }
  });

  for (const op of operations) {
    const kinds = {
      valid: validCase(op),
      invalid: invalidCase(op),
      raw: rawCase(op),
      method: methodCase(op),
      write: writeCase(op),
    };
    for (const [kind, arbitrary] of Object.entries(kinds)) {
      if (!arbitrary) continue;
      // A wrong method has few ways to go wrong: fewer of those.
      const runs = kind === 'method' ? Math.ceil(RUNS / 5) : RUNS;
      test(`${op.method} ${op.template} (${op.id}): ${runs} ${kind} cases`, async () => {
        await fc.assert(
          fc.asyncProperty(arbitrary, async (c) => void (await check(c))),
          {
            numRuns: runs,
            seed: SEED,
            // A failure is printed with its case: add it to test/fuzz/corpus.json.
            endOnFailure: true,
            includeErrorInReport: true,
          },
        );
      });
    }
  }

  test('figures', (t) => {
    const byStatus = [...counts.byStatus.entries()].sort(([a], [b]) => a - b);
    t.diagnostic(
      `${counts.requests} requests (FUZZ_SEED=${SEED}): ${byStatus.map(([s, n]) => `${s}×${n}`).join(' ')}`,
    );
    assert.ok(counts.requests >= corpus.length + operations.length * RUNS, 'every case was sent');
    assert.ok(!byStatus.some(([s]) => s >= 500));
    // The generators still reach every kind of answer: one that stopped producing, say, wrong
    // content types or writes that succeed would leave its oracle nothing to judge.
    for (const status of [200, 201, 400, 401, 403, 404, 405, 415, 422])
      assert.ok(counts.byStatus.has(status), `no request was answered ${status}`);
  });
});
