import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import {
  booleanParam,
  dateTimeParam,
  listingIdParam,
  pick,
  positiveIntParam,
  textParam,
  uuidParam,
} from '../../src/api/schemas/query.js';
import { ProblemError } from '../../src/domain/errors.js';
import { messages } from '../../src/domain/messages.js';
import { MAX_DEPTH, parseJsonBody } from '../../src/http/json-body.js';
import { assertUrlText } from '../../src/http/url-text.js';
import { invalidInput, parseBody } from '../../src/http/validation.js';

// Where HTTP input becomes data, without a server: the URL's text, the body's bytes, query
// parameter types, and the validation errors they become (docs/contract.md#text, #bodies-and-media-types).

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ProblemError, String(error));
    return error;
  }
  assert.fail('not refused');
};
const json = (text: string, type = 'application/json') => parseJsonBody(type, Buffer.from(text, 'utf8'));

test('a URL character that is not percent-encoded is refused naming where it is', () => {
  const error = refusal(() => assertUrlText('/listings?q=a b'));
  assert.equal(error.status, 400);
  assert.equal(
    error.message,
    'The URL has a character that is not percent-encoded at character 13: send the path and query as percent-encoded UTF-8.',
  );
});

test('a path %-sequence that is no UTF-8 character is refused in its own words', () => {
  assert.equal(
    refusal(() => assertUrlText('/listings/%C3%28')).message,
    'The path has a %-sequence that is not percent-encoded UTF-8.',
  );
});

test('a lone surrogate percent-encoded in the path is no resource either', () => {
  assert.equal(refusal(() => assertUrlText('/listings/%ED%A0%80')).code, 'BAD_REQUEST');
});

test('a NUL in a query name or value says which of the two', () => {
  const error = refusal(() => assertUrlText('/listings?a%00=1&b=x%00'));
  assert.deepEqual(
    error.issues?.map((i) => i.message),
    ['contains U+0000 (NUL) in its name', 'contains U+0000 (NUL) in its value'],
  );
  assert.equal(
    error.message,
    'Invalid query: query.a\u0000 contains U+0000 (NUL) in its name (and 1 more issue).',
  );
});

test('a query name that is not UTF-8 is shown as sent', () => {
  const error = refusal(() => assertUrlText('/listings?%FF=1'));
  assert.deepEqual(error.issues, [
    {
      path: 'query.%FF',
      message: 'is not percent-encoded UTF-8 (a %-sequence that is no UTF-8 character)',
      code: 'invalid_encoding',
    },
  ]);
});

test('messages.invalidInput: the first issue, then how many more, singular or plural', () => {
  const issue = (path: string) => ({ path, message: 'is wrong', code: 'c' });
  assert.equal(messages.invalidInput('body', []), 'Invalid body.');
  assert.equal(messages.invalidInput('body', [issue('price')]), 'Invalid body: price is wrong.');
  assert.equal(
    messages.invalidInput('query', [issue('query.a'), issue('query.b')]),
    'Invalid query: query.a is wrong (and 1 more issue).',
  );
  assert.equal(
    messages.invalidInput('query', [issue('a'), issue('b'), issue('c')]),
    'Invalid query: a is wrong (and 2 more issues).',
  );
});

test('invalidInput: a body is 422 VALIDATION_FAILED, the URL 400 INVALID_QUERY', () => {
  const issues = [{ path: 'x', message: 'is wrong', code: 'c' }];
  const body = invalidInput('body', issues);
  assert.deepEqual([body.status, body.code, body.issues], [422, 'VALIDATION_FAILED', issues]);
  const query = invalidInput('query', issues);
  assert.deepEqual([query.status, query.code], [400, 'INVALID_QUERY']);
});

test("invalidInput: a bad reference in the path is INVALID_REFERENCE, as a bulk item's is", () => {
  const error = invalidInput('params', [
    { path: 'params.externalReference', message: 'must be 1 to 128 characters', code: 'c' },
  ]);
  assert.equal(error.code, 'INVALID_REFERENCE');
  assert.equal(error.message, 'externalReference must be 1 to 128 characters.');
});

const small = z.strictObject({ name: z.string(), mileage: z.number().optional() });

test('parseBody: a body that is not a JSON object is INVALID_BODY', () => {
  for (const data of [[], 'x', 5, true, null]) {
    const error = refusal(() => parseBody(small, data));
    assert.equal(error.code, 'INVALID_BODY', JSON.stringify(data));
    assert.equal(error.message, 'The request body must be a JSON object.');
  }
  assert.equal(parseBody(small.optional(), undefined), undefined, 'no body where none is needed');
});

test('parseBody: every issue in one 422, paths without a body. prefix, unknown names once with a guess', () => {
  const error = refusal(() => parseBody(small, { milage: 5, name: 7 }));
  assert.equal(error.status, 422);
  assert.deepEqual(
    error.issues?.map((i) => [i.path, i.code]),
    [
      ['milage', 'unknown_field'],
      ['name', 'invalid_type'],
    ],
  );
  assert.match(error.issues![0]!.message, /did you mean `mileage`\?/);
});

test('uuidParam: any letter case, read lower-case; anything else refused with an example', () => {
  assert.equal(
    uuidParam.parse('3F0C2A8E-5B1D-4C6E-9A7F-1D2E3F4A5B6C'),
    '3f0c2a8e-5b1d-4c6e-9a7f-1d2e3f4a5b6c',
  );
  const parsed = uuidParam.safeParse('3f0c2a8e5b1d4c6e9a7f1d2e3f4a5b6c');
  assert.equal(
    parsed.error?.issues[0]?.message,
    'must be a UUID such as 3f0c2a8e-5b1d-4c6e-9a7f-1d2e3f4a5b6c',
  );
});

test('listingIdParam: a reference in place of the id is told how to read by reference', () => {
  const parsed = listingIdParam.safeParse('STOCK 42/a');
  assert.equal(
    parsed.error?.issues[0]?.message,
    "must be the listing's id (a UUID the service assigned, data.id). To read a listing by your own reference, use GET /listings?externalReference=STOCK%2042%2Fa&status=all",
  );
});

test('positiveIntParam: digits with outer spaces; zero, signs and decimals refused', () => {
  assert.equal(positiveIntParam.parse(' 12 '), 12);
  assert.equal(positiveIntParam.parse('0001'), 1);
  for (const bad of ['0', '-1', '+1', '1.5', '1e3', '', 'ten']) {
    assert.equal(
      positiveIntParam.safeParse(bad).error?.issues[0]?.message,
      'must be a positive integer',
      bad,
    );
  }
});

test('positiveIntParam: any number of digits, read as at most 2^53 - 1', () => {
  assert.equal(positiveIntParam.parse('9'.repeat(40)), Number.MAX_SAFE_INTEGER);
  assert.equal(positiveIntParam.parse('9007199254740991'), Number.MAX_SAFE_INTEGER);
});

test('textParam: trimmed, not empty, at most the maximum, storable', () => {
  const t = textParam(5);
  assert.equal(t.parse('  ab '), 'ab');
  assert.equal(t.safeParse('   ').error?.issues[0]?.message, 'must not be empty');
  assert.equal(t.safeParse('abcdef').error?.issues[0]?.message, 'must be at most 5 characters');
  assert.equal(
    t.safeParse('a\u0000').error?.issues[0]?.message,
    'must not contain U+0000 or unpaired surrogate characters',
  );
});

test('booleanParam: outer spaces are forgiven; the refusal lists the four words', () => {
  assert.equal(booleanParam.parse(' TRUE '), true);
  assert.equal(booleanParam.parse('0'), false);
  assert.equal(booleanParam.safeParse('on').error?.issues[0]?.message, 'must be true, false, 1 or 0');
});

test('dateTimeParam: years 1 to 9999 only; the last minute of 9999 is taken', () => {
  assert.equal(dateTimeParam.parse('9999-12-31T23:59Z').toISOString(), '9999-12-31T23:59:00.000Z');
  const message = 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z';
  assert.equal(dateTimeParam.safeParse('0000-12-31').error?.issues[0]?.message, message);
  assert.equal(dateTimeParam.safeParse('9999-12-31T23:59-01:00').error?.issues[0]?.message, message);
});

test('dateTimeParam: a lower-case t and z, nanoseconds, and an offset without a colon', () => {
  assert.equal(dateTimeParam.parse('2026-11-22t10:00:00z').toISOString(), '2026-11-22T10:00:00.000Z');
  assert.equal(
    dateTimeParam.parse('2026-11-22T10:00:00.123456789Z').toISOString(),
    '2026-11-22T10:00:00.123Z',
  );
  assert.equal(dateTimeParam.parse('2026-11-22T10:00+0130').toISOString(), '2026-11-22T08:30:00.000Z');
  assert.ok(!dateTimeParam.safeParse('2026-11-22T25:00Z').success);
  assert.ok(!dateTimeParam.safeParse('2026-11-22T10Z').success);
});

test('pick: the canonical name first, else the first alias given', () => {
  assert.equal(pick(undefined, 'alias1', 'alias2'), 'alias1');
  assert.equal(pick('canonical', 'alias1'), 'canonical');
  assert.equal(pick<string>(undefined, undefined), undefined);
});

test('a body that ends too soon says so, without quoting it', () => {
  const error = refusal(() => json('{"title":'));
  assert.equal(error.code, 'INVALID_JSON');
  assert.equal(
    error.message,
    'The request body is not valid JSON: the body ends before the JSON document does.',
  );
  assert.equal(
    refusal(() => json('{"title": "Golf')).message,
    'The request body is not valid JSON: unterminated string at line 1, column 16 (character 15).',
  );
});

test('charset: utf-8 in any case, quoted or not; others named in the 415', () => {
  assert.deepEqual(json('{}', 'application/json; charset="UTF-8"'), {});
  assert.deepEqual(json('{}', 'application/json;charset=utf8'), {});
  const error = refusal(() => json('{}', 'application/json; charset=ascii'));
  assert.equal(error.status, 415);
  assert.match(error.message, /^The body declares charset=ascii;/);
});

test('a byte that is not UTF-8 after a BOM is located from the first byte sent', () => {
  const bytes = Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x22, 0xff, 0x22, 0x7d]);
  assert.match(refusal(() => parseJsonBody('application/json', bytes)).message, /byte 0xFF at offset 5/);
});

test('__proto__ and constructor.prototype are refused where they are, never removed', () => {
  const cases: [string, string][] = [
    ['{"__proto__":{"x":1},"a":1}', '__proto__'],
    ['{"constructor":{"prototype":{"polluted":1}},"a":1}', 'constructor'],
    // Escaped, nested in arrays, after a harmless one: the first in the text is named.
    ['{"a":1,"items":[{"ok":true},{"metadata":{"\\u005f_proto__":null}}]}', 'items.1.metadata.__proto__'],
    ['[{"b":{"constructor":{"prototype":1}}},{"__proto__":2}]', '0.b.constructor'],
  ];
  for (const [text, path] of cases) {
    const error = refusal(() => json(text));
    assert.equal(error.code, 'INVALID_BODY', text);
    assert.equal(error.issues?.[0]?.path, path, text);
    assert.equal(error.issues?.[0]?.code, 'reserved_name', text);
    assert.match(error.message, /JavaScript reserves/, text);
  }
  assert.equal(({} as { polluted?: number }).polluted, undefined);
  // A constructor that is only a name, or holds no prototype, is a name like any other.
  assert.deepEqual(json('{"constructor":"x","b":{"constructor":{"p":1}}}'), {
    constructor: 'x',
    b: { constructor: { p: 1 } },
  });
});

test('nesting: 64 levels are taken, 65 refused as too_deep', () => {
  const nest = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  assert.doesNotThrow(() => json(nest(MAX_DEPTH)));
  const error = refusal(() => json(nest(MAX_DEPTH + 1)));
  assert.equal(error.code, 'INVALID_BODY');
  assert.equal(error.issues?.[0]?.code, 'too_deep');
});

test('shape: brackets and quotes inside strings are text; escapes end no string', () => {
  // 65 brackets inside strings, behind escaped quotes and backslashes, are no nesting.
  const brackets = '['.repeat(MAX_DEPTH + 1);
  assert.deepEqual(json(`["a\\\\", "\\"${brackets}", "\\\\\\"${brackets}"]`), [
    'a\\',
    `"${brackets}`,
    `\\"${brackets}`,
  ]);
  // A name with escapes in it is named whole where a limit is breached inside it.
  const wide = `[${'1,'.repeat(10_000)}1]`;
  const error = refusal(() => json(`{"say \\"hi\\" \\\\":{"x":${wide}}}`));
  assert.equal(error.issues?.[0]?.code, 'too_long');
  assert.match(error.message, /say \\"hi\\" \\\\\.x has more than 10000 elements/);
  // A string that never ends is JSON.parse's to report, wherever its last quote is escaped.
  assert.equal(refusal(() => json('["abc\\"]')).code, 'INVALID_JSON');
});

test('a JSON scalar or an empty body is data too; the route decides what it needs', () => {
  assert.equal(json('5'), 5);
  assert.equal(json(' "x" '), 'x');
  assert.equal(json(''), undefined);
});
