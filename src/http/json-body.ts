import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { type ProblemError, problem } from '../domain/errors.js';
import { messages } from '../domain/messages.js';
import { notHeld } from './json-numbers.js';

/**
 * Where a request body becomes data: the one place that decides what a body may be before any
 * route sees it (docs/contract.md#bodies-and-media-types, #text). In order, each refusal before the
 * costlier work after it:
 *
 * 0. a Content-Encoding (gzip, …): 415, bodies are taken uncompressed;
 * 1. a charset other than UTF-8 declared: 415 naming it (Latin-1 read as UTF-8 turned `Citroën`
 *    into `Citro\uFFFDn` without a word);
 * 2. bytes that are not UTF-8: 400 INVALID_JSON naming the byte offset, never a U+FFFD put in;
 * 3. text that is not JSON: 400 INVALID_JSON saying what and where, never quoting the body (the
 *    message is kept in the request records, and a body is a partner's data);
 * 4. a shape past the limits below: 400 INVALID_BODY naming where, before validation compares
 *    anything (an object of 200,000 unknown names was 14 s of the only thread);
 * 5. a number a double would not keep as sent (heldNumberProblem): 400 INVALID_BODY naming where,
 *    for the whole body, a bulk's too: JSON.parse has already changed it, and no item can be
 *    answered on its own without its text.
 *
 * U+0000 and unpaired surrogates inside strings are valid JSON and are refused field by field by
 * the schemas (src/domain/text.ts), so a bulk upsert still answers each item on its own. So are C1
 * control characters (U+0080 to U+009F) in a listing's or a dealer's text: well-formed UTF-8 and
 * valid JSON, but the mark of a Windows-1252 file read as ISO-8859-1 (`\u008Akoda` for `Škoda`),
 * refused with the field and the position named (422), not here, where no field is known.
 */

/** Names in one object: a listing has about 60 fields and aliases, a dealer's metadata fewer. */
const MAX_KEYS_PER_OBJECT = 1000;
/** Elements in one array: the largest allowed is 10,000 (a dealer import, a partner's roots). */
const MAX_ARRAY_LENGTH = 10_000;
/** Nesting: a dealer tree with metadata is the deepest body the API takes. */
export const MAX_DEPTH = 64;

const UTF8 = new Set(['utf-8', 'utf8']);

/**
 * The app's only body parser: JSON, and a JSON Merge Patch (RFC 7396: JSON under its own media
 * type) for PATCH. An empty body is "no body" (DELETE from some clients sends a content type
 * anyway). Fastify also parses text/plain by default; we take JSON only, so anything else is a 415.
 */
export function registerJsonBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ['application/json', 'application/merge-patch+json'],
    { parseAs: 'buffer' },
    (request, body, done) => {
      try {
        const type = request.headers['content-type'] ?? '';
        // Compressed bytes read as JSON would be refused as "not UTF-8", which misleads.
        const encoding = request.headers['content-encoding']?.trim().toLowerCase();
        if (encoding && encoding !== 'identity') {
          throw problem('UNSUPPORTED_MEDIA_TYPE', messages.compressedBody(printable(encoding)));
        }
        if (request.method !== 'PATCH' && /^\s*application\/merge-patch\+json/i.test(type)) {
          throw problem('UNSUPPORTED_MEDIA_TYPE', messages.mergePatchIsForPatch());
        }
        done(null, parseJsonBody(type, body as Buffer));
      } catch (error) {
        done(error as ProblemError, undefined);
      }
    },
  );
}

/** The JSON value of a body, or the ProblemError that says why there is none. */
export function parseJsonBody(contentType: string | undefined, bytes: Buffer): unknown {
  assertUtf8Charset(contentType);
  // A UTF-8 byte order mark is no part of the text (RFC 8259 lets parsers ignore it).
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const body = start ? bytes.subarray(start) : bytes;
  if (!isUtf8(body)) {
    const at = firstInvalidUtf8(body) + start;
    const byte = bytes[at]!.toString(16).toUpperCase().padStart(2, '0');
    throw problem('INVALID_JSON', messages.notUtf8(byte, at));
  }
  const text = body.toString('utf8');
  if (text.trim() === '') return undefined;
  // A number a double would not keep is said after the syntax: a text that is no JSON is that first.
  const numberNotHeld = assertShape(text);
  let value: unknown;
  try {
    value = secureJson.parse(text, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    if (error instanceof SyntaxError && error.message === PROTOTYPE_REFUSED) throw reservedName(text);
    throw problem('INVALID_JSON', messages.invalidJson(describeSyntaxError(error, text)));
  }
  if (numberNotHeld) throw numberNotHeld;
  return value;
}

/** What secure-json-parse throws for a `__proto__` name or a `constructor` holding `prototype`. */
const PROTOTYPE_REFUSED = 'Object contains forbidden prototype property';

/**
 * A name JavaScript gives a meaning: `__proto__`, or `constructor` holding `prototype`. Such a
 * name cannot be kept as sent (an object built from it, a merge or a schema's copy, would change
 * its prototype and drop the name), and removing it would change the body without a word: it is
 * refused, naming where (docs/contract.md#bodies-and-media-types). Only a body that has one pays
 * for this second parse (JSON.parse itself keeps `__proto__` as a plain name) and the walk, both
 * bounded by the shape checked above.
 */
function reservedName(text: string): ProblemError {
  const stack: { node: unknown; path: string }[] = [{ node: JSON.parse(text), path: '' }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const at = (key: string) => (path === '' ? key : `${path}.${key}`);
    if (!Array.isArray(node)) {
      if (Object.hasOwn(node, '__proto__')) return reserved(at('__proto__'), '__proto__');
      const held = Object.hasOwn(node, 'constructor') ? (node as { constructor: unknown }).constructor : null;
      if (held !== null && typeof held === 'object' && Object.hasOwn(held, 'prototype')) {
        return reserved(at('constructor'), 'constructor');
      }
    }
    // Pushed in reverse, so the first such name in the text is the one named.
    const entries = Object.entries(node);
    for (let i = entries.length - 1; i >= 0; i--) {
      stack.push({ node: entries[i]![1], path: at(entries[i]![0]) });
    }
  }
  // secure-json-parse found one; this walk reads the same value, so it does too.
  return reserved('(root)', '__proto__');
}

function reserved(path: string, name: string): ProblemError {
  const where = shownPath(path);
  const what =
    name === '__proto__'
      ? 'is the name "__proto__", which JavaScript reserves: it cannot be kept as sent; rename it'
      : 'is a "constructor" holding "prototype", which JavaScript reserves: it cannot be kept as sent; rename it';
  return problem('INVALID_BODY', messages.reservedName(where, what), [
    { path: where, message: what, code: 'reserved_name' },
  ]);
}

function assertUtf8Charset(contentType: string | undefined): void {
  const match = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType ?? '');
  if (!match) return;
  const charset = match[2]!.toLowerCase();
  if (UTF8.has(charset)) return;
  throw problem('UNSUPPORTED_MEDIA_TYPE', messages.charsetNotUtf8(printable(match[2]!)));
}

/** The offset of the first byte that does not begin or continue a well-formed UTF-8 sequence. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let need: number;
    let min = 0x80;
    let max = 0xbf;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) min = 0xa0;
      if (b === 0xed) max = 0x9f; // U+D800..U+DFFF encoded: surrogates are not characters
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) min = 0x90;
      if (b === 0xf4) max = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      const lo = k === 1 ? min : 0x80;
      const hi = k === 1 ? max : 0xbf;
      if (c === undefined || c < lo || c > hi) return i;
    }
    i += need + 1;
  }
  return -1;
}

/**
 * What is wrong with a text that is not JSON, in the parser's words but without its quote of the
 * text (V8 quotes the start of the body in "Unexpected token" messages) and with a position.
 */
function describeSyntaxError(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const quoted = /^Unexpected token '([\s\S])', [\s\S]* is not valid JSON$/.exec(message);
  if (quoted) {
    const at = unexpectedTokenOffset(text);
    return `unexpected character ${codePointName(quoted[1]!)}${at === -1 ? '' : ` ${position(text, at)}`}`;
  }
  const positioned = /^([\w\s',:{}[\]"-]+?) (?:in JSON )?at position (\d+)/.exec(message);
  if (positioned) return `${lowerFirst(positioned[1]!)} ${position(text, Number(positioned[2]))}`;
  if (/^Unexpected end of JSON input$/.test(message)) return 'the body ends before the JSON document does';
  // Never echo an unknown message: it may quote the body.
  return 'it could not be parsed';
}

/** "at line 1, column 7 (offset 6)": where a character of the text is, for a person. */
function position(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return `at line ${line}, column ${offset - lineStart + 1} (character ${offset})`;
}

/** Past this size the position of an "Unexpected token" is not looked for (it costs parses). */
const LOCATE_UP_TO = 64 * 1024;

/**
 * Where V8's "Unexpected token" is (it does not say): the shortest prefix of the text that fails
 * before its own end, found by halving (a prefix that only ends too soon is no failure yet). About
 * 16 parses of at most 64 KiB; -1 for a larger text.
 */
function unexpectedTokenOffset(text: string): number {
  if (text.length > LOCATE_UP_TO) return -1;
  const failsWithin = (prefix: string): boolean => {
    try {
      JSON.parse(prefix);
      return false;
    } catch (error) {
      const message = (error as Error).message;
      if (/^Unexpected end of JSON input/.test(message)) return false;
      const at = /at position (\d+)/.exec(message);
      return !at || Number(at[1]) < prefix.length;
    }
  };
  let lo = 0;
  let hi = text.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (failsWithin(text.slice(0, mid))) hi = mid;
    else lo = mid;
  }
  return hi - 1;
}

/** A character named so that a person sees it, whatever it is: `'a'`, or `U+0000`. */
function codePointName(c: string): string {
  const code = c.codePointAt(0)!;
  return code > 0x20 && code < 0x7f ? `'${c}'` : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const printable = (s: string) => s.replace(/[^\x21-\x7e]/g, '?').slice(0, 40);

interface Open {
  object: boolean;
  /** Names (object) or elements (array) begun so far. */
  count: number;
  /** The current name (object), for the path of what breaches a limit inside it. */
  key: string;
  /** Object only: the next string is a name (after `{` or `,`), not a value. */
  expectKey: boolean;
}

/**
 * The limits, checked on the text before JSON.parse builds anything: parsing an object of
 * 470,000 names or arrays 2.6 million deep took a second of the only thread by itself. One pass
 * over the characters with a stack of open containers; it stops at the first breach, and leaves
 * syntax errors to JSON.parse (a text that is no JSON may breach nothing here).
 */
function assertShape(text: string): ProblemError | null {
  const stack: Open[] = [];
  let numberNotHeld: ProblemError | null = null;
  // Numbers already found held: a body repeats its numbers (a hostile one 580,000 times).
  const held = new Set<string>();
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    switch (c) {
      case 0x22: {
        // "
        if (top && (top.object ? top.expectKey : true)) begin(stack, top);
        const end = stringEnd(text, i + 1);
        if (top?.object && top.expectKey) {
          top.key = text.slice(i + 1, end);
          top.expectKey = false;
        }
        i = end;
        break;
      }
      case 0x7b: // {
      case 0x5b: // [
        if (top && !top.object) begin(stack, top);
        if (stack.length >= MAX_DEPTH) {
          throw tooMuch(pathOf(stack), `is nested deeper than ${MAX_DEPTH} levels`, 'too_deep');
        }
        stack.push({ object: c === 0x7b, count: 0, key: '', expectKey: c === 0x7b });
        break;
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop();
        break;
      case 0x2c: // ,
        if (top?.object) top.expectKey = true;
        break;
      case 0x3a: // :
      case 0x20:
      case 0x0a:
      case 0x0d:
      case 0x09:
        break;
      default: {
        // A number or a literal (`true`, `-1.5e3`), read whole: in an array it is an element.
        if (top && !top.object) begin(stack, top);
        let end = i + 1;
        let exponent = false;
        for (let d = text.charCodeAt(end); end < text.length && isScalarPart(d); d = text.charCodeAt(++end)) {
          if (d === 0x65 || d === 0x45) exponent = true;
        }
        // Up to 15 characters without an exponent always fit a double: no more to check.
        if (
          numberNotHeld === null &&
          (c === 0x2d || (c >= 0x30 && c <= 0x39)) &&
          (exponent || end - i > 15)
        ) {
          const token = text.slice(i, end);
          if (!held.has(token)) {
            numberNotHeld = heldNumberProblem(token, stack);
            // Short ones: V8 hashes a string past 16,383 characters by its length alone.
            if (held.size < HELD_REMEMBERED && token.length <= 64) held.add(token);
          }
        }
        i = end - 1;
      }
    }
  }
  return numberNotHeld;
}

/**
 * How many numbers a body's check remembers as held: every subnormal written in 8 characters
 * (4.9E-324) is 1,440 of them; the set's memory stays under a megabyte.
 */
const HELD_REMEMBERED = 8192;

/**
 * A number a double would not keep as sent (json-numbers.ts, notHeld says which and why): 400
 * INVALID_BODY naming where, or null.
 */
function heldNumberProblem(token: string, stack: Open[]): ProblemError | null {
  const why = notHeld(token);
  if (why === null) return null;
  const path = pathOf(stack);
  const where = shownPath(path);
  const shown = token.length > 40 ? `${token.slice(0, 40)}…` : token;
  return problem('INVALID_BODY', messages.numberNotHeld(where, shown, why), [
    { path: where, message: `${shown} ${why}`, code: 'number_not_held' },
  ]);
}

/**
 * Where the string that starts at `from` ends: its closing quote, the first one after an even
 * run of backslashes (an odd run escapes it), or the text's end if it has none (JSON.parse then
 * says so). Found with indexOf rather than character by character: strings are most of a body's
 * text. A bulk of 100 listings (70 kB) took 0.28 ms to check and parse against 0.60
 * (bench/results/2026-11-30-body-shape.txt).
 */
function stringEnd(text: string, from: number): number {
  for (let at = from; ; ) {
    const quote = text.indexOf('"', at);
    if (quote < 0) return text.length;
    let backslashes = 0;
    while (quote - backslashes > from && text.charCodeAt(quote - backslashes - 1) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

/** A character that continues a number or a literal (`true`, `-1.5e3`). */
function isScalarPart(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    (c >= 0x61 && c <= 0x7a) ||
    c === 0x2e ||
    c === 0x2b ||
    c === 0x2d ||
    c === 0x45
  );
}

/** A name (object) or an element (array) begins in `top`: counted, and refused past the limits. */
function begin(stack: Open[], top: Open): void {
  top.count++;
  if (top.object && top.count > MAX_KEYS_PER_OBJECT) {
    throw tooMuch(
      pathOf(stack.slice(0, -1)),
      `has more than ${MAX_KEYS_PER_OBJECT} names; at most ${MAX_KEYS_PER_OBJECT} are taken in one object`,
      'too_many_keys',
    );
  }
  if (!top.object && top.count > MAX_ARRAY_LENGTH) {
    throw tooMuch(
      pathOf(stack.slice(0, -1)),
      `has more than ${MAX_ARRAY_LENGTH} elements; at most ${MAX_ARRAY_LENGTH} are taken`,
      'too_long',
    );
  }
}

/** A path as an answer names it: the root by name, a long one cut (a body's names are its own). */
function shownPath(path: string): string {
  return path === '' ? '(root)' : path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/** Where the innermost of `stack` is: its names and indexes from the root. */
function pathOf(stack: Open[]): string {
  return stack.map((open) => (open.object ? open.key : String(open.count - 1))).join('.');
}

function tooMuch(path: string, what: string, code: string): ProblemError {
  const where = shownPath(path);
  return problem('INVALID_BODY', messages.bodyShapeTooLarge(where, what), [
    { path: where, message: what, code },
  ]);
}
