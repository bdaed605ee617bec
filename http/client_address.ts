/**
 * Which client a request comes from, for the abuse limits (`lib/quota/abuse_limits.ts`): an
 * identity the client cannot choose.
 *
 * Behind proxies (`CLIENT_IP_HEADER`), each proxy appends the address it received the request
 * from to the header, after whatever the client wrote there itself. So only the entries our own
 * proxies added can be trusted, and they are the last ones: the client is the entry
 * `CLIENT_IP_TRUSTED_HOPS` places from the end (the one the outermost of our proxies added). A
 * header with fewer entries than that was written by our proxies alone, so its first entry is the
 * client. Without the header (or the setting) the client is the connection's address.
 *
 * An IPv6 client is counted per /64: one host is usually given a whole /64, so counting each
 * address would give it 2^64 identities. An IPv4 address written as IPv6 (`::ffff:a.b.c.d`) is
 * that IPv4 address. Entries may carry a port (`1.2.3.4:5678`, `[2001:db8::1]:443`) or be RFC 7239
 * `Forwarded` elements (`for="[2001:db8::1]:443";proto=https`).
 */
import type { Context } from "hono";
import type { AppContext } from "../lib/context.ts";

/** The requesting client: an IPv4 address, an IPv6 /64 (`2001:db8:0:1::/64`), or what the proxy wrote. */
export function clientAddress(ctx: AppContext, c: Context): string {
  const header = ctx.config.clientIpHeader;
  const entries = header ? headerEntries(c.req.header(header)) : [];
  if (entries.length > 0) {
    const hops = ctx.config.clientIpTrustedHops;
    return clientKey(entries[Math.max(0, entries.length - hops)]!);
  }
  const info = c.env as Partial<Deno.ServeHandlerInfo<Deno.NetAddr>> | undefined;
  const hostname = info?.remoteAddr?.hostname;
  return hostname ? clientKey(hostname) : "unknown";
}

// The header's entries, in order, without empty ones (a header repeated is joined with commas).
function headerEntries(value: string | undefined): string[] {
  if (!value) return [];
  return value.split(",").map((entry) => forwardedFor(entry.trim())).filter((e) => e !== "");
}

// `for=` of an RFC 7239 element, unquoted; any other entry as it is.
function forwardedFor(entry: string): string {
  const match = /(?:^|;)\s*for=("[^"]*"|[^;]*)/i.exec(entry);
  if (!match) return entry;
  return match[1]!.replace(/^"|"$/g, "").trim();
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

// The key an entry is counted under.
function clientKey(entry: string): string {
  const host = withoutPort(entry);
  if (IPV4.test(host)) return host;
  const groups = ipv6Groups(host);
  if (!groups) return entry;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

// `[v6]:port` and `[v6]` to `v6`; `v4:port` to `v4`; a bare IPv6 address (several colons) stays.
function withoutPort(entry: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(entry);
  if (bracketed) return bracketed[1]!;
  const v4WithPort = /^([\d.]+):\d+$/.exec(entry);
  return v4WithPort ? v4WithPort[1]! : entry;
}

// The eight 16-bit groups of an IPv6 address (zone dropped), or null when it is not one. The URL
// parser validates it and writes any embedded IPv4 part as two groups.
function ipv6Groups(host: string): number[] | null {
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
