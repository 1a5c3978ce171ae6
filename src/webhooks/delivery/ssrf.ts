/**
 * SSRF guard for receiver URLs (DESIGN.md "Security defaults"). Pure: no DNS here. The HTTP client
 * applies isBlockedAddress to every address a host name resolves to, at connect time, so a name that
 * later re-points at 127.0.0.1 is refused too; validateReceiverUrl is the early check at creation.
 *
 * The rule is an allowlist: IPv4 outside the special-purpose ranges below, IPv6 inside global
 * unicast 2000::/3 minus its special ranges. Addresses that embed an IPv4 address (IPv4-mapped
 * ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:AABB:CCDD::)
 * are judged by the IPv4 address they carry. Anything unparsable is blocked (fail closed).
 * Written by hand rather than with ipaddr.js, which is only a transitive dependency of fastify here.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** A range and what it is, as the refusal messages name it ("a loopback address"). */
type Range = readonly [prefix: number[], bits: number, kind: string];

/** IPv4 special-purpose ranges (IANA registry, RFC 6890 and successors). */
const BLOCKED_V4: readonly Range[] = [
  [[0, 0, 0, 0], 8, 'reserved'], // "this network"
  [[10, 0, 0, 0], 8, 'private'],
  [[100, 64, 0, 0], 10, 'carrier-grade NAT'],
  [[127, 0, 0, 0], 8, 'loopback'],
  [[169, 254, 0, 0], 16, 'link-local'], // incl. cloud metadata 169.254.169.254
  [[172, 16, 0, 0], 12, 'private'],
  [[192, 0, 0, 0], 24, 'reserved'], // IETF protocol assignments
  [[192, 0, 2, 0], 24, 'documentation'], // TEST-NET-1
  [[192, 88, 99, 0], 24, 'reserved'], // 6to4 relay anycast (deprecated)
  [[192, 168, 0, 0], 16, 'private'],
  [[198, 18, 0, 0], 15, 'benchmarking'],
  [[198, 51, 100, 0], 24, 'documentation'], // TEST-NET-2
  [[203, 0, 113, 0], 24, 'documentation'], // TEST-NET-3
  [[224, 0, 0, 0], 4, 'multicast'],
  [[240, 0, 0, 0], 4, 'reserved'], // incl. broadcast 255.255.255.255
];

/** IPv6 ranges inside 2000::/3 that are still not a public receiver (prefixes as 16 bytes). */
const BLOCKED_V6_IN_GLOBAL: readonly Range[] = [
  [[0x20, 0x01, 0x00, 0x00], 23, 'reserved'], // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT, AS112
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'documentation'],
  [[0x3f, 0xff, 0x00, 0x00], 20, 'documentation'], // RFC 9637
];

/** IPv6 ranges outside 2000::/3 the messages name; the rest of that space is 'reserved'. */
const NAMED_V6_OUTSIDE_GLOBAL: readonly Range[] = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'loopback'],
  [[0xfc], 7, 'private'], // unique local
  [[0xfe, 0x80], 10, 'link-local'],
  [[0xff], 8, 'multicast'],
];

function inCidr(bytes: number[], [prefix, bits]: Range): boolean {
  for (let i = 0; i < bits; i += 8) {
    const take = Math.min(8, bits - i);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((bytes[i / 8] & mask) !== ((prefix[i / 8] ?? 0) & mask)) return false;
  }
  return true;
}

export function parseIPv4(ip: string): number[] | null {
  if (!isIPv4(ip)) return null;
  return ip.split('.').map(Number);
}

/** 16 bytes of an IPv6 address; brackets and a zone id (%eth0) are ignored. */
export function parseIPv6(input: string): number[] | null {
  let s = input.replace(/^\[(.*)\]$/, '$1').split('%')[0];
  if (!isIPv6(s)) return null;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = parseIPv4(dotted[1])!;
    s = s.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t].map((g) => Number.parseInt(g, 16));
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** What kind of non-public IPv4 address this is, or null when it is public. */
function blockedV4Kind(b: number[]): string | null {
  return BLOCKED_V4.find((r) => inCidr(b, r))?.[2] ?? null;
}

function blockedV6Kind(b: number[]): string | null {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return blockedV4Kind(b.slice(12));
  if (zeros(0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0)
    return blockedV4Kind(b.slice(12));
  // NAT64 well-known prefix 64:ff9b::/96
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12))
    return blockedV4Kind(b.slice(12));
  // Everything else outside global unicast 2000::/3: ::, ::1, IPv4-compatible, 64:ff9b:1::/48,
  // discard 100::/64, unique local fc00::/7, link-local fe80::/10, site-local, multicast ff00::/8…
  if ((b[0] & 0xe0) !== 0x20) return NAMED_V6_OUTSIDE_GLOBAL.find((r) => inCidr(b, r))?.[2] ?? 'reserved';
  // 6to4 2002:AABB:CCDD::/48 carries the IPv4 address AA.BB.CC.DD
  if (b[0] === 0x20 && b[1] === 0x02) return blockedV4Kind(b.slice(2, 6));
  return BLOCKED_V6_IN_GLOBAL.find((r) => inCidr(b, r))?.[2] ?? null;
}

/**
 * Why a receiver must not be reached at this (resolved) address — 'loopback', 'private',
 * 'link-local' (cloud metadata included), … — or null when it is a public address. Unparsable
 * addresses are 'reserved' (fail closed).
 */
export function blockedAddressKind(ip: string): string | null {
  const v4 = parseIPv4(ip);
  if (v4) return blockedV4Kind(v4);
  const v6 = parseIPv6(ip);
  if (v6) return blockedV6Kind(v6);
  return 'reserved';
}

/** True when a receiver must not be reached at this (resolved) address. Unparsable = blocked. */
export function isBlockedAddress(ip: string): boolean {
  return blockedAddressKind(ip) !== null;
}

/** The first address of a resolution that must not be reached, if any. */
export function firstBlockedAddress(addresses: readonly string[]): string | undefined {
  return addresses.find(isBlockedAddress);
}

/**
 * A URL host as the checks compare it: brackets off an IPv6 literal, lowercase, one trailing dot
 * removed (`localhost.` is the fully-qualified spelling of `localhost`, and resolves the same).
 */
export function normaliseHost(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.$/, '');
}

/** The end of every private-target refusal (creation and connect time): what to do about it. */
export const PRIVATE_TARGET_ADVICE =
  'receivers must be reachable on the public internet (an operator can allow private targets with ' +
  'WEBHOOK_ALLOW_PRIVATE_TARGETS=1 for development).';

/**
 * The refusal of a non-public target: a literal address is named ("url points at 127.0.0.1, a
 * loopback address; receivers must …"); a resolved one only by its kind ("<host> resolves to a
 * loopback address; …"), so the messages a tenant reads never disclose what names resolve to inside
 * the operator's network.
 */
export function blockedTargetMessage(host: string, address: string): string {
  const kind = blockedAddressKind(address) ?? 'reserved';
  const what =
    normaliseHost(host) === normaliseHost(address)
      ? `url points at ${normaliseHost(address)}, a`
      : `${host} resolves to a`;
  return `${what} ${kind} address; ${PRIVATE_TARGET_ADVICE}`;
}

/** Longest receiver URL accepted; far beyond any real endpoint, short enough for logs. */
export const MAX_RECEIVER_URL_LENGTH = 2048;

export type ReceiverUrlCheck =
  | { ok: true; url: URL }
  | { ok: false; reason: 'invalid_url' | 'blocked_address'; message: string };

/**
 * Creation-time check of a receiver URL (the HTTP client repeats it before every POST): absolute
 * http(s) URL; https unless private targets are allowed (local development, tests); no user:password@;
 * literal-IP and localhost hosts (after normaliseHost) refused at once when they are not public. Other
 * names are resolved and checked by the console at creation (resolvesToBlocked, http-client.ts) and
 * again by the HTTP client at every connection.
 */
export function validateReceiverUrl(raw: string, opts: { allowPrivateTargets: boolean }): ReceiverUrlCheck {
  const bad = (message: string): ReceiverUrlCheck => ({ ok: false, reason: 'invalid_url', message });
  if (typeof raw !== 'string' || raw.length === 0)
    return bad('url is required, e.g. https://crm.example.com/hooks.');
  if (raw.length > MAX_RECEIVER_URL_LENGTH)
    return bad(`url must be at most ${MAX_RECEIVER_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return bad('url must be an absolute URL such as https://crm.example.com/hooks.');
  }
  const httpAllowed = opts.allowPrivateTargets;
  if (url.protocol !== 'https:' && !(httpAllowed && url.protocol === 'http:')) {
    return bad(
      httpAllowed
        ? 'url must start with https:// or http://.'
        : 'url must use https:// (plain http is refused).',
    );
  }
  if (url.username || url.password) {
    return bad(
      'url must not contain credentials (user:password@); receivers authenticate us by the signature.',
    );
  }
  if (!url.hostname) return bad('url must name a host.');
  if (opts.allowPrivateTargets) return { ok: true, url };
  const host = normaliseHost(url.hostname);
  const blocked = (message: string): ReceiverUrlCheck => ({ ok: false, reason: 'blocked_address', message });
  if (host === 'localhost' || host.endsWith('.localhost'))
    return blocked(`${host} is a loopback host name; ${PRIVATE_TARGET_ADVICE}`);
  if ((isIPv4(host) || isIPv6(host)) && isBlockedAddress(host))
    return blocked(blockedTargetMessage(host, host));
  return { ok: true, url };
}
