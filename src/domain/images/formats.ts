/**
 * What a body is, read from its first bytes (magic numbers), never from its Content-Type: the
 * five formats we accept with their dimensions from their headers, and for anything else what it
 * looked like, so a partner reads "an HTML page titled 'Not Found'" rather than "invalid image".
 *
 * Why not the `image-size` package (the usual choice on npm, maintained, no native code): it
 * probes some twenty formats where we accept five, and each extra parser is code that reads bytes
 * from hosts anyone can name; three of its box-walking parsers (HEIF, JPEG XL, ICNS) looped
 * forever on crafted input in 2025-2026 (GHSA-m5qc-5hw7-8vg7, GHSA-5p2g-fcmc-qvqq,
 * GHSA-w3rx-r6r6-pgpr). Its JPEG walk knows three of the thirteen frame markers, its options are
 * global to the process, and it says nothing about what a non-image is. The five readers below
 * are short, every loop moves forward by at least one byte and stops at the end of the buffer,
 * and test/unit/image-classify.test.ts throws truncated and random bytes at them.
 */

export const IMAGE_FORMATS = ['jpeg', 'png', 'webp', 'avif', 'gif'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

export const FORMAT_NAMES: Record<ImageFormat, string> = {
  jpeg: 'JPEG',
  png: 'PNG',
  webp: 'WebP',
  avif: 'AVIF',
  gif: 'GIF',
};

/** What a body looks like when it is not an image we read. */
export type LooksLike = 'empty' | 'html' | 'json' | 'xml' | 'text' | 'pdf' | 'archive' | 'video' | 'binary';

export type Sniffed =
  | { kind: 'image'; format: ImageFormat; width: number; height: number }
  /** The signature of an accepted format, but no dimensions readable in what was read. */
  | { kind: 'unreadable'; format: ImageFormat; why: string }
  /** An image, in a format we do not accept (SVG, TIFF, HEIC...). */
  | { kind: 'unsupported'; name: string }
  | { kind: 'other'; looksLike: LooksLike; description: string };

type Dimensions = { width: number; height: number };
/** A reader's answer: the dimensions, or why there are none. */
type Read = Dimensions | string;
const SHORT = 'short';

/**
 * Reads `head`, the first bytes of a body. `complete` says whether the body ends there (so a
 * missing header means a truncated file rather than one whose header lies further on).
 */
export function sniff(head: Uint8Array, complete: boolean): Sniffed {
  const unreadable = (format: ImageFormat, read: Read): Sniffed => {
    if (typeof read !== 'string') return { kind: 'image', format, ...read };
    if (read !== SHORT) return { kind: 'unreadable', format, why: read };
    const why = complete
      ? `the file ends after ${head.length} bytes, before its ${HEADER[format]}`
      : `no ${HEADER[format]} in the first ${head.length} bytes`;
    return { kind: 'unreadable', format, why };
  };
  if (startsWith(head, [0xff, 0xd8, 0xff])) return unreadable('jpeg', jpeg(head));
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return unreadable('png', png(head));
  if (ascii(head, 0, 6) === 'GIF87a' || ascii(head, 0, 6) === 'GIF89a') return unreadable('gif', gif(head));
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WEBP') return unreadable('webp', webp(head));
  if (ascii(head, 4, 8) === 'ftyp') {
    const brands = ftypBrands(head);
    if (brands.includes('avif') || brands.includes('avis')) return unreadable('avif', avif(head));
    if (brands.some((b) => HEIF_BRANDS.has(b))) return { kind: 'unsupported', name: 'HEIC/HEIF' };
    if (brands.some((b) => b.startsWith('jxl'))) return { kind: 'unsupported', name: 'JPEG XL' };
    return { kind: 'other', looksLike: 'video', description: 'an MP4 or QuickTime video' };
  }
  return notAnImage(head);
}

const HEADER: Record<ImageFormat, string> = {
  jpeg: 'frame header (SOF)',
  png: 'IHDR header',
  gif: 'logical screen descriptor',
  webp: 'VP8/VP8L/VP8X header',
  avif: 'image size (ispe) property',
};

/**
 * JPEG: segments from the start of image, each `FF marker length`, until a frame header (SOF0 to
 * SOF15 but DHT, JPG and DAC, which share the range) gives height and width. The width and
 * height are as encoded: an EXIF orientation of 90° swaps them on screen, which is why the
 * thresholds (classify.ts) speak of the longer and shorter side.
 */
function jpeg(b: Uint8Array): Read {
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return `no segment marker at byte ${i}`;
    const marker = b[i + 1]!;
    // Fill bytes before a marker, and markers that stand alone (no length): TEM, RSTn, SOI.
    if (marker === 0xff) {
      i += 1;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2;
      continue;
    }
    if (marker === 0xd9) return 'it ends (EOI) before any frame header';
    if (marker === 0xda) return 'its scan starts before any frame header';
    const length = u16be(b, i + 2);
    if (length < 2) return `a segment at byte ${i} declares length ${length}`;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (i + 9 > b.length) return SHORT;
      return positive(u16be(b, i + 7), u16be(b, i + 5), 'its frame header');
    }
    i += 2 + length;
  }
  return SHORT;
}

/** PNG: the IHDR chunk comes first: length 13, then width and height (4 bytes each, big-endian). */
function png(b: Uint8Array): Read {
  if (b.length < 24) return SHORT;
  if (ascii(b, 12, 16) !== 'IHDR') return 'it does not start with its IHDR header';
  const width = u32be(b, 16);
  const height = u32be(b, 20);
  if (width > 0x7fffffff || height > 0x7fffffff) return 'its header declares a size over 2^31';
  return positive(width, height, 'its IHDR header');
}

/** GIF: the logical screen descriptor follows the signature (2 bytes each, little-endian). */
function gif(b: Uint8Array): Read {
  if (b.length < 10) return SHORT;
  return positive(u16le(b, 6), u16le(b, 8), 'its screen descriptor');
}

/** WebP: a RIFF file whose first chunk is lossy (VP8), lossless (VP8L) or extended (VP8X). */
function webp(b: Uint8Array): Read {
  if (b.length < 30) return SHORT;
  const chunk = ascii(b, 12, 16);
  if (chunk === 'VP8 ') {
    // Frame tag (3 bytes), start code 9D 01 2A, then 14-bit width and height (2 bits of scale).
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return 'its VP8 frame has no start code';
    return positive(u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff, 'its VP8 frame');
  }
  if (chunk === 'VP8L') {
    if (b[20] !== 0x2f) return 'its VP8L stream has no signature';
    const bits = u32le(b, 21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') return { width: 1 + u24le(b, 24), height: 1 + u24le(b, 27) };
  return `its first chunk, ${JSON.stringify(ascii(b, 12, 16))}, is none of VP8, VP8L or VP8X`;
}

const HEIF_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1', 'mif2']);

/** The major and compatible brands of an ISO-BMFF `ftyp` box. */
function ftypBrands(b: Uint8Array): string[] {
  const end = Math.min(u32be(b, 0), b.length);
  const brands = [ascii(b, 8, 12)];
  for (let i = 16; i + 4 <= end; i += 4) brands.push(ascii(b, i, i + 4));
  return brands;
}

/** One box of an ISO-BMFF file: its type and where its content lies (cut to what was read). */
interface Box {
  type: string;
  start: number;
  end: number;
}

/** The boxes between `from` and `to`. Every box moves the walk on by 8 bytes at least. */
function boxes(b: Uint8Array, from: number, to: number): Box[] {
  const found: Box[] = [];
  let i = from;
  while (i + 8 <= to) {
    let size = u32be(b, i);
    let header = 8;
    if (size === 1) {
      if (i + 16 > to) break;
      size = u32be(b, i + 8) * 2 ** 32 + u32be(b, i + 12);
      header = 16;
    } else if (size === 0) {
      size = to - i;
    }
    if (size < header) break;
    found.push({ type: ascii(b, i + 4, i + 8), start: i + header, end: Math.min(i + size, to) });
    i += size;
  }
  return found;
}

const child = (b: Uint8Array, parent: Box | undefined, type: string, skip = 0) =>
  parent && boxes(b, parent.start + skip, parent.end).find((box) => box.type === type);

/**
 * AVIF: meta → iprp → ipco holds the item properties; ipma says which belong to the primary item
 * (pitm); its `ispe` property is the image's width and height. A file without pitm or ipma gets
 * the first ispe. (An image sequence keeps its size in the primary item too; one with no image
 * item at all is reported unreadable.)
 */
function avif(b: Uint8Array): Read {
  const meta = boxes(b, 0, b.length).find((box) => box.type === 'meta');
  // meta, pitm, ipma and ispe are "full boxes": 1 byte of version and 3 of flags first.
  const iprp = child(b, meta, 'iprp', 4);
  const ipco = child(b, iprp, 'ipco');
  if (!ipco) return SHORT;
  const properties = boxes(b, ipco.start, ipco.end);
  const primary = primaryProperties(b, meta!, iprp!);
  const ispe =
    primary
      ?.map((index) => properties[index - 1])
      .find((box): box is Box => box !== undefined && box.type === 'ispe') ??
    properties.find((box) => box.type === 'ispe');
  if (!ispe) return 'it has no image size (ispe) property';
  if (ispe.start + 12 > ispe.end) return SHORT;
  return positive(u32be(b, ispe.start + 4), u32be(b, ispe.start + 8), 'its size property');
}

/** The 1-based ipco indexes of the primary item's properties, or null when not stated. */
function primaryProperties(b: Uint8Array, meta: Box, iprp: Box): number[] | null {
  const pitm = child(b, meta, 'pitm', 4);
  const ipma = child(b, iprp, 'ipma');
  if (!pitm || !ipma || pitm.start + 6 > pitm.end || ipma.start + 8 > ipma.end) return null;
  const item = b[pitm.start] === 0 ? u16be(b, pitm.start + 4) : u32be(b, pitm.start + 4);
  const version = b[ipma.start]!;
  const wide = (b[ipma.start + 3]! & 1) === 1;
  const entries = u32be(b, ipma.start + 4);
  let i = ipma.start + 8;
  for (let entry = 0; entry < entries && i < ipma.end; entry++) {
    const id = version < 1 ? u16be(b, i) : u32be(b, i);
    i += version < 1 ? 2 : 4;
    const count = b[i] ?? 0;
    i += 1;
    const indexes: number[] = [];
    for (let n = 0; n < count && i < ipma.end; n++) {
      indexes.push(wide ? u16be(b, i) & 0x7fff : b[i]! & 0x7f);
      i += wide ? 2 : 1;
    }
    if (id === item) return indexes;
  }
  return null;
}

/** What a body that is no image we read looks like. */
function notAnImage(b: Uint8Array): Sniffed {
  if (b.length === 0) return { kind: 'other', looksLike: 'empty', description: 'an empty body' };
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])) {
    return { kind: 'unsupported', name: 'TIFF' };
  }
  if (ascii(b, 0, 2) === 'BM' && b.length >= 14 && u32le(b, 6) === 0)
    return { kind: 'unsupported', name: 'BMP' };
  if (startsWith(b, [0x00, 0x00, 0x01, 0x00])) return { kind: 'unsupported', name: 'ICO' };
  if (startsWith(b, [0xff, 0x0a])) return { kind: 'unsupported', name: 'JPEG XL' };
  if (ascii(b, 0, 5) === '%PDF-') return { kind: 'other', looksLike: 'pdf', description: 'a PDF document' };
  if (startsWith(b, [0x1f, 0x8b]))
    return { kind: 'other', looksLike: 'archive', description: 'gzip-compressed data' };
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) {
    return { kind: 'other', looksLike: 'archive', description: 'a ZIP archive' };
  }
  const text = textStart(b);
  const lower = text.toLowerCase();
  if (/^<!doctype html|<html[\s>]|<head[\s>]|<body[\s>]/.test(lower)) {
    const title = /<title[^>]*>([^<]*)/i.exec(text)?.[1]?.replace(/\s+/g, ' ').trim();
    const titled = title ? ` titled ${JSON.stringify(title.slice(0, 80))}` : '';
    return { kind: 'other', looksLike: 'html', description: `an HTML page${titled}` };
  }
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg[^>]*>\s*)?<svg[\s>]/.test(lower)) {
    return { kind: 'unsupported', name: 'SVG' };
  }
  if (lower.startsWith('<')) return { kind: 'other', looksLike: 'xml', description: 'an XML document' };
  if (lower.startsWith('{') || lower.startsWith('[')) {
    return { kind: 'other', looksLike: 'json', description: 'a JSON document' };
  }
  if (isText(b)) return { kind: 'other', looksLike: 'text', description: 'plain text' };
  const first = [...b.subarray(0, 8)].map((x) => x.toString(16).padStart(2, '0')).join(' ');
  return { kind: 'other', looksLike: 'binary', description: `unrecognised binary data (starting ${first})` };
}

/** The first kilobyte as text, without a byte-order mark or leading white space. */
function textStart(b: Uint8Array): string {
  let from = startsWith(b, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  // UTF-16 text (a byte-order mark, then two bytes a character): its ASCII letters, read as such.
  if (startsWith(b, [0xff, 0xfe]) || startsWith(b, [0xfe, 0xff])) {
    const even = b[0] === 0xff ? 0 : 1;
    return Buffer.from(b.subarray(2, 2048).filter((_, i) => i % 2 === even))
      .toString('latin1')
      .trimStart();
  }
  while (from < b.length && from < 1024 && /\s/.test(String.fromCharCode(b[from]!))) from++;
  return Buffer.from(b.subarray(from, from + 1024)).toString('latin1');
}

/** No control characters but tab, line feed, form feed and carriage return in the first 512 bytes. */
function isText(b: Uint8Array): boolean {
  return b.subarray(0, 512).every((x) => x >= 0x20 || x === 0x09 || x === 0x0a || x === 0x0c || x === 0x0d);
}

function positive(width: number, height: number, where: string): Read {
  return width > 0 && height > 0 ? { width, height } : `${where} declares a width or height of 0`;
}

const startsWith = (b: Uint8Array, bytes: number[]) => bytes.every((x, i) => b[i] === x);
const ascii = (b: Uint8Array, from: number, to: number) =>
  from >= b.length ? '' : Buffer.from(b.subarray(from, to)).toString('latin1');
// Reads past the end give 0: each reader checks the length it needs before it trusts a value.
const at = (b: Uint8Array, i: number) => b[i] ?? 0;
const u16be = (b: Uint8Array, i: number) => (at(b, i) << 8) | at(b, i + 1);
const u16le = (b: Uint8Array, i: number) => at(b, i) | (at(b, i + 1) << 8);
const u24le = (b: Uint8Array, i: number) => at(b, i) | (at(b, i + 1) << 8) | (at(b, i + 2) << 16);
const u32be = (b: Uint8Array, i: number) => at(b, i) * 0x1000000 + ((at(b, i + 1) << 16) | u16be(b, i + 2));
const u32le = (b: Uint8Array, i: number) => u24le(b, i) + at(b, i + 3) * 0x1000000;
