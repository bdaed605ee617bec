/** The dashboard's wallet-address input: required, typed or pasted as is (no autocomplete, no spellcheck). */
import type { VNode } from "preact";

/** A labelled address input named `name`, shown with `value` (the form's draft). */
export function AddressField(
  { id, name, label, value }: { id: string; name: string; label: string; value: string },
): VNode {
  return (
    <>
      <label for={id}>{label}</label>
      <input id={id} name={name} required autocomplete="off" spellcheck={false} value={value} />
    </>
  );
}
