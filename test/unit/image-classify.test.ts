import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type BodyRead,
  classifyBody,
  classifyFetch,
  IMAGE_LIMITS,
  IMAGE_PROBLEMS,
  IMAGE_STATES,
  type ImageCheck,
} from '../../src/domain/images/classify.js';
import { sniff } from '../../src/domain/images/formats.js';
import type { FetchFailure } from '../../src/outbound/image-fetch.js';
import { gif, png } from '../helpers/image-bytes.js';

// Classification by magic numbers (docs/images.md): each accepted format with its dimensions,
// what a non-image looked like, the thresholds, and hostile bytes that must neither throw nor hang.

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/images');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const NOW = new Date('2026-11-28T10:00:00.000Z');

const body = (head: Uint8Array, extra: Partial<BodyRead> = {}): BodyRead => ({
  head,
  complete: true,
  bytes: head.length,
  overCap: false,
  contentType: null,
  ...extra,
});
const check = (head: Uint8Array, extra: Partial<BodyRead> = {}) => classifyBody(body(head, extra), NOW);

const ok = (result: ImageCheck, format: string, width: number, height: number) => {
  assert.equal(result.problem, null, JSON.stringify(result.problem));
  assert.equal(result.state, 'ok');
  assert.deepEqual([result.format, result.width, result.height], [format, width, height]);
};

test('each accepted format is read with its width and height', () => {
  const cases: [string, Buffer, string][] = [
    ['baseline JPEG (SOF0)', fixture('photo.jpg'), 'jpeg'],
    ['progressive JPEG (SOF2)', fixture('progressive.jpg'), 'jpeg'],
    ['lossy WebP (VP8)', fixture('lossy.webp'), 'webp'],
    ['lossless WebP (VP8L)', fixture('lossless.webp'), 'webp'],
    ['extended WebP (VP8X)', fixture('extended.webp'), 'webp'],
    ['AVIF', fixture('photo.avif'), 'avif'],
    ['PNG', png(800, 600), 'png'],
    ['GIF', gif(800, 600), 'gif'],
  ];
  for (const [name, bytes, format] of cases) {
    const result = check(bytes, { contentType: `image/${format}` });
    ok(result, format, 800, 600);
    assert.equal(result.bytes, bytes.length, name);
    assert.equal(result.checkedAt, NOW.toISOString());
    assert.equal(result.contentType, `image/${format}`);
  }
  // Width and height are not swapped: a portrait image reads as one.
  ok(check(png(600, 800)), 'png', 600, 800);
  ok(check(gif(1000, 700)), 'gif', 1000, 700);
});

test('JPEG: the walk passes large segments before the frame header, and fill bytes', () => {
  const jpeg = fixture('photo.jpg');
  // An APP1 segment of 60 kB (as EXIF with a thumbnail is) and fill bytes right after SOI.
  const app1 = Buffer.concat([Buffer.from([0xff, 0xe1, 0xea, 0x62]), Buffer.alloc(0xea60, 0x41)]);
  const padded = Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xff]), app1, jpeg.subarray(2)]);
  ok(check(padded), 'jpeg', 800, 600);
  // Only the first kilobyte read: no frame header in it, which is not the same as a cut file.
  const cut = check(padded.subarray(0, 1024), { complete: false, bytes: padded.length });
  assert.equal(cut.state, 'not_an_image');
  assert.equal(cut.problem?.code, 'unreadable_image');
  assert.equal(
    cut.problem?.message,
    'the JPEG cannot be read: no frame header (SOF) in the first 1024 bytes',
  );
});

test('a header cut short is unreadable_image, naming the format and where the file ends', () => {
  const truncated = check(png(800, 600).subarray(0, 20));
  assert.equal(truncated.state, 'not_an_image');
  assert.deepEqual(truncated.problem, {
    code: 'unreadable_image',
    message: 'the PNG cannot be read: the file ends after 20 bytes, before its IHDR header',
  });
  assert.equal(truncated.format, null);
  // Every format, cut at every length from its signature to its header: never ok, never thrown.
  const whole: [Buffer, number, number][] = [
    [fixture('photo.jpg'), 3, 0],
    [png(800, 600), 8, 24],
    [gif(800, 600), 6, 10],
    [fixture('lossy.webp'), 12, 30],
    [fixture('lossless.webp'), 12, 30],
    [fixture('extended.webp'), 12, 30],
    [fixture('photo.avif'), 12, 0],
  ];
  for (const [bytes, signature, header] of whole) {
    const needed = header || findHeaderEnd(bytes);
    for (let n = signature; n < needed; n++) {
      const result = check(bytes.subarray(0, n));
      assert.equal(result.problem?.code, 'unreadable_image', `${n} bytes of ${result.problem?.message}`);
    }
    assert.equal(check(bytes.subarray(0, needed)).state, 'ok');
  }
});

/** The shortest head of a JPEG or AVIF whose dimensions can be read. */
function findHeaderEnd(bytes: Buffer): number {
  for (let n = 1; n <= bytes.length; n++) if (sniff(bytes.subarray(0, n), true).kind === 'image') return n;
  throw new Error('no header');
}

test('what is not an image says what it looked like; the Content-Type is quoted when it claimed an image', () => {
  const html = '<!DOCTYPE html>\n<html><head><title>  Page\n not found </title></head><body>x</body></html>';
  const cases: [string | Buffer, string | null, string, string][] = [
    [
      html,
      'image/jpeg',
      'html_page',
      'the server sent an HTML page titled "Page not found", not an image, though it said image/jpeg',
    ],
    [html, 'text/html', 'html_page', 'the server sent an HTML page titled "Page not found", not an image'],
    [
      '\ufeff  \n<html><body>hi</body></html>',
      null,
      'html_page',
      'the server sent an HTML page, not an image',
    ],
    ['', 'image/png', 'empty_body', 'the server sent an empty body, though it said image/png'],
    ['{"error":"gone"}', 'application/json', 'not_an_image', 'the server sent a JSON document, not an image'],
    ['<?xml version="1.0"?><error/>', null, 'not_an_image', 'the server sent an XML document, not an image'],
    ['Access denied\n', null, 'not_an_image', 'the server sent plain text, not an image'],
    ['%PDF-1.7\n', null, 'not_an_image', 'the server sent a PDF document, not an image'],
    [
      Buffer.from([0x1f, 0x8b, 8, 0]),
      null,
      'not_an_image',
      'the server sent gzip-compressed data, not an image',
    ],
    [
      Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
      null,
      'not_an_image',
      'the server sent unrecognised binary data (starting 00 01 02 03 04 05 06 07), not an image',
    ],
    [
      '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>',
      'image/svg+xml',
      'unsupported_format',
      'an image in SVG format; images must be JPEG, PNG, WebP, AVIF or GIF',
    ],
    [
      Buffer.from('II*\0\x08\0\0\0'),
      null,
      'unsupported_format',
      'an image in TIFF format; images must be JPEG, PNG, WebP, AVIF or GIF',
    ],
    [
      ftyp('heic', ['mif1', 'heic']),
      null,
      'unsupported_format',
      'an image in HEIC/HEIF format; images must be JPEG, PNG, WebP, AVIF or GIF',
    ],
    [
      ftyp('isom', ['isom', 'mp41']),
      null,
      'not_an_image',
      'the server sent an MP4 or QuickTime video, not an image',
    ],
  ];
  for (const [content, contentType, code, message] of cases) {
    const result = check(typeof content === 'string' ? Buffer.from(content) : content, { contentType });
    assert.equal(result.state, 'not_an_image', message);
    assert.deepEqual(result.problem, { code, message });
    assert.equal(result.contentType, contentType);
    assert.equal(result.width, null);
  }
});

test('the bytes decide, not the Content-Type: a JPEG sent as text/plain is ok and keeps what was said', () => {
  const result = check(fixture('photo.jpg'), { contentType: 'text/plain' });
  ok(result, 'jpeg', 800, 600);
  assert.equal(result.contentType, 'text/plain');
});

test('too_small: under 640 px on the longer side or 360 on the shorter, whichever way round', () => {
  assert.deepEqual([IMAGE_LIMITS.minLongSide, IMAGE_LIMITS.minShortSide], [640, 360]);
  ok(check(png(640, 360)), 'png', 640, 360);
  ok(check(png(360, 640)), 'png', 360, 640);
  for (const [w, h] of [
    [40, 30],
    [639, 480],
    [640, 359],
    [359, 2000],
  ] as const) {
    const result = check(png(w, h));
    assert.equal(result.state, 'too_small', `${w}×${h}`);
    assert.deepEqual([result.width, result.height, result.format], [w, h, 'png']);
    assert.deepEqual(result.problem, {
      code: 'too_small',
      message: `the PNG is ${w}×${h} px; images need at least 640 px on the longer side and 360 on the shorter`,
    });
  }
  assert.equal(check(fixture('tiny.jpg')).problem?.message.startsWith('the JPEG is 160×120 px'), true);
});

test('too_large: over 20 MB, or over 12,000 px a side or 120 megapixels', () => {
  const photo = fixture('photo.jpg');
  const declared = check(photo, { bytes: 25_000_000, overCap: true, complete: false });
  assert.equal(declared.state, 'too_large');
  assert.deepEqual([declared.width, declared.height, declared.bytes], [800, 600, 25_000_000]);
  assert.deepEqual(declared.problem, {
    code: 'file_too_large',
    message: 'the JPEG is 25.0 MB; images may be at most 20.0 MB',
  });
  // Counted to one byte past the cap (no Content-Length): the size is only known to be larger.
  const counted = check(photo, { bytes: IMAGE_LIMITS.maxBytes + 1, overCap: true, complete: false });
  assert.equal(counted.problem?.message, 'the JPEG is more than 20.0 MB; images may be at most 20.0 MB');
  assert.equal(check(photo, { bytes: IMAGE_LIMITS.maxBytes }).state, 'ok');

  const wide = check(png(12_001, 400));
  assert.equal(wide.state, 'too_large');
  assert.deepEqual(wide.problem, {
    code: 'dimensions_too_large',
    message: 'the PNG is 12001×400 px; images may be at most 12,000 px a side and 120 megapixels',
  });
  assert.equal(check(png(12_000, 400)).state, 'ok');
  // A tiny file declaring a huge canvas: 11,000 × 11,000 is 121 megapixels.
  const bomb = png(1, 1);
  bomb.writeUInt32BE(11_000, 16);
  bomb.writeUInt32BE(11_000, 20);
  assert.equal(check(bomb).problem?.code, 'dimensions_too_large');
  // A 100-megapixel medium-format camera's frame is within the limits.
  bomb.writeUInt32BE(11_648, 16);
  bomb.writeUInt32BE(8_736, 20);
  assert.equal(check(bomb).state, 'ok');
});

test('AVIF: the primary item size is read, not the first size found (a thumbnail or alpha plane)', () => {
  const withPrimary = avif({
    sizes: [
      [160, 120],
      [1024, 768],
    ],
    primary: 2,
  });
  ok(check(withPrimary), 'avif', 1024, 768);
  const noAssociations = avif({
    sizes: [
      [1024, 768],
      [160, 120],
    ],
    primary: null,
  });
  ok(check(noAssociations), 'avif', 1024, 768);
  const noSize = check(avif({ sizes: [], primary: null }));
  assert.equal(noSize.problem?.message, 'the AVIF cannot be read: it has no image size (ispe) property');
});

test('a failed fetch is unreachable with its problem; an abandoned one stays pending', () => {
  const failure = (failure: FetchFailure['failure'], status: number | null = null): FetchFailure => ({
    ok: false,
    failure,
    message: `what happened: ${failure}`,
    url: 'https://cdn.example/a.jpg',
    finalUrl: 'https://cdn.example/a.jpg',
    redirects: 0,
    status,
    retryAfter: null,
    phase: null,
    durationMs: 5,
  });
  const cases: [FetchFailure, string][] = [
    [failure('dns'), 'dns_failed'],
    [failure('connect'), 'connect_failed'],
    [failure('tls'), 'tls_failed'],
    [failure('timeout'), 'timeout'],
    [failure('refused_address'), 'forbidden_address'],
    [failure('invalid_url'), 'invalid_url'],
    [failure('too_many_redirects', 302), 'too_many_redirects'],
    [failure('http_status', 404), 'not_found'],
    [failure('http_status', 410), 'not_found'],
    [failure('http_status', 500), 'http_error'],
    [failure('http_status', 403), 'http_error'],
    [failure('bad_response'), 'bad_response'],
    [failure('interrupted'), 'bad_response'],
  ];
  for (const [result, code] of cases) {
    const checked = classifyFetch(result, NOW);
    assert.equal(checked.state, 'unreachable');
    assert.deepEqual(checked.problem, { code, message: result.message });
    assert.equal(checked.checkedAt, NOW.toISOString());
  }
  const pending = classifyFetch(failure('aborted'), NOW);
  assert.deepEqual(pending, {
    state: 'pending',
    checkedAt: null,
    format: null,
    width: null,
    height: null,
    bytes: null,
    contentType: null,
    problem: null,
  });
});

test('problem codes are snake_case, each in a known state, and each in docs/images.md', () => {
  const docs = readFileSync(path.resolve(import.meta.dirname, '../../docs/images.md'), 'utf8');
  for (const [code, [state]] of Object.entries(IMAGE_PROBLEMS)) {
    assert.match(code, /^[a-z]+(_[a-z]+)*$/);
    assert.ok((IMAGE_STATES as readonly string[]).includes(state), code);
    assert.ok(docs.includes(`\`${code}\``), `docs/images.md does not list ${code}`);
  }
  for (const state of IMAGE_STATES) assert.ok(docs.includes(`\`${state}\``), `docs/images.md: ${state}`);
});

test('hostile bytes: random and mutated headers never throw, never loop, and stay in bounds', () => {
  const seeds = [
    fixture('photo.jpg').subarray(0, 700),
    fixture('photo.avif').subarray(0, 700),
    fixture('extended.webp').subarray(0, 60),
    png(800, 600).subarray(0, 60),
    gif(800, 600).subarray(0, 20),
  ];
  const started = performance.now();
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 600 }),
        fc
          .tuple(
            fc.constantFrom(...seeds),
            fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 12 }),
          )
          .map(([seed, flips]) => {
            const bytes = Uint8Array.from(seed);
            for (const [at, value] of flips) bytes[at % bytes.length] = value;
            return bytes;
          }),
      ),
      fc.boolean(),
      (bytes, complete) => {
        const result = classifyBody(body(bytes, { complete }), NOW);
        assert.ok((IMAGE_STATES as readonly string[]).includes(result.state));
        if (result.state === 'ok') assert.ok(result.width! > 0 && result.height! > 0);
        assert.ok(result.state === 'ok' || result.problem !== null);
      },
    ),
    { numRuns: 3000, seed: 43 },
  );
  // Zero-sized and huge boxes, zero-length JPEG segments: each reader must move on or stop.
  const zeroBox = Buffer.concat([ftyp('avif', ['avif']), Buffer.from([0, 0, 0, 0, 0x6d, 0x65, 0x74, 0x61])]);
  assert.equal(check(zeroBox).problem?.code, 'unreadable_image');
  const zeroSegment = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x00, 0xff, 0xc0]);
  assert.equal(
    check(zeroSegment).problem?.message,
    'the JPEG cannot be read: a segment at byte 2 declares length 0',
  );
  assert.ok(performance.now() - started < 10_000, 'classification took too long');
});

/** An ISO-BMFF ftyp box with these brands. */
function ftyp(major: string, compatible: string[]): Buffer {
  return box(
    'ftyp',
    Buffer.concat([Buffer.from(major), Buffer.alloc(4), ...compatible.map((b) => Buffer.from(b))]),
  );
}

function box(type: string, content: Buffer, full = false): Buffer {
  const header = Buffer.alloc(full ? 12 : 8);
  header.writeUInt32BE(header.length + content.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, content]);
}

/** A minimal AVIF header: ftyp, then meta with pitm (item 1), ipco of ispe boxes and ipma. */
function avif(options: { sizes: [number, number][]; primary: number | null }): Buffer {
  const ispes = options.sizes.map(([w, h]) => {
    const size = Buffer.alloc(8);
    size.writeUInt32BE(w, 0);
    size.writeUInt32BE(h, 4);
    return box('ispe', size, true);
  });
  const children = [box('ipco', Buffer.concat(ispes))];
  const metaChildren: Buffer[] = [];
  if (options.primary !== null) {
    // pitm v0: item 1. ipma v0, 8-bit indexes: one entry, item 1, one association.
    metaChildren.push(box('pitm', Buffer.from([0, 1]), true));
    children.push(box('ipma', Buffer.from([0, 0, 0, 1, 0, 1, 1, 0x80 | options.primary]), true));
  }
  metaChildren.push(box('iprp', Buffer.concat(children)));
  return Buffer.concat([ftyp('avif', ['mif1', 'avif']), box('meta', Buffer.concat(metaChildren), true)]);
}
