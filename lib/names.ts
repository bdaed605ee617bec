/**
 * Text a developer or a client chooses that we show to people, place in signed messages or use
 * as an identifier (project and watch names, idempotency keys, the service's name).
 *
 * `.` and `..` are refused: they are the URL path segments that browsers and HTTP clients resolve
 * away, so a name or key placed in a path would reach another route, and a client that normalises
 * URLs could never read it back. Control characters (`\p{Cc}`) and format characters (`\p{Cf}`:
 * bidi overrides such as U+202E, zero-width spaces and joiners, the byte-order mark) are refused in
 * names: they are invisible or reorder what is shown around them, so a name could read as
 * something else on the linking page or in a message a player signs.
 */

/** True for `.` and `..`, which URL resolution removes from a path. */
export function isDotSegment(text: string): boolean {
  return text === "." || text === "..";
}

/** Why `name` cannot be a name shown to people, or null when it can. */
export function nameProblem(name: string): string | null {
  if (isDotSegment(name)) return "must not be . or ..";
  if (/[\p{Cc}\p{Cf}]/u.test(name)) {
    return "must not contain control or format characters (such as bidi overrides or zero-width characters)";
  }
  return null;
}
