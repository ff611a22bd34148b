import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProblemError } from '../../src/domain/errors.js';
import { checkTarget, MAX_URL_LENGTH } from '../../src/domain/webhooks/target.js';
import {
  addressKind,
  hostOf,
  isAllowedAddress,
  isLoopbackAddress,
  isPublicAddress,
  resolveHost,
} from '../../src/outbound/addresses.js';

// Where webhooks may go (docs/webhooks.md): the URL rules at registration and the address rules
// applied at every connection. IP literals only, so no name is looked up.

async function refusal(raw: string, allowPrivate = false, allowLoopback = false) {
  try {
    await checkTarget(raw, allowPrivate, allowLoopback);
  } catch (error) {
    assert.ok(error instanceof ProblemError, String(error));
    assert.equal(error.code, 'VALIDATION_FAILED');
    assert.equal(error.issues?.length, 1);
    const issue = error.issues![0]!;
    assert.equal(issue.path, 'url');
    assert.equal(error.message, `url: ${issue.message}`);
    return issue;
  }
  assert.fail(`${raw} was accepted`);
}

test('a public https address is taken and returned as it will be called', async () => {
  assert.equal(
    await checkTarget('https://8.8.8.8/hooks/forecourt?x=1', false),
    'https://8.8.8.8/hooks/forecourt?x=1',
  );
  assert.equal(await checkTarget('HTTPS://8.8.8.8', false), 'https://8.8.8.8/');
  assert.equal(
    await checkTarget('https://[2606:4700:4700::1111]:8443/h', false),
    'https://[2606:4700:4700::1111]:8443/h',
  );
});

test('a URL longer than 2048 characters is refused as too_long; 2048 exactly is not', async () => {
  const base = 'https://8.8.8.8/';
  assert.equal(MAX_URL_LENGTH, 2048);
  const exact = base + 'a'.repeat(2048 - base.length);
  assert.equal(await checkTarget(exact, false), exact);
  const issue = await refusal(`${exact}a`);
  assert.equal(issue.code, 'too_long');
  assert.equal(issue.message, 'is longer than 2048 characters');
});

test('what is not an absolute URL is invalid_url', async () => {
  for (const raw of ['hooks.example.com/x', '/hooks', '', 'https://']) {
    const issue = await refusal(raw);
    assert.equal(issue.code, 'invalid_url', raw);
    assert.match(issue.message, /is not an absolute URL/);
  }
});

test('spaces, control characters and lone surrogates are refused, naming the character and where', async () => {
  const tab = await refusal('https://8.8.8.8/a\tb');
  assert.equal(tab.code, 'invalid_url');
  assert.match(tab.message, /U\+0009 at character 17/);
  assert.match((await refusal('https://8.8.8.8/a b')).message, /U\+0020 at character 17/);
  assert.match((await refusal('https://8.8.8.8/x\r\nHost: evil')).message, /U\+000D at character 17/);
  assert.match((await refusal('https://8.8.8.8/\u0085')).message, /U\+0085/);
  assert.match((await refusal('https://8.8.8.8/\ud800')).message, /U\+D800/);
});

test('only https, unless private targets are allowed; the scheme found is named', async () => {
  const http = await refusal('http://8.8.8.8/hook');
  assert.equal(http.code, 'https_required');
  assert.equal(http.message, 'must use https (got http)');
  assert.equal((await refusal('ftp://8.8.8.8/hook')).message, 'must use https (got ftp)');
  assert.equal(await checkTarget('http://8.8.8.8/hook', true), 'http://8.8.8.8/hook');
});

test('credentials in the URL are refused: deliveries are signed instead', async () => {
  for (const raw of ['https://user:pw@8.8.8.8/', 'https://user@8.8.8.8/', 'https://:pw@8.8.8.8/']) {
    const issue = await refusal(raw);
    assert.equal(issue.code, 'credentials_in_url', raw);
    assert.match(issue.message, /webhook-signature/);
  }
});

test('a #fragment is refused: it is never sent to the server', async () => {
  const issue = await refusal('https://8.8.8.8/hook#part');
  assert.equal(issue.code, 'fragment');
  assert.match(issue.message, /#fragment/);
});

test('private, loopback, link-local and CGNAT hosts are forbidden, saying what they are', async () => {
  const cases: [string, string][] = [
    [
      'https://10.1.2.3/',
      '10.1.2.3 is a private network address; webhooks are delivered to public addresses only',
    ],
    ['https://192.168.0.10/', '192.168.0.10 is a private network address'],
    ['https://127.0.0.1/', '127.0.0.1 is a loopback address'],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254 is a link-local address'],
    ['https://100.100.100.200/', '100.100.100.200 is a carrier-grade NAT address'],
    ['https://[fd00:ec2::254]/', 'fd00:ec2::254 is a unique-local (private) IPv6 address'],
    ['https://[::1]/', '::1 is a loopback address'],
    ['https://0.0.0.0/', '0.0.0.0 is the unspecified address'],
  ];
  for (const [raw, message] of cases) {
    const issue = await refusal(raw);
    assert.equal(issue.code, 'forbidden_address', raw);
    assert.ok(issue.message.startsWith(message), `${raw}: ${issue.message}`);
  }
});

test('a host written as a number or in hex is judged as the address the URL parser makes of it', async () => {
  assert.match((await refusal('https://2130706433/')).message, /^127\.0\.0\.1 is a loopback address/);
  assert.match((await refusal('https://0x7f.1/')).message, /^127\.0\.0\.1 is a loopback address/);
  assert.equal(await checkTarget('https://134744072/h', false), 'https://8.8.8.8/h');
});

test('IPv4 inside IPv6 is judged by the IPv4 address: mapped private is refused, ::/96 always', async () => {
  assert.match((await refusal('https://[::ffff:10.0.0.1]/')).message, /private network address/);
  assert.match((await refusal('https://[::127.0.0.1]/')).message, /IPv4-compatible/);
  assert.match((await refusal('https://[::8.8.8.8]/')).message, /IPv4-compatible/);
});

test('WEBHOOK_ALLOW_PRIVATE admits http and every address', async () => {
  for (const raw of ['http://10.0.0.1/h', 'http://127.0.0.1:8787/h', 'https://169.254.169.254/']) {
    assert.equal(await checkTarget(raw, true), raw);
  }
});

test('WEBHOOK_ALLOW_LOOPBACK admits loopback only, with http; private addresses stay refused', async () => {
  assert.equal(await checkTarget('http://127.0.0.1:8787/hooks', false, true), 'http://127.0.0.1:8787/hooks');
  assert.equal(await checkTarget('https://[::1]:8787/', false, true), 'https://[::1]:8787/');
  assert.equal((await refusal('http://10.0.0.1/', false, true)).code, 'https_required');
  assert.equal((await refusal('https://10.0.0.1/', false, true)).code, 'forbidden_address');
  assert.equal((await refusal('http://8.8.8.8/', false, true)).code, 'https_required');
});

test('public addresses: ordinary unicast IPv4 and IPv6, and mapped public IPv4', () => {
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    assert.equal(isPublicAddress(address), true, address);
  }
});

test('not public: special ranges, multicast, broadcast, documentation, NAT64 of private, and non-addresses', () => {
  for (const address of [
    '172.16.0.1',
    '172.31.255.255',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    'ff02::1',
    'fe80::1',
    '2001:db8::1',
    '::',
    'example.com',
    '',
    '256.1.1.1',
  ]) {
    assert.equal(isPublicAddress(address), false, address);
  }
  // Just outside 172.16/12 is public.
  assert.equal(isPublicAddress('172.32.0.1'), true);
  assert.equal(isPublicAddress('172.15.255.255'), true);
});

test('loopback: 127/8, ::1 and mapped 127/8; not ::127.0.0.1, not a name', () => {
  for (const address of ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1']) {
    assert.equal(isLoopbackAddress(address), true, address);
  }
  for (const address of ['::127.0.0.1', 'localhost', '10.0.0.1', '8.8.8.8']) {
    assert.equal(isLoopbackAddress(address), false, address);
  }
});

test('isAllowedAddress: private allows everything, loopback adds loopback only', () => {
  assert.equal(isAllowedAddress('10.0.0.1', { allowPrivate: true }), true);
  assert.equal(isAllowedAddress('10.0.0.1', { allowPrivate: false, allowLoopback: true }), false);
  assert.equal(isAllowedAddress('127.0.0.1', { allowPrivate: false, allowLoopback: true }), true);
  assert.equal(isAllowedAddress('127.0.0.1', { allowPrivate: false }), false);
  assert.equal(isAllowedAddress('8.8.8.8', { allowPrivate: false }), true);
});

test('addressKind names each refused kind in words', () => {
  assert.equal(addressKind('not-an-ip'), 'not an IP address');
  assert.equal(addressKind('224.0.0.1'), 'a multicast address');
  assert.equal(addressKind('255.255.255.255'), 'the broadcast address');
  assert.equal(addressKind('240.0.0.1'), 'a reserved address');
  assert.equal(addressKind('::7f00:1'), 'an IPv4-compatible IPv6 address (IPv4 written as IPv6)');
  assert.equal(addressKind('2001:db8::1'), 'a reserved address');
  assert.equal(addressKind('2001::1'), 'a special-purpose address (teredo)');
});

test('IPv6 forms that carry IPv4 (6to4, NAT64, Teredo) are never public', () => {
  for (const address of [
    '2002:a00:1::1',
    '2002:808:808::1',
    '64:ff9b::a00:1',
    '64:ff9b::808:808',
    '2001::1',
  ]) {
    assert.equal(isPublicAddress(address), false, address);
  }
});

test('hostOf drops IPv6 brackets; resolveHost returns an IP literal without a lookup', async () => {
  assert.equal(hostOf(new URL('https://[::1]:8443/x')), '::1');
  assert.equal(hostOf(new URL('https://8.8.8.8/')), '8.8.8.8');
  assert.deepEqual(await resolveHost('8.8.8.8', 1), ['8.8.8.8']);
  assert.deepEqual(await resolveHost('::1', 1), ['::1']);
});

test('special-purpose ranges (benchmarking, AS112, AMT, discard, ORCHID, site-local, SIIT) are never public', () => {
  for (const address of [
    '198.18.0.1',
    '192.0.0.8',
    '192.31.196.1',
    '192.52.193.1',
    '0.1.2.3',
    '100::1',
    '2001:2::1',
    '2001:20::1',
    'fec0::1',
    '::ffff:0:a00:1',
  ]) {
    assert.equal(isPublicAddress(address), false, address);
    assert.notEqual(addressKind(address), 'not an IP address', address);
  }
});
