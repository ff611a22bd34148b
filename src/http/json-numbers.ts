/**
 * What a double keeps of a JSON number (the body boundary's check, src/http/json-body.ts): the
 * number taken apart by hand and held to the double it becomes. Pure; no request in sight.
 */

/** Significant digits a double needs to name any double exactly (17; shortest forms need fewer). */
const DOUBLE_DIGITS = 17;
/** Below this (in magnitude) a double holds fewer digits, down to one at 5e-324. */
const MIN_NORMAL = 2.2250738585072014e-308;

/**
 * A JSON number becomes a double (JSON.parse, then the database's numeric or jsonb). Refused,
 * naming where (src/http/json-body.ts), is a number the double would not keep as sent:
 * - past ±1.8e308 (it became Infinity), or nearer zero than 5e-324 (1e-400 became 0);
 * - a whole number past 2^53 other than the double's own digits (a dealer system's 20-digit id
 *   in metadata, 12345678901234567891, became 12345678901234567000): a client that reads whole
 *   numbers exactly would read another one back. 18446744073709552000, as JavaScript and Go
 *   write 2^64, is taken;
 * - more than 17 significant digits (19.990000000000000001, a decimal type's): a double holds no
 *   more, and whether longer digits are a double's exact expansion took a toPrecision each, a
 *   hostile body's 250,000 of them a third of a second;
 * - below 2.2e-308, digits a double that small does not have (1.2345678e-320 became 1.2347e-320);
 *   its own are taken, as Java writes 5e-324 (4.9E-324) or C#'s G17.
 * Otherwise up to 17 digits is the double nearest them: how JSON libraries write doubles, so what
 * a partner read back and sends again is the same value. Why `token` is not kept, or null. Called
 * for a number of more than 15 characters or with an exponent only; linear in its length.
 */
export function notHeld(token: string): string | null {
  const value = Number(token);
  const size = Math.abs(value);
  // Up to 15 characters hold at most 14 digits: only a zero or a size out of range can be wrong.
  if (token.length <= 15 && Number.isFinite(value) && size >= MIN_NORMAL) return null;
  // Not JSON (`-`, `1.`, `01`): JSON.parse says so, with the position.
  const sent = decimal(token);
  if (!sent) return null;
  if (!Number.isFinite(value)) return 'is beyond ±1.8e308, the largest a number here can be';
  if (sent.count === 0) return null; // a zero, however written
  if (value === 0) return 'is nearer zero than 5e-324, the smallest a number here can be (it would become 0)';
  if (sent.whole && size > Number.MAX_SAFE_INTEGER) {
    if (sameDecimal(sent, String(size))) return null;
    return `is a whole number past 2^53 that a number here holds only as ${value}; send it as a string`;
  }
  if (sent.count <= DOUBLE_DIGITS && size >= MIN_NORMAL) return null;
  if (size < MIN_NORMAL && sent.count <= 15) {
    // The digits sent are the double's own when they are the nearest of their length to it: its
    // value scaled so that they read as a whole number lies within 0.5 of them. In floating point
    // (toPrecision cost a hostile body of 580,000 such numbers a fifth of a second); only a value
    // so near 0.5 that rounding could decide is left to toPrecision below.
    const scaled = size * 1e300 * 10 ** (sent.count - sent.magnitude - 300);
    const off = Math.abs(digitsValue(sent) - scaled);
    const margin = scaled * 2e-15; // four times the few ulp the two products may be off
    if (off < 0.5 - margin) return null;
    if (off > 0.5 + margin) return nearZero(value);
  }
  // Near zero, up to 17 digits (as C#'s G17 writes 5e-324: 4.9406564584124654E-324).
  if (sent.count <= DOUBLE_DIGITS && sameDecimal(sent, size.toPrecision(sent.count))) return null;
  return size < MIN_NORMAL
    ? nearZero(value)
    : `has more significant digits than a number here holds (${DOUBLE_DIGITS}); it would become ${value}`;
}

const nearZero = (value: number) =>
  `is so near zero that a number here cannot keep these digits (it would become ${value})`;

/** A decimal's significant digits as a whole number (exact up to 15 of them). */
function digitsValue(d: Decimal): number {
  let n = 0;
  for (let i = d.first; i <= d.last; i++) {
    const c = d.text.charCodeAt(i);
    if (c !== 0x2e) n = n * 10 + c - 0x30;
  }
  return n;
}

interface Decimal {
  text: string;
  /** Where its significant digits are (none before the first or after the last that is not a
   * zero): from `first` through `last` in `text`, the point between them skipped. */
  first: number;
  last: number;
  /** How many: 0 for a zero. */
  count: number;
  /** The power of ten of the first of them. */
  magnitude: number;
  /** Written as a whole number: no fraction, no exponent. */
  whole: boolean;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/**
 * A JSON number (or what String and toPrecision write: an exponent may carry `+`) taken apart,
 * null if it is none. By hand, in one pass, building no string: a regular expression, its match
 * and the digits as strings cost a hostile body of 580,000 numbers most of its time, and /0+$/
 * on a run of zeros is quadratic.
 */
function decimal(text: string): Decimal | null {
  const n = text.length;
  let i = text.charCodeAt(0) === 0x2d ? 1 : 0;
  const wholeStart = i;
  while (i < n && isDigit(text.charCodeAt(i))) i++;
  const wholeEnd = i;
  if (wholeEnd === wholeStart || (text.charCodeAt(wholeStart) === 0x30 && wholeEnd - wholeStart > 1))
    return null;
  let fractionStart = i;
  if (i < n && text.charCodeAt(i) === 0x2e) {
    fractionStart = ++i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    if (i === fractionStart) return null;
  }
  const fractionEnd = i;
  let exponent = 0;
  if (i < n && (text.charCodeAt(i) === 0x65 || text.charCodeAt(i) === 0x45)) {
    const negative = text.charCodeAt(++i) === 0x2d;
    if (negative || text.charCodeAt(i) === 0x2b) i++;
    const digitsFrom = i;
    // Held to 1e9: past that no number is finite or non-zero, whatever its digits.
    for (let c = text.charCodeAt(i); i < n && isDigit(c); c = text.charCodeAt(++i)) {
      if (exponent < 1e9) exponent = exponent * 10 + c - 0x30;
    }
    if (i === digitsFrom) return null;
    if (negative) exponent = -exponent;
  }
  if (i !== n) return null;
  const whole = i === wholeEnd;
  // The first significant digit, in the whole part or else the fraction; the last, the other way.
  let first = wholeStart;
  while (first < wholeEnd && text.charCodeAt(first) === 0x30) first++;
  let magnitude = wholeEnd - first + exponent;
  if (first === wholeEnd) {
    first = fractionStart;
    while (first < fractionEnd && text.charCodeAt(first) === 0x30) first++;
    magnitude = fractionStart - first + exponent;
  }
  let last = fractionEnd - 1;
  while (last >= first && (text.charCodeAt(last) === 0x30 || text.charCodeAt(last) === 0x2e)) last--;
  if (last < first) return { text, first, last, count: 0, magnitude: 0, whole };
  const pointBetween = fractionStart > wholeEnd && first < wholeEnd && last >= fractionStart;
  return { text, first, last, count: last - first + 1 - (pointBetween ? 1 : 0), magnitude, whole };
}

/** Whether `sent` is the number `written` (as String or toPrecision write one) names. */
function sameDecimal(sent: Decimal, written: string): boolean {
  const held = decimal(written);
  if (held === null || held.count !== sent.count || held.magnitude !== sent.magnitude) return false;
  for (let i = sent.first, j = held.first, k = 0; k < sent.count; i++, j++, k++) {
    if (sent.text.charCodeAt(i) === 0x2e) i++;
    if (held.text.charCodeAt(j) === 0x2e) j++;
    if (sent.text.charCodeAt(i) !== held.text.charCodeAt(j)) return false;
  }
  return true;
}
