import { BlockList, isIP } from 'node:net';

/**
 * Which IP addresses ingest_document may connect to. Only globally routable unicast is
 * allowed: loopback, private, shared (CGNAT), link-local, documentation, benchmarking,
 * multicast, reserved and tunnelling ranges are refused, IPv4 and IPv6 alike; an IPv6
 * address that embeds an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, NAT64
 * `64:ff9b::/96`) is judged by the IPv4 address it reaches. Cloud metadata endpoints are
 * refused even inside an operator-allowed range.
 */
export class AddressPolicy {
  private readonly allowed = new BlockList();

  /** @param allowedPrivateCidrs `address/prefix` ranges the operator opened (INGEST_ALLOWED_PRIVATE_CIDRS). */
  constructor(allowedPrivateCidrs: readonly string[] = []) {
    for (const cidr of allowedPrivateCidrs) {
      const [address, bits] = cidr.split('/');
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      this.allowed.addSubnet(address, Number(bits), family);
    }
  }

  /** `undefined` when `address` may be reached, else why not. */
  refusal(address: string): string | undefined {
    const ip = address
      .replace(/^\[|\]$/g, '')
      .replace(/%.*$/, '')
      .toLowerCase();
    const family = isIP(ip);
    if (family === 0) return `${address} is not an IP address`;
    const v4 = family === 4 ? ip : embeddedIpv4(ip);
    if (v4 !== undefined) {
      if (METADATA.check(v4, 'ipv4')) return `${address} is a cloud metadata address`;
      if (this.allowed.check(v4, 'ipv4')) return undefined;
      if (ip !== v4 && this.allowed.check(ip, 'ipv6')) return undefined;
      return NON_PUBLIC_V4.check(v4, 'ipv4') ? nonPublic(address) : undefined;
    }
    if (METADATA.check(ip, 'ipv6')) return `${address} is a cloud metadata address`;
    if (this.allowed.check(ip, 'ipv6')) return undefined;
    if (!GLOBAL_UNICAST_V6.check(ip, 'ipv6') || NON_PUBLIC_V6.check(ip, 'ipv6')) {
      return nonPublic(address);
    }
    return undefined;
  }
}

function nonPublic(address: string): string {
  return `${address} is not a public address (loopback, private, link-local or reserved)`;
}

function blockList(ranges: ReadonlyArray<[string, number]>, family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  for (const [address, bits] of ranges) list.addSubnet(address, bits, family);
  return list;
}

/** RFC 6890 and successors: IPv4 space that is not globally reachable unicast. */
const NON_PUBLIC_V4 = blockList(
  [
    ['0.0.0.0', 8], // "this network"
    ['10.0.0.0', 8], // private
    ['100.64.0.0', 10], // shared address space (CGNAT)
    ['127.0.0.0', 8], // loopback
    ['169.254.0.0', 16], // link-local, cloud metadata
    ['172.16.0.0', 12], // private
    ['192.0.0.0', 24], // IETF protocol assignments
    ['192.0.2.0', 24], // TEST-NET-1
    ['192.31.196.0', 24], // AS112
    ['192.52.193.0', 24], // AMT
    ['192.88.99.0', 24], // 6to4 relay anycast
    ['192.168.0.0', 16], // private
    ['192.175.48.0', 24], // AS112 direct delegation
    ['198.18.0.0', 15], // benchmarking
    ['198.51.100.0', 24], // TEST-NET-2
    ['203.0.113.0', 24], // TEST-NET-3
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, broadcast
  ],
  'ipv4',
);

/** IPv6 global unicast is 2000::/3; everything else (loopback, ULA, link-local, multicast...) is refused. */
const GLOBAL_UNICAST_V6 = blockList([['2000::', 3]], 'ipv6');

/** Non-global ranges inside 2000::/3. */
const NON_PUBLIC_V6 = blockList(
  [
    ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID
    ['2001:db8::', 32], // documentation
    ['2002::', 16], // 6to4: reaches an arbitrary IPv4 address
    ['3fff::', 20], // documentation (RFC 9637)
  ],
  'ipv6',
);

/** Instance-metadata endpoints of the common clouds: never reachable, whatever is allowed. */
const METADATA = (() => {
  const list = new BlockList();
  for (const address of [
    '169.254.169.254',
    '169.254.170.2',
    '169.254.169.253',
    '100.100.100.200',
    '168.63.129.16',
  ]) {
    list.addAddress(address, 'ipv4');
  }
  list.addAddress('fd00:ec2::254', 'ipv6');
  list.addAddress('fd00:ec2::23', 'ipv6');
  return list;
})();

/**
 * The IPv4 address an IPv6 address stands for: IPv4-mapped (`::ffff:0:0/96`),
 * IPv4-compatible (`::/96`, deprecated but still routed by some stacks) and NAT64
 * (`64:ff9b::/96`). `undefined` for any other IPv6 address.
 */
export function embeddedIpv4(ipv6: string): string | undefined {
  const words = ipv6Words(ipv6);
  if (!words) return undefined;
  const zeroes = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  const mapped = zeroes(0, 5) && words[5] === 0xffff;
  const compatible = zeroes(0, 6) && (words[6] !== 0 || words[7] > 1);
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && zeroes(2, 6);
  if (!mapped && !compatible && !nat64) return undefined;
  return [words[6] >> 8, words[6] & 0xff, words[7] >> 8, words[7] & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address (`::` expanded, a trailing dotted quad folded in). */
function ipv6Words(address: string): number[] | undefined {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const words = [...head, ...Array<string>(missing).fill('0'), ...tail].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => w >= 0 && w <= 0xffff) ? words : undefined;
}
