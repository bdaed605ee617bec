/**
 * Which addresses a webhook may be sent to: public unicast only. A developer chooses the URL, so
 * without these rules the service would POST, from inside its own network, to whatever that name
 * points at: the host itself, the private network, a cloud metadata service.
 *
 * The rules are applied to every address a name resolves to, each time a delivery is sent (a name
 * may be pointed elsewhere after it was registered), and the connection goes to the address that
 * was checked, never to a second resolution (`http_post.ts`). An IPv6 address that carries an IPv4
 * one (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged by that
 * IPv4 address, since that is where a packet to it ends up.
 *
 * Loopback is refused too unless `WEBHOOKS_ALLOW_LOOPBACK` is set (a sandbox whose receiver runs
 * on the same machine).
 */
import { ipv4Octets, ipv4OfGroups, ipv6Groups, mappedIpv4 } from "../../core/ip_address.ts";

/** A block of addresses no webhook goes to: its first address, prefix length, and what it is. */
type Block = readonly [first: string, prefix: number, what: string];

/** IPv4 blocks, the most specific first. */
const IPV4_BLOCKS: readonly Block[] = [
  ["169.254.169.254", 32, "a cloud metadata address"],
  ["168.63.129.16", 32, "a cloud metadata address"],
  ["0.0.0.0", 8, "an unspecified address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a shared (carrier-grade NAT) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "a reserved address"],
  ["192.0.2.0", 24, "a documentation address"],
  ["192.88.99.0", 24, "a reserved address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"],
];

/**
 * IPv6 blocks. Only global unicast (2000::/3) can be public, so everything outside it is refused;
 * these name the common cases and the reserved parts of 2000::/3.
 */
const IPV6_BLOCKS: readonly Block[] = [
  ["::", 128, "an unspecified address"],
  ["::1", 128, "a loopback address"],
  ["fd00:ec2::254", 128, "a cloud metadata address"],
  ["fc00::", 7, "a private (unique local) address"],
  ["fe80::", 10, "a link-local address"],
  ["ff00::", 8, "a multicast address"],
  ["2001:db8::", 32, "a documentation address"],
  ["2001::", 23, "a reserved address"],
  ["3fff::", 20, "a documentation address"],
];

const LOOPBACK = "a loopback address";

/** Options of the rules. */
export interface AddressRuleOptions {
  /** Loopback is allowed (`WEBHOOKS_ALLOW_LOOPBACK`): a receiver on the same machine. */
  allowLoopback: boolean;
}

/**
 * Why no webhook may go to `address` (an IP literal): what it is ("a private address"), or null
 * when it may. Anything that is not an IP address is refused too.
 */
export function addressProblem(address: string, options: AddressRuleOptions): string | null {
  const what = addressKind(address);
  return what === LOOPBACK && options.allowLoopback ? null : what;
}

/** True when `address` is a loopback address (127.0.0.0/8, ::1, or IPv4-mapped loopback). */
export function isLoopback(address: string): boolean {
  return addressKind(address) === LOOPBACK;
}

// What kind of forbidden address `address` is, or null for public unicast.
function addressKind(address: string): string | null {
  const v4 = ipv4Octets(address);
  if (v4) return ipv4Kind(v4);
  const groups = ipv6Groups(address);
  if (!groups) return "not an IP address";
  const inner = carriedIpv4(groups);
  if (inner) return ipv4Kind(inner);
  const value = groups.reduce((n, g) => (n << 16n) | BigInt(g), 0n);
  const named = kindIn(value, 128, IPV6_BLOCKS, (first) => ipv6Groups(first)!);
  if (named) return named;
  return value >> 125n === 1n ? null : "a reserved address";
}

// The IPv4 address an IPv6 one delivers to: IPv4-mapped, NAT64 (64:ff9b::/96), 6to4 (2002::/16).
function carriedIpv4(groups: readonly number[]): number[] | null {
  const mapped = mappedIpv4(groups);
  if (mapped) return mapped;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b &&
    groups.slice(2, 6).every((g) => g === 0);
  if (nat64) return ipv4OfGroups(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return ipv4OfGroups(groups[1]!, groups[2]!);
  return null;
}

function ipv4Kind(octets: readonly number[]): string | null {
  const value = octets.reduce((n, o) => (n << 8n) | BigInt(o), 0n);
  return kindIn(value, 32, IPV4_BLOCKS, (first) => ipv4Octets(first)!);
}

// What the first block holding `value` is (`parts` reads a block's first address), or null.
function kindIn(
  value: bigint,
  bits: 32 | 128,
  blocks: readonly Block[],
  parts: (first: string) => number[],
): string | null {
  const unit = BigInt(bits === 32 ? 8 : 16);
  for (const [first, prefix, what] of blocks) {
    const start = parts(first).reduce((n, p) => (n << unit) | BigInt(p), 0n);
    const shift = BigInt(bits - prefix);
    if (value >> shift === start >> shift) return what;
  }
  return null;
}
