/**
 * Where a webhook URL may be sent: the URL rules (an endpoint is checked with them when it is
 * added, and again before every send) and the addresses its host resolves to, each checked by
 * `address_rules.ts`. Every address must pass: a name that resolves to one public and one private
 * address is refused, so which one a client would pick never matters. A refused name is answered
 * without its addresses (the reason is shown to the project's members and in its delivery log).
 */
import { abortable } from "../../core/deadline.ts";
import { addressProblem, isLoopback } from "./address_rules.ts";
import type { HostResolver } from "./runtime.ts";

/** Longest endpoint URL accepted, in characters. */
export const MAX_ENDPOINT_URL_LENGTH = 2_000;

/** What the rules need to know. */
export interface DestinationOptions {
  /** `WEBHOOKS_ALLOW_LOOPBACK`: loopback addresses (and `http://` to them) are allowed. */
  allowLoopback: boolean;
}

/**
 * Checks an endpoint URL as written: answers the parsed URL, or the problem (for the message
 * `url: <problem>`). `https://` only; `http://` only for a loopback receiver when loopback is
 * allowed (checked on its addresses by `resolveDestination`).
 */
export function parseEndpointUrl(text: unknown, options: DestinationOptions): URL | string {
  if (typeof text !== "string" || text.trim() === "") return "must be an https:// URL";
  const written = text.trim();
  if (written.length > MAX_ENDPOINT_URL_LENGTH) {
    return `must be at most ${MAX_ENDPOINT_URL_LENGTH} characters`;
  }
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    return "must be an https:// URL";
  }
  const http = url.protocol === "http:" && options.allowLoopback;
  if (url.protocol !== "https:" && !http) return "must be an https:// URL";
  if (url.username !== "" || url.password !== "") {
    return "must not contain a user name or password (verify the signature instead)";
  }
  if (url.hash !== "" || written.includes("#")) return "must not contain a #fragment";
  const literal = ipLiteral(url);
  if (literal !== null) {
    const problem = addressProblem(literal, options);
    if (problem) return `${literal} is ${problem}`;
  }
  return url;
}

/** Where one send goes: the addresses checked, in the order to try them. */
export type Destination = { addresses: string[] } | { refused: string };

/**
 * Resolves the URL's host (an IP literal is its own address) and checks every address; answers
 * them, or why the URL may not be sent to. A name that does not resolve rejects, like a network
 * error (it may resolve later).
 */
export async function resolveDestination(
  url: URL,
  options: DestinationOptions & { resolve: HostResolver; signal: AbortSignal },
): Promise<Destination> {
  const literal = ipLiteral(url);
  const addresses = literal !== null
    ? [literal]
    : await abortable(options.resolve(url.hostname, options.signal), options.signal);
  for (const address of addresses) {
    const problem = addressProblem(address, options);
    if (problem) {
      // A name's answer is never shown: it may come from our own network's resolver (an
      // internal name, or a public one pointed at it), which no signed-in wallet should read.
      return {
        refused: literal !== null
          ? `${address} is ${problem}`
          : `${url.hostname} does not resolve to a public address`,
      };
    }
  }
  if (url.protocol === "http:" && !addresses.every(isLoopback)) {
    return { refused: "http:// is only for a receiver on this machine: use https://" };
  }
  return { addresses };
}

// The URL's host when it is an IP address (IPv6 without its brackets), else null.
function ipLiteral(url: URL): string | null {
  const host = url.hostname;
  if (host.startsWith("[")) return host.slice(1, -1);
  return /^[\d.]+$/.test(host) ? host : null;
}
