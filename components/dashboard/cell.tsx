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

/** The head of a list table: its columns, then the actions' column, named for screen readers. */
export function ListHead({ columns }: { columns: readonly string[] }): VNode {
  return (
    <thead>
      <tr>
        {columns.map((column) => <th key={column}>{column}</th>)}
        <th>
          <span class="visually-hidden">Actions</span>
        </th>
      </tr>
    </thead>
  );
}
