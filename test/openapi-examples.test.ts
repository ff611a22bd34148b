import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { after, before, describe, test } from 'node:test';
import { ALL_SCOPES, bootApp, createPartner, EXT, type TestApp } from './helpers/app.js';

/**
 * Issue 40, point 7: the document's example webhook URL (`https://dms.acme.example/…`) could
 * never be accepted: `.example` never resolves, and the service refuses a webhook host that does
 * not. Every example in the document uses names that resolve in principle, and the webhook URLs
 * of its request examples are accepted by the service itself wherever names resolve.
 */

/** Top-level domains reserved never to resolve on the internet (RFC 2606, RFC 6761, RFC 6762). */
const NEVER_RESOLVES = new Set(['example', 'test', 'invalid', 'localhost', 'local']);

/** Every example value of the document: `examples.<name>.value` and `example`, with where it is. */
function examplesOf(node: unknown, where: string, out: [string, unknown][] = []): [string, unknown][] {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) examplesOf(item, `${where}[${i}]`, out);
  } else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'examples' && value && typeof value === 'object' && !Array.isArray(value)) {
        for (const [name, example] of Object.entries(value))
          if (example && typeof example === 'object' && 'value' in example)
            out.push([`${where}.examples.${name}`, (example as { value: unknown }).value]);
      } else if (key === 'example') out.push([`${where}.example`, value]);
      else examplesOf(value, `${where}.${key}`, out);
    }
  }
  return out;
}

/** The strings of a value, at any depth. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}

/** The host names a text mentions: in URLs and e-mail addresses. */
function hostsIn(text: string): string[] {
  const hosts = [...text.matchAll(/\bhttps?:\/\/([^/:?#\s"]+)/g)].map((m) => m[1]!);
  for (const m of text.matchAll(/[\w.+-]+@([\w-]+(?:\.[\w-]+)+)/g)) hosts.push(m[1]!);
  return hosts;
}

describe('the OpenAPI document’s examples are ones the service accepts (issue 40)', () => {
  let app: TestApp;
  let document: any;
  let secret: string;

  before(async () => {
    app = await bootApp();
    document = (await app.call('GET', `${EXT}/openapi.json`)).body;
    secret = (await createPartner(app, { global: true, scopes: [...ALL_SCOPES, 'manage:webhooks'] })).secret;
  });
  after(() => app.close());

  test('no example names a host under a top-level domain that never resolves', () => {
    const examples = examplesOf(document, '#');
    assert.ok(examples.length > 20, `only ${examples.length} examples found`);
    const refused: string[] = [];
    for (const [where, value] of examples)
      for (const text of stringsOf(value))
        for (const host of hostsIn(text))
          if (NEVER_RESOLVES.has(host.toLowerCase().split('.').at(-1)!)) refused.push(`${where}: ${host}`);
    assert.deepEqual(refused, []);
  });

  test('every webhook URL of a request example is accepted by POST /webhooks', async (t) => {
    const urls = new Set<string>();
    for (const item of Object.values(document.paths) as any[])
      for (const operation of Object.values(item) as any[])
        if (/WebhookEndpoint$/.test(operation.operationId ?? ''))
          for (const [, value] of examplesOf(operation.requestBody ?? {}, operation.operationId))
            if (typeof (value as { url?: unknown })?.url === 'string')
              urls.add((value as { url: string }).url);
    assert.ok(urls.size >= 2, `webhook URLs in the request examples: ${[...urls].join(', ')}`);
    // The service resolves a webhook's host when it is saved. Where names resolve, each URL is
    // accepted; on a machine that resolves none, every other check passes and only the lookup
    // refuses it (the rule above is what shows the name can resolve).
    const resolves = await lookup('example.com').then(
      () => true,
      () => false,
    );
    if (!resolves) t.diagnostic('this machine resolves no names: only the lookup may refuse the URLs');
    for (const url of urls) {
      const reply = await app.call('POST', `${EXT}/webhooks`, { secret, body: { url } });
      if (resolves) assert.equal(reply.status, 201, `${url}: ${reply.text}`);
      else
        assert.deepEqual(
          [reply.status, reply.body.error?.issues?.map((i: { code: string }) => i.code)],
          [422, ['unresolvable_host']],
          `${url}: ${reply.text}`,
        );
    }
  });
});
