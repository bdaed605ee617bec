/**
 * Islands: interactive parts of server-rendered pages, hydrated in the browser (as Fresh does).
 *
 * How it works:
 * - An island is a Preact component exported from a file in `islands/` under its own function
 *   name (`export function LinkFlow(props)`); files starting with `_` are helpers, not islands.
 *   Props must be JSON-safe.
 * - A page renders `<Island component={LinkFlow} props={...} />`. On the server it renders the
 *   component inside `<!--island:LinkFlow:0-->` ... `<!--/island:0-->` around a
 *   `display: contents` host element, and `renderPage` writes every island's props into one
 *   `<script type="application/json" id="__islands">` (with `<` escaped, so neither `</script`
 *   nor `<!--` can appear) plus `<script type="module" src="/static/islands.js">`.
 * - `/static/islands.js` is one bundle of every island plus `islands/_boot.ts`, built by
 *   `components/islands_bundle.ts` with `deno bundle --platform=browser` and cached in memory; the boot
 *   module finds the markers and calls Preact's `hydrate` on each host with its props.
 */
import { type ComponentType, createContext, type VNode } from "preact";
import { useContext } from "preact/hooks";

/** Islands rendered into one page, in document order. */
export interface IslandCollector {
  islands: Array<{ name: string; props: unknown }>;
}

/** Carries the page's collector down to each `Island` during server rendering. */
export const IslandContext = createContext<IslandCollector | null>(null);

/** Renders `component` on the server and marks it for hydration in the browser. */
export function Island<P extends object>(
  { component, props }: { component: ComponentType<P>; props: P },
): VNode {
  const collector = useContext(IslandContext);
  if (!collector) throw new Error("Cannot render an island outside renderPage()");
  const name = component.name;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new Error(`Cannot render an island without a plain function name: "${name}"`);
  }
  const id = collector.islands.push({ name, props }) - 1;
  const Component = component as ComponentType<P>;
  // The templates become comment markers in renderPage; Preact cannot emit comments itself.
  return (
    <>
      <template data-island-open={`${name}:${id}`} />
      <div data-island={String(id)} style="display:contents">
        <Component {...props} />
      </div>
      <template data-island-close={String(id)} />
    </>
  );
}

/** Turns the marker templates into the comment markers the boot module looks for. */
export function finishIslands(html: string): string {
  return html
    .replace(
      /<template data-island-open="([A-Za-z0-9_]+:[0-9]+)"><\/template>/g,
      "<!--island:$1-->",
    )
    .replace(/<template data-island-close="([0-9]+)"><\/template>/g, "<!--/island:$1-->");
}

/** The JSON props of every island, safe to place inside a script element. */
export function islandPropsScript(collector: IslandCollector): string {
  const json = JSON.stringify(collector.islands.map((island) => island.props))
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
  return `<script type="application/json" id="__islands">${json}</script>`;
}
