// A copy-to-clipboard button beside a value the developer needs elsewhere (an API key, a URL).
// Without JavaScript the value stays selectable text; the button only appears once hydrated.
import type { VNode } from "preact";
import { useEffect, useState } from "preact/hooks";

/** Props of the island (JSON-safe). */
export interface DashboardCopyButtonProps {
  text: string;
  /** What is copied, for screen readers: "Copy API key". */
  label: string;
}

/** A button that copies `text` and says so. */
export function DashboardCopyButton(props: DashboardCopyButtonProps): VNode {
  const [ready, setReady] = useState(false);
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => setReady(true), []);

  async function copy() {
    try {
      await navigator.clipboard.writeText(props.text);
      setState("copied");
    } catch {
      setState("failed");
    }
    setTimeout(() => setState("idle"), 2_000);
  }

  return (
    <span>
      <button
        type="button"
        class="secondary copy"
        hidden={!ready}
        aria-label={props.label}
        data-testid="copy-button"
        onClick={copy}
      >
        {state === "copied" ? "Copied" : state === "failed" ? "Select and copy" : "Copy"}
      </button>
      <span class="visually-hidden" aria-live="polite">
        {state === "copied" ? "Copied to the clipboard" : ""}
      </span>
    </span>
  );
}
