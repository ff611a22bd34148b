import type { FetchFailureCode, ImageFetchResult } from '../../outbound/image-fetch-result.js';
import { FORMAT_NAMES, type ImageFormat, type Sniffed, sniff } from './formats.js';

/**
 * An image's check: what a partner reads beside each image URL (docs/images.md). States and
 * problem codes are part of the contract: stable, snake_case, added to but never renamed.
 */
export const IMAGE_STATES = [
  'pending',
  'ok',
  'not_an_image',
  'too_small',
  'too_large',
  'unreachable',
] as const;
export type ImageState = (typeof IMAGE_STATES)[number];

/** Every problem code, with the state it belongs to and what it means (docs/images.md lists them). */
export const IMAGE_PROBLEMS = {
  empty_body: ['not_an_image', 'the server answered with an empty body'],
  html_page: ['not_an_image', 'the server sent an HTML page (an error or login page, often with status 200)'],
  unsupported_format: ['not_an_image', 'an image, in a format other than JPEG, PNG, WebP, AVIF or GIF'],
  unreadable_image: ['not_an_image', "an accepted format's signature, but its header is cut off or corrupt"],
  not_an_image: ['not_an_image', 'something else: JSON, XML, text, PDF, an archive, a video, unknown bytes'],
  too_small: ['too_small', 'below the minimum dimensions'],
  file_too_large: ['too_large', 'more bytes than the maximum file size'],
  dimensions_too_large: ['too_large', 'more pixels than the maximum dimensions'],
  invalid_url: ['unreachable', 'not an http or https URL (or a redirect led to one)'],
  forbidden_address: ['unreachable', 'the host is or resolves to a private, loopback or link-local address'],
  dns_failed: ['unreachable', 'the host name does not resolve'],
  connect_failed: ['unreachable', 'no connection to the host (refused, unreachable, reset)'],
  tls_failed: ['unreachable', 'the TLS handshake failed (expired, self-signed or mismatched certificate)'],
  timeout: ['unreachable', 'no complete answer in time'],
  not_found: ['unreachable', 'the server answered 404 or 410'],
  http_error: ['unreachable', 'the server answered another status than 2xx'],
  too_many_redirects: ['unreachable', 'more redirects than allowed'],
  bad_response: ['unreachable', 'the answer is not valid HTTP, or it was cut off'],
} as const satisfies Record<string, readonly [ImageState, string]>;
export type ImageProblemCode = keyof typeof IMAGE_PROBLEMS;

export interface ImageProblem {
  code: ImageProblemCode;
  message: string;
}

export interface ImageCheck {
  state: ImageState;
  /** When the check ran (ISO 8601); null while pending. */
  checkedAt: string | null;
  /** The format read from the bytes, whatever the Content-Type said. */
  format: ImageFormat | null;
  width: number | null;
  height: number | null;
  bytes: number | null;
  /** The Content-Type the server sent, as sent. */
  contentType: string | null;
  /** Why the image cannot be shown; null when ok or pending. */
  problem: ImageProblem | null;
}

/**
 * The thresholds. Sides are compared longer with longer and shorter with shorter, so a portrait
 * photo and an EXIF-rotated one are judged as the landscape one.
 */
export const IMAGE_LIMITS = {
  /**
   * At least 640 px on the longer side and 360 on the shorter: 640×480 (VGA) is the smallest
   * photo car marketplaces ask dealers for and what older dealer systems export, and 640×360 is
   * the same width at 16:9. eBay refuses photos under 500 px on the longer side. Below that is a
   * thumbnail (320×240, 160×120) that a listing's gallery, 800 px wide or more, would blow up.
   */
  minLongSide: 640,
  minShortSide: 360,
  /**
   * 20 MB: a 24-megapixel JPEG at high quality is 8 to 12 MB, so an honest photo fits twice over;
   * what is larger is a raw export or not a photo, and every byte of it crosses the network at
   * each check. The fetcher stops reading one byte past this.
   */
  maxBytes: 20_000_000,
  /**
   * 12,000 px a side and 120 megapixels: a 100-megapixel medium-format camera (11,648 × 8,736)
   * fits, and a resizer decoding to RGBA (480 MB at 120 megapixels) still bears it. A tiny file
   * declaring a huge canvas (a "pixel bomb") is stopped here, before anything decodes it.
   */
  maxSide: 12_000,
  maxPixels: 120_000_000,
} as const;
export type ImageLimits = { [K in keyof typeof IMAGE_LIMITS]: number };

/** The check of an image not yet looked at (or whose check was abandoned). */
export function pendingCheck(): ImageCheck {
  return {
    state: 'pending',
    checkedAt: null,
    format: null,
    width: null,
    height: null,
    bytes: null,
    contentType: null,
    problem: null,
  };
}

/** What classification needs of a body: its head and its size (outbound/image-fetch.ts). */
export interface BodyRead {
  head: Uint8Array;
  complete: boolean;
  bytes: number;
  overCap: boolean;
  contentType: string | null;
}

/** The check of one fetch: a failure is `unreachable`, a body is classified by its bytes. */
export function classifyFetch(
  result: ImageFetchResult,
  checkedAt: Date,
  limits: ImageLimits = IMAGE_LIMITS,
): ImageCheck {
  if (result.ok) return classifyBody(result, checkedAt, limits);
  if (result.failure === 'aborted') return pendingCheck();
  const code = failureProblem(result.failure, result.status);
  return problemCheck('unreachable', checkedAt, { contentType: null, bytes: null }, code, result.message);
}

/** The check of a body answered with a 2xx status. */
export function classifyBody(
  body: BodyRead,
  checkedAt: Date,
  limits: ImageLimits = IMAGE_LIMITS,
): ImageCheck {
  const seen = sniff(body.head, body.complete);
  const known = { contentType: body.contentType, bytes: body.bytes };
  if (seen.kind !== 'image') {
    const [code, message] = notAnImage(seen, body.contentType);
    return problemCheck('not_an_image', checkedAt, known, code, message);
  }
  const { format, width, height } = seen;
  const image = { ...known, format, width, height };
  const size = `${width}×${height}`;
  const name = FORMAT_NAMES[format];
  if (body.overCap || body.bytes > limits.maxBytes) {
    const atLeast = body.overCap && body.bytes === limits.maxBytes + 1 ? 'more than ' : '';
    const message = `the ${name} is ${atLeast}${megabytes(body.bytes)}; images may be at most ${megabytes(limits.maxBytes)}`;
    return problemCheck('too_large', checkedAt, image, 'file_too_large', message);
  }
  const long = Math.max(width, height);
  const short = Math.min(width, height);
  if (long > limits.maxSide || width * height > limits.maxPixels) {
    const message = `the ${name} is ${size} px; images may be at most ${limits.maxSide.toLocaleString('en')} px a side and ${limits.maxPixels / 1e6} megapixels`;
    return problemCheck('too_large', checkedAt, image, 'dimensions_too_large', message);
  }
  if (long < limits.minLongSide || short < limits.minShortSide) {
    const message = `the ${name} is ${size} px; images need at least ${limits.minLongSide} px on the longer side and ${limits.minShortSide} on the shorter`;
    return problemCheck('too_small', checkedAt, image, 'too_small', message);
  }
  return { state: 'ok', checkedAt: checkedAt.toISOString(), ...image, problem: null };
}

function problemCheck(
  state: ImageState,
  checkedAt: Date,
  found: {
    contentType: string | null;
    bytes: number | null;
    format?: ImageFormat;
    width?: number;
    height?: number;
  },
  code: ImageProblemCode,
  message: string,
): ImageCheck {
  return {
    state,
    checkedAt: checkedAt.toISOString(),
    format: found.format ?? null,
    width: found.width ?? null,
    height: found.height ?? null,
    bytes: found.bytes,
    contentType: found.contentType,
    problem: { code, message },
  };
}

function notAnImage(seen: Exclude<Sniffed, { kind: 'image' }>, contentType: string | null) {
  // Saying what the server claimed helps when it claimed an image: the URL looks right to a person.
  const claimed = contentType?.toLowerCase().startsWith('image/') ? `, though it said ${contentType}` : '';
  switch (seen.kind) {
    case 'unreadable':
      return ['unreadable_image', `the ${FORMAT_NAMES[seen.format]} cannot be read: ${seen.why}`] as const;
    case 'unsupported':
      return [
        'unsupported_format',
        `an image in ${seen.name} format; images must be JPEG, PNG, WebP, AVIF or GIF`,
      ] as const;
    case 'other': {
      if (seen.looksLike === 'empty')
        return ['empty_body', `the server sent an empty body${claimed}`] as const;
      const code = seen.looksLike === 'html' ? 'html_page' : 'not_an_image';
      return [code, `the server sent ${seen.description}, not an image${claimed}`] as const;
    }
  }
}

function failureProblem(
  failure: Exclude<FetchFailureCode, 'aborted'>,
  status: number | null,
): ImageProblemCode {
  switch (failure) {
    case 'invalid_url':
      return 'invalid_url';
    case 'refused_address':
      return 'forbidden_address';
    case 'dns':
      return 'dns_failed';
    case 'connect':
      return 'connect_failed';
    case 'tls':
      return 'tls_failed';
    case 'timeout':
      return 'timeout';
    case 'http_status':
      return status === 404 || status === 410 ? 'not_found' : 'http_error';
    case 'too_many_redirects':
      return 'too_many_redirects';
    case 'bad_response':
    case 'interrupted':
      return 'bad_response';
  }
}

/** Bytes in MB (10^6), one decimal: what a partner's file browser shows. */
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
