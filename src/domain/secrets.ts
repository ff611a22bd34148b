import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX = 'fc_';
const BODY_LENGTH = 40;
const CHECKSUM_LENGTH = 6;
const SECRET_PATTERN = /^fc_[0-9A-Za-z]{46}$/;
/** A test secret (docs/test-mode.md): told apart at a glance, by people and secret scanners alike. */
const TEST_PREFIX = 'fc_test_';
const TEST_SECRET_PATTERN = /^fc_test_[0-9A-Za-z]{46}$/;

function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/** Uniformly random base62 characters: bytes >= 248 are dropped so no character is favoured. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

const checksum = (body: string) => base62(crc32(body), CHECKSUM_LENGTH);

/**
 * A partner secret: `fc_`, 40 base62 characters of CSPRNG output (~238 bits), then a 6-character
 * CRC32 checksum of those 40. The fixed prefix and the checksum let secret scanners recognise a
 * leaked secret with no false positives, and let us reject a mistyped one without a database lookup.
 */
export function generateSecret(): string {
  const body = randomBase62(BODY_LENGTH);
  return `${PREFIX}${body}${checksum(body)}`;
}

/** A test secret: `fc_test_`, then a body and checksum made as a live secret's are. */
export function generateTestSecret(): string {
  const body = randomBase62(BODY_LENGTH);
  return `${TEST_PREFIX}${body}${checksum(body)}`;
}

/** A test secret's shape (whether well formed or not is isWellFormedSecret's question). */
export const isTestSecret = (secret: string): boolean => secret.startsWith(TEST_PREFIX);

export function isWellFormedSecret(secret: string): boolean {
  const prefix = isTestSecret(secret) ? TEST_PREFIX : PREFIX;
  if (!(prefix === TEST_PREFIX ? TEST_SECRET_PATTERN : SECRET_PATTERN).test(secret)) return false;
  const body = secret.slice(prefix.length, prefix.length + BODY_LENGTH);
  return checksum(body) === secret.slice(prefix.length + BODY_LENGTH);
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time comparison of two strings of any length (the length itself may leak). */
export function safeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}
