import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may go. Only ordinary public unicast addresses: private (10/8, 172.16/12,
 * 192.168/16), loopback, link-local (169.254/16, with the cloud metadata service at
 * 169.254.169.254), carrier-grade NAT (100.64/10, Alibaba's metadata), unique-local (fc00::/7,
 * AWS's IPv6 metadata), multicast, documentation and reserved ranges are refused. Of the IPv6
 * forms that carry an IPv4 address, an IPv4-mapped one (::ffff:a.b.c.d) is judged as the IPv4
 * address inside; IPv4-compatible (::a.b.c.d), NAT64, 6to4 and Teredo ones are refused whatever
 * they carry (a relay could reach anything). ipaddr.js (Express's proxy-addr uses it) keeps the
 * table of special ranges.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  if (isIpv4Compatible(address)) return false;
  // process(): an IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 one inside.
  return ipaddr.process(address).range() === 'unicast';
}

/**
 * `::a.b.c.d` (::/96, "IPv4-compatible", deprecated by RFC 4291): IPv4 written as IPv6, which
 * ipaddr.js calls unicast, so `[::127.0.0.1]` would pass as public. None is a real public
 * address today: refused whatever the IPv4 address inside.
 */
function isIpv4Compatible(address: string): boolean {
  // ipaddr.js reads the dotted form `::8.8.8.8` as IPv4-mapped; the URL parser writes `::808:808`.
  if (/^::(?:\d{1,3}\.){3}\d{1,3}$/.test(address)) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() !== 'ipv6') return false;
  const parts = (parsed as ipaddr.IPv6).parts;
  return parts.slice(0, 6).every((p) => p === 0) && (parts[6] !== 0 || parts[7]! > 1);
}

/**
 * A loopback address (127/8, ::1, and IPv4 loopback written as mapped IPv6): what the demo admits
 * (WEBHOOK_ALLOW_LOOPBACK), so a partner can receive deliveries on its own machine.
 */
export function isLoopbackAddress(address: string): boolean {
  if (!ipaddr.isValid(address) || isIpv4Compatible(address)) return false;
  return ipaddr.process(address).range() === 'loopback';
}

/** Whether a delivery may go to this address under the service's settings. */
export function isAllowedAddress(
  address: string,
  allow: { allowPrivate: boolean; allowLoopback?: boolean | undefined },
): boolean {
  return (
    allow.allowPrivate ||
    isPublicAddress(address) ||
    (allow.allowLoopback === true && isLoopbackAddress(address))
  );
}

/** Why an address is refused, in words a partner understands. */
export function addressKind(address: string): string {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  if (isIpv4Compatible(address)) return 'an IPv4-compatible IPv6 address (IPv4 written as IPv6)';
  const range = ipaddr.process(address).range();
  const words: Record<string, string> = {
    private: 'a private network address',
    loopback: 'a loopback address',
    linkLocal: 'a link-local address (this range holds cloud metadata services)',
    uniqueLocal: 'a unique-local (private) IPv6 address',
    carrierGradeNat: 'a carrier-grade NAT address',
    unspecified: 'the unspecified address',
    multicast: 'a multicast address',
    broadcast: 'the broadcast address',
    reserved: 'a reserved address',
  };
  return words[range] ?? `a special-purpose address (${range})`;
}

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
  readonly code = 'EFORBIDDENADDRESS';
}

/** The host of a URL without IPv6 brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Every address a host name resolves to, or the IP literal itself. A name with no address (or a
 * lookup that fails or takes longer than `timeoutMs`) is an error saying so.
 */
export async function resolveHost(host: string, timeoutMs = 3000): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`looking up ${host} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    return found.map((entry) => entry.address);
  } finally {
    clearTimeout(timer);
  }
}
