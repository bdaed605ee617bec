// How a long base58 string (a wallet, a mint) is shortened on every page, server-rendered or in
// an island: `AbCd…WxYz`; short ones unchanged.

/** `AbCd…WxYz` for long base58 strings; short ones unchanged. */
export function shortAddress(text: string): string {
  return text.length > 12 ? `${text.slice(0, 4)}…${text.slice(-4)}` : text;
}
