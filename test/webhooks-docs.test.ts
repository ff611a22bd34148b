import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, webhookHeaders } from '../src/domain/webhooks/signing.js';
import { baseEnv } from './helpers/base-env.js';

/**
 * docs/webhooks.md shows how to verify a delivery in a shell with openssl: the block is run here,
 * as printed, on a delivery signed the way the service signs (checked with the `standardwebhooks`
 * package too), and on one whose body was changed.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const doc = readFileSync(path.join(ROOT, 'docs/webhooks.md'), 'utf8');
const section = doc.slice(doc.indexOf('### A shell, with openssl'));
const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1];
const dir = mkdtempSync(path.join(os.tmpdir(), 'forecourt-whdoc-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function runBlock(env: Record<string, string>, body: string) {
  writeFileSync(path.join(dir, 'body.json'), body);
  return spawnSync('bash', ['-euo', 'pipefail', '-c', block!], {
    cwd: dir,
    env: { ...baseEnv(), ...env },
    encoding: 'utf8',
  });
}

test('the openssl recipe of docs/webhooks.md verifies a real signature and refuses a changed body', () => {
  assert.ok(block, 'docs/webhooks.md has a ```sh block under "A shell, with openssl"');
  const body = JSON.stringify({
    type: 'listings.changed',
    data: [{ id: 'x', title: 'Škoda Octavia €' }],
    cursor: 'c',
  });
  // Two secrets, as during a rotation: the recipe must find its signature among both.
  const [secret, previous] = [generateWebhookSecret(), generateWebhookSecret()];
  const headers = webhookHeaders([previous, secret], 'msg_3f0c2a8e', body);
  assert.doesNotThrow(() => new Webhook(secret).verify(body, headers));
  const env = {
    WEBHOOK_SECRET: secret,
    WEBHOOK_ID: headers['webhook-id']!,
    WEBHOOK_TIMESTAMP: headers['webhook-timestamp']!,
    WEBHOOK_SIGNATURE: headers['webhook-signature']!,
  };
  const good = runBlock(env, body);
  assert.equal(good.status, 0, good.stderr);
  assert.match(good.stdout, /signature verified/);

  const changed = runBlock(env, body.replace('Octavia', 'Superb'));
  assert.equal(changed.status, 1);
  assert.match(changed.stderr, /does NOT match/);
});
