/** A table cell that becomes a labelled row on a phone (`table.stack`). */
import type { ComponentChildren, VNode } from "preact";

/** One cell; its content is wrapped once so the phone layout keeps it in one grid column. */
export function Cell(
  { label, mono, children }: { label: string; mono?: boolean; children: ComponentChildren },
): VNode {
  return (
    <td data-label={label}>
      <div class={mono ? "mono" : undefined}>{children}</div>
    </td>
  );
}
