/**
 * IP address literals: IPv4 dotted quads and IPv6 groups. The client address of the abuse limits
 * (`http/client_address.ts`) and the webhook address rules (`lib/webhooks/address_rules.ts`) read
 * addresses the same way.
 */

// Four decimal octets without leading zeros: `010.0.0.1` (octal to some parsers) is not one.
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** The four octets of a dotted IPv4 address, or null when `text` is not one. */
export function ipv4Octets(text: string): number[] | null {
  return IPV4.test(text) ? text.split(".").map(Number) : null;
}

/**
 * The eight 16-bit groups of an IPv6 address (zone dropped), or null when it is not one. The URL
 * parser validates it and writes any embedded IPv4 part as two groups.
 */
export function ipv6Groups(host: string): number[] | null {
  if (!host.includes(":")) return null;
  let canonical: string;
  try {
    canonical = new URL(`http://[${host.replace(/%.*$/, "")}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head = "", tail] = canonical.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const zeros = Array<string>(8 - left.length - right.length).fill("0");
  return [...left, ...(tail === undefined ? [] : zeros), ...right].map((g) => parseInt(g, 16));
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) stands for, or null. */
export function mappedIpv4(groups: readonly number[]): number[] | null {
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  return mapped ? ipv4OfGroups(groups[6]!, groups[7]!) : null;
}

/** The IPv4 octets held in two 16-bit groups. */
export function ipv4OfGroups(high: number, low: number): number[] {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff];
}
