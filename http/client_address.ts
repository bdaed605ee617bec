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
import { ipv4Octets, ipv6Groups, mappedIpv4 } from "../core/ip_address.ts";

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

// The key an entry is counted under.
function clientKey(entry: string): string {
  const host = withoutPort(entry);
  if (ipv4Octets(host)) return host;
  const groups = ipv6Groups(host);
  if (!groups) return entry;
  const mapped = mappedIpv4(groups);
  if (mapped) return mapped.join(".");
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

// `[v6]:port` and `[v6]` to `v6`; `v4:port` to `v4`; a bare IPv6 address (several colons) stays.
function withoutPort(entry: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(entry);
  if (bracketed) return bracketed[1]!;
  const v4WithPort = /^([\d.]+):\d+$/.exec(entry);
  return v4WithPort ? v4WithPort[1]! : entry;
}
