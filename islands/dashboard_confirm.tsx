// A submit button that asks before an action that cannot be undone (revoking a key, removing a
// watch). Without JavaScript the form posts directly; destructive project deletion has its own
// confirmation page instead.
import type { VNode } from "preact";

/** Props of the island (JSON-safe). */
export interface DashboardConfirmSubmitProps {
  label: string;
  question: string;
  /** Button classes, e.g. "secondary" or "danger". */
  className?: string;
  testId?: string;
  /** The id of the form it submits when it stands outside it, and the URL it posts to instead. */
  form?: string;
  formAction?: string;
}

/** A submit button guarded by the browser's confirm dialog. */
export function DashboardConfirmSubmit(props: DashboardConfirmSubmitProps): VNode {
  return (
    <button
      type="submit"
      class={props.className}
      data-testid={props.testId}
      form={props.form}
      formAction={props.formAction}
      onClick={(event) => {
        if (!confirm(props.question)) event.preventDefault();
      }}
    >
      {props.label}
    </button>
  );
}
