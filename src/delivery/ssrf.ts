/**
 * SSRF guard for webhook destinations (contract §6). A destination is refused when any address
 * it resolves to is private, loopback, link-local, CGNAT, documentation, benchmarking,
 * multicast, reserved or unspecified — IPv4, IPv6, and IPv4 embedded in IPv6 (mapped,
 * compatible, NAT64, 6to4). The same check runs at registration and inside the socket's own DNS
 * lookup at connect time, so a name cannot resolve to a public address for the check and a
 * private one for the connection (DNS rebinding).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { invalidField } from '../domain/errors.ts';

export interface DestinationPolicy {
  allowPrivate: boolean;
  allowHttp: boolean;
}

const V4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT (shared address space)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
] as const) {
  V4.addSubnet(net, prefix, 'ipv4');
}

const V6 = new BlockList();
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only
  // IETF protocol assignments: Teredo (2001::/32), benchmarking (2001:2::/48), ORCHID and the
  // rest; none is a destination a webhook could legitimately have.
  ['2001::', 23],
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // SRv6 segment identifiers (RFC 9602)
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): translates to private networks
  ['::ffff:0:0:0', 96], // IPv4-translated (RFC 2765), never globally routed
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  V6.addSubnet(net, prefix, 'ipv6');
}

/** An IPv6 address as 16 bytes (handles `::` and a trailing dotted quad). */
function ipv6Bytes(ip: string): number[] | undefined {
  let text = ip.split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    text =
      text.slice(0, -dotted[1]!.length) +
      `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  if (text.includes('::') ? missing < 0 : missing !== 0) return undefined;
  const groups = [
    ...headGroups,
    ...Array<string>(text.includes('::') ? missing : 0).fill('0'),
    ...tailGroups,
  ];
  const bytes: number[] = [];
  for (const group of groups) {
    const value = Number.parseInt(group, 16);
    if (Number.isNaN(value)) return undefined;
    bytes.push(value >> 8, value & 0xff);
  }
  return bytes;
}

const v4From = (b: number[], at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;

/** IPv4 addresses carried inside an IPv6 one, where the v6 form would route to them. */
function embeddedIpv4(bytes: number[]): string | undefined {
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4From(bytes, 12); // ::ffff:a.b.c.d
  if (zeros(0, 12)) return v4From(bytes, 12); // ::a.b.c.d (deprecated "compatible")
  if (
    bytes[0] === 0x00 &&
    bytes[1] === 0x64 &&
    bytes[2] === 0xff &&
    bytes[3] === 0x9b &&
    zeros(4, 12)
  ) {
    return v4From(bytes, 12); // 64:ff9b::/96 NAT64
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4From(bytes, 2); // 2002::/16 6to4
  return undefined;
}

export function isForbiddenAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return V4.check(ip, 'ipv4');
  if (family !== 6) return true; // not an address at all: refuse rather than guess
  const bytes = ipv6Bytes(ip);
  if (!bytes) return true;
  const v4 = embeddedIpv4(bytes);
  if (v4 !== undefined) return V4.check(v4, 'ipv4');
  return V6.check(ip.split('%')[0]!, 'ipv6');
}

export type LookupAll = (hostname: string) => Promise<LookupAddress[]>;

const systemLookupAll: LookupAll = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true } as LookupAllOptions, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

const MAX_URL_LENGTH = 2048;

/** Registration-time check; returns the parsed URL or throws a 400 naming `url`. */
export async function checkDestination(
  raw: string,
  policy: DestinationPolicy,
  lookupAll: LookupAll = systemLookupAll,
): Promise<URL> {
  if (raw.length > MAX_URL_LENGTH)
    throw invalidField('url', `must be at most ${MAX_URL_LENGTH} characters`);
  if (!URL.canParse(raw)) throw invalidField('url', 'must be an absolute URL');
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalidField('url', 'must use https');
  if (url.protocol === 'http:' && !policy.allowHttp) throw invalidField('url', 'must use https');
  if (url.username !== '' || url.password !== '')
    throw invalidField('url', 'must not contain credentials');
  if (policy.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // One answer whether the name does not resolve or resolves inside: two would let a caller
  // map which internal names exist by registering them.
  const refused = () => invalidField('url', 'must resolve to a public address');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await lookupAll(host)).map((a) => a.address);
    } catch {
      throw refused();
    }
  }
  if (addresses.length === 0 || addresses.some(isForbiddenAddress)) throw refused();
  return url;
}

/**
 * Connect-time check of a destination whose host is an IP address written out (Node does no
 * DNS lookup for one, so `guardedLookup` never sees it), and of its scheme: a destination
 * registered while private or plain-http destinations were allowed is refused once they are
 * not. Returns why the destination is refused, or null.
 */
export function refusedAtConnect(raw: string, policy: DestinationPolicy): string | null {
  const url = new URL(raw);
  if (url.protocol === 'http:' && !policy.allowHttp) {
    return `Refused to connect to ${url.host}: plain http destinations are not allowed`;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && isIP(host) && isForbiddenAddress(host)) {
    return `Refused to connect to ${host}: a private or reserved address`;
  }
  return null;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for the HTTP client's sockets: resolves, then refuses forbidden addresses before
 * the socket connects to them.
 */
export function guardedLookup(policy: DestinationPolicy) {
  return (hostname: string, options: unknown, callback: LookupCallback): void => {
    dnsLookup(
      hostname,
      options as LookupAllOptions,
      ((
        error: NodeJS.ErrnoException | null,
        address: string | LookupAddress[],
        family?: number,
      ) => {
        if (error) return callback(error, address, family);
        const all = Array.isArray(address) ? address.map((a) => a.address) : [address];
        if (!policy.allowPrivate && all.some(isForbiddenAddress)) {
          const refused = Object.assign(
            new Error(
              `Refused to connect to ${hostname}: resolves to a private or reserved address`,
            ),
            { code: 'ESSRF' },
          );
          return callback(refused, address, family);
        }
        callback(null, address, family);
      }) as never,
    );
  };
}
