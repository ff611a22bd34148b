/**
 * The encodings a dealer system's CSV export comes in, and how the importer tells them apart:
 * UTF-8 (with or without a BOM), Windows-1252 (what Windows programs write: `€` is 0x80, `Š` 0x8A,
 * `Œ` 0x8C) and ISO-8859-15 (Latin-9: `€` is 0xA4, `Š` 0xA6, `Œ` 0xBC). The three agree on ASCII
 * and on the accented letters of Dutch and French (`ë` is 0xEB in both legacy ones); they differ on
 * 0x80–0x9F (letters and signs in Windows-1252, C1 control characters in ISO-8859-15) and on eight
 * bytes of 0xA4–0xBE.
 */
import { CliError } from './errors.js';

export type Encoding = 'utf-8' | 'windows-1252' | 'iso-8859-15';

/** What the report and the output call each encoding. */
export const ENCODING_NAME: Record<Encoding, string> = {
  'utf-8': 'UTF-8',
  'windows-1252': 'Windows-1252',
  'iso-8859-15': 'ISO-8859-15',
};

/** `--encoding` values, compared lowercase without spaces, `-` or `_`. */
const ENCODING_OPTION: Record<string, Encoding> = {
  utf8: 'utf-8',
  windows1252: 'windows-1252',
  cp1252: 'windows-1252',
  win1252: 'windows-1252',
  ansi: 'windows-1252',
  iso885915: 'iso-8859-15',
  latin9: 'iso-8859-15',
};

export function encodingOption(value: string): Encoding | undefined {
  return ENCODING_OPTION[value.toLowerCase().replace(/[\s_-]/g, '')];
}

export interface Decoded {
  text: string;
  encoding: Encoding;
  /** Why this encoding, when it was detected and not UTF-8 (for the output). */
  why?: string;
}

/**
 * The feed's bytes as text. `forced` (--encoding) wins. A BOM means UTF-8. Bytes that are valid
 * UTF-8 are UTF-8: a legacy file is almost never valid UTF-8 by accident (an "é" alone, 0xE9,
 * starts a 3-byte sequence that the next letters do not continue). Bytes that hold valid UTF-8
 * sequences and invalid bytes besides are refused (`refuseMixedUtf8`). Otherwise Windows-1252 or
 * ISO-8859-15, by the bytes where they differ (`legacyEncoding`).
 */
export function decode(bytes: Uint8Array, forced?: Encoding): Decoded {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const body = bom ? bytes.subarray(3) : bytes;
  if (forced === 'utf-8') return { text: strictUtf8(body, bom ? 3 : 0), encoding: forced };
  if (forced) return { text: decodeAs(body, forced), encoding: forced };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(body), encoding: 'utf-8' };
  } catch {
    refuseMixedUtf8(body, bom ? 3 : 0);
    const { encoding, why } = legacyEncoding(body);
    return { text: decodeAs(body, encoding), encoding, why };
  }
}

/**
 * A settings file's text (--map, --columns): UTF-8 without its byte order mark (Windows Notepad
 * writes one, which JSON.parse reports as a character nobody can see), never a U+FFFD put in.
 */
export function readUtf8Text(bytes: Uint8Array): string {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return strictUtf8(bom ? bytes.subarray(3) : bytes, bom ? 3 : 0);
}

/**
 * UTF-8 as named (a JSON feed, or --encoding utf-8): a byte that is not part of a UTF-8 character
 * is refused with where it is, never read as U+FFFD and sent (the service would keep it).
 */
function strictUtf8(bytes: Uint8Array, offset: number): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    let at = 0;
    while (at < bytes.length) {
      const length = bytes[at]! < 0x80 ? 1 : utf8Sequence(bytes, at);
      if (length === 0) break;
      at += length;
    }
    throw new CliError(
      `the feed is not UTF-8: byte ${hex(bytes[at] ?? 0)} at offset ${offset + at} is not part of a UTF-8 character; ` +
        'nothing was sent: convert the file to UTF-8, or name its encoding with --encoding (windows-1252 or iso-8859-15)',
    );
  }
}

/**
 * The length of the valid UTF-8 multi-byte sequence at `i` (2–4), or 0: a lead byte C2–F4 and the
 * continuation bytes 80–BF it calls for, without overlong forms, surrogates or code points past
 * U+10FFFF (E0 A0–BF, ED 80–9F, F0 90–BF, F4 80–8F for the second byte).
 */
function utf8Sequence(bytes: Uint8Array, i: number): number {
  const lead = bytes[i]!;
  const length =
    lead >= 0xc2 && lead <= 0xdf
      ? 2
      : lead >= 0xe0 && lead <= 0xef
        ? 3
        : lead >= 0xf0 && lead <= 0xf4
          ? 4
          : 0;
  if (length === 0 || i + length > bytes.length) return 0;
  const second = bytes[i + 1]!;
  const [low, high] =
    lead === 0xe0
      ? [0xa0, 0xbf]
      : lead === 0xed
        ? [0x80, 0x9f]
        : lead === 0xf0
          ? [0x90, 0xbf]
          : lead === 0xf4
            ? [0x80, 0x8f]
            : [0x80, 0xbf];
  if (second < low || second > high) return 0;
  for (let k = 2; k < length; k++) {
    const byte = bytes[i + k]!;
    if (byte < 0x80 || byte > 0xbf) return 0;
  }
  return length;
}

/**
 * Refuses bytes that are not UTF-8 but hold valid UTF-8 multi-byte sequences: a UTF-8 export with a
 * stray Windows-1252 byte. Read as Windows-1252 throughout, each UTF-8 `é` (C3 A9) would become
 * `Ã©` and `€` (E2 82 AC) `â‚¬`, which leave no C1 character for the row check to see, and would be
 * stored garbled. Bytes with no valid sequence are a legacy file, and are not refused. `offset`:
 * where `bytes` start in the file (after a BOM).
 */
function refuseMixedUtf8(bytes: Uint8Array, offset: number): void {
  let valid = 0;
  let invalid = 0;
  let first: number | undefined;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i]! < 0x80) continue;
    const length = utf8Sequence(bytes, i);
    if (length > 0) {
      valid++;
      i += length - 1;
    } else {
      invalid++;
      first ??= i;
    }
  }
  if (valid === 0 || first === undefined) return;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < first; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  throw new CliError(
    `the feed looks like UTF-8 (${valid} valid multi-byte ${valid === 1 ? 'character' : 'characters'}) ` +
      `with ${invalid} invalid ${invalid === 1 ? 'byte' : 'bytes'}: the first, ${hex(bytes[first]!)}, on line ${line} ` +
      `(byte ${first - lineStart + 1} of the line, ${offset + first} from the start of the file); read as ` +
      'Windows-1252 throughout, its UTF-8 letters would be garbled ("é" as "Ã©"), so nothing was sent: ' +
      'fix the file, or name its encoding with --encoding (utf-8, windows-1252 or iso-8859-15)',
  );
}

/**
 * Windows-1252's characters for 0x80–0x9F (`undefined`: the five bytes it leaves undefined, kept as
 * the C1 control character of the same number, as WHATWG decoders do).
 */
const CP1252_HIGH = [
  '€',
  undefined,
  '‚',
  'ƒ',
  '„',
  '…',
  '†',
  '‡',
  'ˆ',
  '‰',
  'Š',
  '‹',
  'Œ',
  undefined,
  'Ž',
  undefined,
  undefined,
  '‘',
  '’',
  '“',
  '”',
  '•',
  '–',
  '—',
  '˜',
  '™',
  'š',
  '›',
  'œ',
  undefined,
  'ž',
  'Ÿ',
];

/**
 * The text of `bytes` in `encoding`. Windows-1252 by a table of its own: Node.js 20's TextDecoder
 * reads 'windows-1252' as ISO-8859-1 (0x80 stays U+0080 instead of `€`); the rest of the range is
 * ISO-8859-1's in both.
 */
export function decodeAs(bytes: Uint8Array, encoding: Encoding): string {
  if (encoding !== 'windows-1252') return new TextDecoder(encoding).decode(bytes);
  let text = '';
  const CHUNK = 8192;
  for (let start = 0; start < bytes.length; start += CHUNK) {
    const chunk = bytes.subarray(start, start + CHUNK);
    text += String.fromCharCode(...chunk);
  }
  return text.replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80] ?? c);
}

/**
 * Bytes that are letters in ISO-8859-15 (Š š Œ œ Ÿ) and signs in Windows-1252 (¦ ¨ ¼ ½ ¾). Not
 * 0xB4 and 0xB8 (Ž ž, or ´ ¸): `Foto´s` is written with an acute accent for an apostrophe.
 */
const LATIN9_LETTERS = new Set([0xa6, 0xa8, 0xbc, 0xbd, 0xbe]);
/** The five bytes Windows-1252 leaves undefined (they decode to C1 controls in it too). */
const UNDEFINED_1252 = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);
const isLetter = (byte: number | undefined) =>
  byte !== undefined && ((byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte >= 0xc0);
const hex = (byte: number) => `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * Windows-1252 or ISO-8859-15, for bytes that are not UTF-8.
 * - A byte 0x80–0x9F that Windows-1252 defines (`€` 0x80, `Š` 0x8A, `Œ` 0x8C, `‚` `„` `…` `’`) is
 *   text only in Windows-1252: in ISO-8859-15 it is a C1 control character, which no feed holds.
 * - Otherwise 0xA4 (`€` in ISO-8859-15, `¤` in Windows-1252: a sign no feed writes), or one of
 *   Latin-9's letters Š š Œ œ Ÿ written next to a letter (`¦koda` is `Škoda`), is ISO-8859-15.
 * - Otherwise Windows-1252: the two then read the file the same way, but for signs (`½`, `´`).
 */
export function legacyEncoding(bytes: Uint8Array): { encoding: Encoding; why: string } {
  let latin9: number | undefined;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte >= 0x80 && byte <= 0x9f && !UNDEFINED_1252.has(byte)) {
      return {
        encoding: 'windows-1252',
        why: `not UTF-8, and byte ${hex(byte)} ("${CP1252_HIGH[byte - 0x80]}" in Windows-1252) is a control character in ISO-8859-15`,
      };
    }
    if (
      latin9 === undefined &&
      (byte === 0xa4 || (LATIN9_LETTERS.has(byte) && (isLetter(bytes[i - 1]) || isLetter(bytes[i + 1]))))
    ) {
      latin9 = byte;
    }
  }
  if (latin9 !== undefined) {
    const shown = new TextDecoder('iso-8859-15').decode(Uint8Array.of(latin9));
    return {
      encoding: 'iso-8859-15',
      why: `not UTF-8, no byte 0x80–0x9F, and byte ${hex(latin9)} reads as "${shown}" in ISO-8859-15`,
    };
  }
  return {
    encoding: 'windows-1252',
    why: 'not UTF-8 (read as Windows-1252, the encoding of Windows exports)',
  };
}

/** C1 control characters: a sign of a file read in the wrong encoding, never listing text. */
const C1 = /[\u0080-\u009f]/;

/**
 * Why a text cell cannot be sent: it still holds a C1 control character (U+0080–U+009F) after
 * decoding, as `Škoda` from a Windows-1252 file read as ISO-8859-15 holds U+008A. The reason names
 * the encoding used and the option that reads the file right.
 */
export function c1Reason(text: string, encoding: Encoding | undefined): string | undefined {
  const match = C1.exec(text);
  if (!match) return undefined;
  const code = `U+${match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  const read = encoding ? `the feed was read as ${ENCODING_NAME[encoding]}` : 'the feed holds it as it is';
  const others = (['windows-1252', 'utf-8', 'iso-8859-15'] as const).filter((e) => e !== encoding);
  const suggest = encoding
    ? `if it was written in another encoding, say which with ${others.map((e) => `--encoding ${e}`).join(' or ')}`
    : 'a JSON feed is UTF-8: check the system that wrote it';
  return `holds ${code}, a control character (at character ${match.index + 1}), which no listing text has: ${read}; ${suggest}`;
}
