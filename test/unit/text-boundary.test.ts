import assert from 'node:assert/strict';
import { test } from 'node:test';
import { issuesPart, MAX_ISSUES, ProblemError } from '../../src/domain/errors.js';
import { isStorableText, keepable, unstorableAt } from '../../src/domain/text.js';
import { SUGGEST_AT_MOST, unknownKeyIssues } from '../../src/domain/unknown-keys.js';
import { firstInvalidUtf8, MAX_DEPTH, parseJsonBody } from '../../src/http/json-body.js';
import { assertUrlText } from '../../src/http/url-text.js';
import { isPublicAddress } from '../../src/outbound/addresses.js';

// The text boundary's rules (issue 28), without a service: what is refused and why, what is kept.

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ProblemError, String(error));
    return { status: error.status, code: error.code, message: error.message, issues: error.issues };
  }
  assert.fail('not refused');
};

test('storable text: no U+0000, no unpaired surrogate; pairs and everything else are fine', () => {
  for (const ok of ['', 'Citroën', '😀', 'a\u0001b', '\u202Eevil', 'x'.repeat(70_000)]) {
    assert.equal(isStorableText(ok), true, JSON.stringify(ok));
  }
  for (const bad of ['a\u0000b', '\ud800', 'x\udc00', '\ude00😀', '😀\ud83d']) {
    assert.equal(isStorableText(bad), false, JSON.stringify(bad));
  }
  assert.deepEqual(unstorableAt('ab\u0000'), { index: 2, what: 'U+0000 (NUL)' });
  assert.deepEqual(unstorableAt('a\ud800'), { index: 1, what: 'an unpaired surrogate U+D800' });
  assert.equal(unstorableAt('fine'), null);
});

test('keepable: what is kept for people to read is made safe and cut, saying how long it was', () => {
  assert.equal(keepable('ok\u0000thanks'), 'ok\uFFFDthanks');
  assert.equal(keepable('a\ud800b\udfffc'), 'a\uFFFDb\uFFFDc');
  assert.equal(keepable('😀😀'), '😀😀');
  const cut = keepable('y'.repeat(5300), 200);
  assert.equal(cut, `${'y'.repeat(200)}… (5300 characters)`);
  // Never cut between the halves of a pair (that would leave an unpaired surrogate).
  const emoji = keepable(`${'a'.repeat(9)}😀tail`, 10);
  assert.equal(isStorableText(emoji), true);
  assert.ok(emoji.startsWith('a'.repeat(9)));
});

test('UTF-8: the offset of the first byte that is not part of a character', () => {
  const at = (bytes: number[]) => firstInvalidUtf8(Uint8Array.from(bytes));
  assert.equal(at([0x41, 0xc3, 0xab]), -1); // Aë
  assert.equal(at([0x43, 0x69, 0xeb, 0x6e]), 2); // Ciën in Latin-1
  assert.equal(at([0xc3]), 0); // cut short
  assert.equal(at([0x41, 0xed, 0xa0, 0x80]), 1); // a surrogate encoded
  assert.equal(at([0xc0, 0xaf]), 0); // overlong
  assert.equal(at([0xf4, 0x90, 0x80, 0x80]), 0); // past U+10FFFF
  assert.equal(at([0xf0, 0x9f, 0x98, 0x80, 0xff]), 4);
});

test('a body: charset, bytes, syntax and shape refused with the documented code; a BOM is no text', () => {
  const body = (text: string) => Buffer.from(text, 'utf8');
  assert.deepEqual(parseJsonBody('application/json; charset=UTF-8', body('{"a":"ë"}')), { a: 'ë' });
  assert.deepEqual(parseJsonBody('application/json', Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])), {});
  assert.equal(parseJsonBody('application/json', body('  ')), undefined);

  for (const charset of ['iso-8859-1', 'windows-1252', '"latin1"', 'utf-16']) {
    const error = refusal(() => parseJsonBody(`application/json; charset=${charset}`, body('{}')));
    assert.equal(error.status, 415);
    assert.match(error.message, /UTF-8/);
  }
  const latin1 = refusal(() => parseJsonBody('application/json', Buffer.from('{"t":"Citroën"}', 'latin1')));
  assert.equal(latin1.code, 'INVALID_JSON');
  assert.match(latin1.message, /byte 0xEB at offset 11/);

  const cases: [string, RegExp][] = [
    ['{"c": an.peeters}', /unexpected character 'a' at line 1, column 7 \(character 6\)/],
    ['{"a": \u0000}', /unexpected character U\+0000/],
    ['{"a":1,}', /expected double-quoted property name at line 1, column 8/],
    ['{\n"a":\n"b\nc"}', /bad control character in string literal at line 3/],
    ['[1,2', /expected ',' or '\]' after array element/],
    ['{"a":1} x', /unexpected non-whitespace character after JSON/],
  ];
  for (const [text, message] of cases) {
    const error = refusal(() => parseJsonBody('application/json', body(text)));
    assert.equal(error.code, 'INVALID_JSON', text);
    assert.match(error.message, message, text);
    assert.doesNotMatch(error.message, /peeters|"a"/, 'never quotes the body');
  }

  const keys = `{${Array.from({ length: 1001 }, (_, i) => `"k${i}":1`).join(',')}}`;
  assert.equal(
    refusal(() => parseJsonBody('application/json', body(keys))).issues?.[0]?.code,
    'too_many_keys',
  );
  const long = JSON.stringify({ images: Array.from({ length: 10_001 }, () => 1) });
  assert.deepEqual(refusal(() => parseJsonBody('application/json', body(long))).issues?.[0], {
    path: 'images',
    message: 'has more than 10000 elements; at most 10000 are taken',
    code: 'too_long',
  });
  // Counted on the text: exactly at the limits passes, whatever the values look like; strings
  // holding punctuation or escaped quotes count as one value.
  const keys1000 = `{${Array.from({ length: 1000 }, (_, i) => `"k${i}":${i % 2 ? '"a,b}]\\"{["' : '[1,-2.5e3,true,null]'}`).join(',')}}`;
  assert.equal(Object.keys(parseJsonBody('application/json', body(keys1000)) as object).length, 1000);
  const mixed = JSON.stringify({
    a: [...Array.from({ length: 9996 }, (_, i) => i - 5000), true, null, 'x,y', { z: [] }],
  });
  assert.equal((parseJsonBody('application/json', body(mixed)) as { a: unknown[] }).a.length, 10_000);
  const nested = JSON.stringify({
    items: [
      {
        externalReference: 'x',
        features: [Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, 1]))],
      },
    ],
  });
  assert.deepEqual(
    refusal(() => parseJsonBody('application/json', body(nested))).issues?.[0]?.path,
    'items.0.features.0',
  );
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const tooDeep = refusal(() => parseJsonBody('application/json', body(deep)));
  assert.equal(tooDeep.code, 'INVALID_BODY');
  assert.match(tooDeep.message, new RegExp(`deeper than ${MAX_DEPTH} levels`));
  // A name JavaScript reserves is refused where it is, not removed without a word.
  const proto = refusal(() => parseJsonBody('application/json', body('{"a":{"__proto__":{"x":1}}}')));
  assert.equal(proto.code, 'INVALID_BODY');
  assert.equal(proto.issues?.[0]?.path, 'a.__proto__');
});

test('a number a double cannot keep as sent is refused where it is; a double written any way passes', () => {
  // Until 2026-11-30 JSON.parse changed these without a word: 1e-400 became 0, a 20-digit id in
  // a dealer's metadata lost its last digits.
  const parse = (text: string) => parseJsonBody('application/json', Buffer.from(text, 'utf8'));
  const refused: [string, string, RegExp][] = [
    ['{"a":{"co2Emission":1e-400}}', 'a.co2Emission', /nearer zero than 5e-324/],
    ['{"x":1.2345678e-320}', 'x', /cannot keep these digits \(it would become 1\.2347e-320\)/],
    ['{"price":1e400}', 'price', /beyond ±1\.8e308/],
    ['{"price":-2E+309}', 'price', /beyond/],
    ['{"metadata":{"dmsId":12345678901234567891}}', 'metadata.dmsId', /holds only as 12345678901234567000/],
    ['{"ids":[1,9007199254740993]}', 'ids.1', /past 2\^53/],
    // 2^64 exactly, as Python writes it: read back it would be 18446744073709552000.
    ['{"id":18446744073709551616}', 'id', /holds only as 18446744073709552000; send it as a string/],
    ['{"price":19.990000000000000001}', 'price', /more significant digits .* it would become 19\.99/],
    // Even a double's exact digits, past 17 (Java before 19 wrote a few doubles so): at most 17.
    ['{"x":2.82879384806159008E17}', 'x', /more significant digits than a number here holds \(17\)/],
    ['5e-324000', '(root)', /nearer zero/],
    [`[1${'0'.repeat(1_000_000)}1]`, '0', /beyond/], // linear: a run of zeros cost its square
    [`[0.${'0'.repeat(500_000)}1${'0'.repeat(500_000)}1]`, '0', /nearer zero/],
  ];
  for (const [text, path, why] of refused) {
    const error = refusal(() => parse(text));
    assert.equal(error.code, 'INVALID_BODY', text.slice(0, 60));
    assert.equal(error.issues?.[0]?.path, path, text.slice(0, 60));
    assert.equal(error.issues?.[0]?.code, 'number_not_held', text.slice(0, 60));
    assert.match(error.message, why, text.slice(0, 60));
  }
  // A text that is no JSON is said to be that first.
  for (const text of ['{1e999:1}', '[1e999', '[1e-400,]']) {
    assert.equal(refusal(() => parse(text)).code, 'INVALID_JSON', text);
  }
  // Every way a JSON library writes a double, and zeros however written, are taken as sent.
  const taken: [string, number][] = [
    ['0.1', 0.1],
    ['50.850340000000003', 50.850340000000003], // 17 digits (C#'s G17): the same double as 50.85034
    ['1.7976931348623157e308', Number.MAX_VALUE],
    ['2.2250738585072014e-308', 2.2250738585072014e-308],
    ['5e-324', Number.MIN_VALUE], // JSON.stringify
    ['4.9E-324', Number.MIN_VALUE], // Java
    ['4.9406564584124654E-324', Number.MIN_VALUE], // C#'s G17
    ['-1.2347e-320', -1.2347e-320],
    ['18446744073709552000', 2 ** 64], // JSON.stringify and Go write 2^64 so
    ['9007199254740992', 2 ** 53],
    ['100000000000000000000', 1e20],
    ['-0.000e-500', -0],
    ['19.99000000000000000000', 19.99],
    ['1.5E+3', 1500],
  ];
  for (const [text, value] of taken) assert.equal((parse(`{"n":${text}}`) as { n: number }).n, value, text);
  // The counts of the shape check still see a number as one element, however long.
  assert.equal(
    (parse(`[${Array.from({ length: 10_000 }, () => '-1.25e-3').join(',')}]`) as unknown[]).length,
    10_000,
  );
});

test("numbers near zero and long ones: taken exactly when they are their double's own digits", () => {
  // An independent judge (regular expressions and toPrecision, too slow for the service: the
  // boundary decides most of these in floating point) on random doubles written to random
  // lengths, half of them with the last digit changed.
  const taken = (text: string) => {
    try {
      parseJsonBody('application/json', Buffer.from(`[${text}]`, 'utf8'));
      return true;
    } catch {
      return false;
    }
  };
  const significant = (text: string) => {
    const [mantissa = '', exponent = '0'] = text.replace(/^-/, '').toLowerCase().split('e');
    const [whole = '', fraction = ''] = mantissa.split('.');
    const all = whole + fraction;
    const lead = all.length - all.replace(/^0+/, '').length;
    return `${all.slice(lead).replace(/0+$/, '')}@${whole.length - lead + Number(exponent)}`;
  };
  const own = (text: string) => {
    const size = Math.abs(Number(text));
    const sent = significant(text);
    if (size === 0) return sent.startsWith('@'); // a zero is taken, a number that became one is not
    if (/^-?\d+$/.test(text) && size > Number.MAX_SAFE_INTEGER) return sent === significant(String(size));
    const digits = sent.split('@')[0]!.length;
    if (digits > 17) return false;
    if (size >= 2.2250738585072014e-308) return true;
    return sent === significant(size.toPrecision(digits));
  };
  let seed = 7;
  const random = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  for (let i = 0; i < 20_000; i++) {
    const nearZero = i % 2 === 0;
    const value = nearZero
      ? (1 + Math.floor(random() * (random() < 0.5 ? 1000 : 2 ** 52 - 1))) * Number.MIN_VALUE
      : (random() - 0.5) * 10 ** Math.floor(random() * 600 - 300);
    if (value === 0 || !Number.isFinite(value)) continue;
    let text = value.toPrecision(nearZero ? 1 + Math.floor(random() * 17) : 15 + Math.floor(random() * 12));
    if (random() < 0.5) {
      const [, digits = '', rest = ''] = /^(-?[\d.]+)(e.*)?$/.exec(text) ?? [];
      text = `${digits.slice(0, -1)}${(Number(digits.at(-1)) + 1) % 10}${rest}`;
    }
    if (random() < 0.3) text = text.toUpperCase();
    assert.equal(taken(text), own(text), text);
  }
});

test('a URL: percent-encoded UTF-8 without U+0000 in the path and every query name and value', () => {
  for (const ok of ['/a/b?x=1&y=%C3%AB&z=a+b', '/listings/', '/a%20b', '/x?', '/x?flag&&a=']) {
    assert.doesNotThrow(() => assertUrlText(ok), ok);
  }
  const path = refusal(() => assertUrlText('/requests/a%00b'));
  assert.equal(path.code, 'BAD_REQUEST');
  assert.match(path.message, /U\+0000 \(NUL\) at character 11/);
  assert.equal(refusal(() => assertUrlText('/a%FFb')).code, 'BAD_REQUEST');
  assert.equal(refusal(() => assertUrlText('/caf\u00e9')).code, 'BAD_REQUEST');

  const query = refusal(() => assertUrlText('/listings?a%00b=1&search=%FF&ok=1&v=%ED%A0%80&w=x%00'));
  assert.equal(query.code, 'INVALID_QUERY');
  assert.deepEqual(
    query.issues?.map((i) => [i.path, i.code]),
    [
      ['query.a\u0000b', 'invalid_text'],
      ['query.search', 'invalid_encoding'],
      ['query.v', 'invalid_encoding'],
      ['query.w', 'invalid_text'],
    ],
  );
});

test('answers list at most 100 issues, with the total; unknown names get at most 20 suggestions', () => {
  const many = Array.from({ length: 250 }, (_, i) => ({ path: `k${i}`, message: 'm', code: 'c' }));
  const part = issuesPart(many);
  assert.equal(part.issues?.length, MAX_ISSUES);
  assert.equal(part.issueCount, 250);
  assert.deepEqual(issuesPart(many.slice(0, 3)), { issues: many.slice(0, 3) });
  const body = new ProblemError('VALIDATION_FAILED', 'x', many).body('r');
  assert.equal(body.error.issues?.length, 100);
  assert.equal((body.error as { issueCount?: number }).issueCount, 250);

  const names = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`milage${i}`, 1]));
  const issues = unknownKeyIssues(names, ['mileage'], 'field');
  assert.equal(issues.length, 50);
  const suggested = issues.filter((i) => /did you mean/.test(i.message)).length;
  assert.ok(suggested > 0 && suggested <= SUGGEST_AT_MOST, String(suggested));
});

test('webhook addresses: IPv4 written as IPv6 (::/96) is never public; real public IPv6 is', () => {
  for (const refused of [
    '::7f00:1',
    '::127.0.0.1',
    '::a00:1',
    '::8.8.8.8',
    '::ffff:127.0.0.1',
    '::1',
    '::',
  ]) {
    assert.equal(isPublicAddress(refused), false, refused);
  }
  for (const open of ['2606:4700:4700::1111', '8.8.8.8', '::ffff:8.8.8.8']) {
    assert.equal(isPublicAddress(open), true, open);
  }
});
