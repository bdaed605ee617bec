/** Browser side of islands: finds the server's markers and hydrates each island with its props. */
import { type ComponentType, h, hydrate } from "preact";

/** Hydrates every island on the page from `registry` (island name to component). */
export function bootIslands(registry: Record<string, unknown>): void {
  const state = document.getElementById("__islands")?.textContent;
  const allProps: unknown[] = state ? JSON.parse(state) : [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_COMMENT);
  const found: Array<{ name: string; id: number; host: Element }> = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const match = /^island:([A-Za-z0-9_]+):([0-9]+)$/.exec((node as Comment).data);
    const host = node.nextSibling;
    if (match && host instanceof Element) {
      found.push({ name: match[1], id: Number(match[2]), host });
    }
  }
  for (const { name, id, host } of found) {
    const component = registry[name];
    if (typeof component !== "function") {
      console.error(`Island ${name} is not in the bundle`);
      continue;
    }
    hydrate(h(component as ComponentType<object>, allProps[id] as object), host);
  }
}
