import {
  addressKind,
  hostOf,
  isAllowedAddress,
  isLoopbackAddress,
  resolveHost,
} from '../../outbound/addresses.js';
import { fieldProblem } from '../errors.js';

export const MAX_URL_LENGTH = 2048;

const refuse = (message: string, code: string) => fieldProblem('VALIDATION_FAILED', 'url', message, code);

/**
 * Checks an endpoint URL when it is saved: https, no credentials or fragment, and a host whose
 * every address is public (docs/webhooks.md). The same address rule is applied again at every
 * connection (outbound/webhook-post.ts), so a name that changes its answer later gains nothing.
 * `allowPrivate` (WEBHOOK_ALLOW_PRIVATE) admits http and private addresses: tests and local
 * development only. `allowLoopback` (WEBHOOK_ALLOW_LOOPBACK, the demo) admits loopback addresses
 * only, with http, so a partner can try deliveries on its own machine and nothing else opens up.
 * Returns the URL as it will be called.
 */
export async function checkTarget(
  raw: string,
  allowPrivate: boolean,
  allowLoopback = false,
): Promise<string> {
  if (raw.length > MAX_URL_LENGTH) throw refuse(`is longer than ${MAX_URL_LENGTH} characters`, 'too_long');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not an absolute URL (https://host/path)', 'invalid_url');
  }
  // The URL parser would drop a tab or a line break and percent-encode a NUL: the URL kept would
  // not be the one sent (and `\r\n` in a URL is how header injection is tried). Refused instead.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
  const control = /[\u0000-\u0020\u007f-\u009f]|\p{Cs}/u.exec(raw);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    throw refuse(
      `must not contain spaces, control characters or unpaired surrogates (U+${code} at character ${control.index}); percent-encode them`,
      'invalid_url',
    );
  }
  const plainAllowed = allowPrivate || (allowLoopback && isLoopbackAddress(hostOf(url)));
  const loopbackName = allowLoopback && hostOf(url).toLowerCase() === 'localhost';
  if (url.protocol !== 'https:' && !((plainAllowed || loopbackName) && url.protocol === 'http:')) {
    throw refuse(`must use https (got ${url.protocol.replace(/:$/, '')})`, 'https_required');
  }
  if (url.username || url.password) {
    throw refuse(
      'must not carry credentials: deliveries are signed, verify the webhook-signature header instead',
      'credentials_in_url',
    );
  }
  if (url.hash) throw refuse('must not have a #fragment (it is never sent to the server)', 'fragment');
  const host = hostOf(url);
  let addresses: string[];
  try {
    addresses = await resolveHost(host);
  } catch (error) {
    throw refuse(`the host ${host} does not resolve (${(error as Error).message})`, 'unresolvable_host');
  }
  if (addresses.length === 0) throw refuse(`the host ${host} has no address`, 'unresolvable_host');
  if (url.protocol === 'http:' && !allowPrivate && !addresses.every(isLoopbackAddress)) {
    throw refuse(`must use https (got http): only loopback addresses take http here`, 'https_required');
  }
  if (!allowPrivate) {
    const refused = addresses.find((address) => !isAllowedAddress(address, { allowPrivate, allowLoopback }));
    if (refused) {
      const where = refused === host ? `${host} is` : `${host} resolves to ${refused},`;
      throw refuse(
        `${where} ${addressKind(refused)}; webhooks are delivered to public addresses only`,
        'forbidden_address',
      );
    }
  }
  return url.toString();
}
