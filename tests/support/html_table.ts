/** Reading server-rendered pages in tests: a table's rows as text, a page's text without tags. */

/** The rows of the table with `data-testid="<id>"`, each as its cells' texts joined by ` | `. */
export function rowsOf(html: string, id: string): string[] {
  const table = html.match(new RegExp(`data-testid="${id}".*?</table>`, "s"))?.[0] ?? "";
  return [...table.matchAll(/<tr>(.*?)<\/tr>/gs)].slice(1).map((row) =>
    [...row[1]!.matchAll(/<td[^>]*>(.*?)<\/td>/gs)].map((cell) => plain(cell[1]!)).join(" | ")
  );
}

/** The page's text without tags, spaces collapsed. */
export function plain(html: string): string {
  return html.replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim();
}
