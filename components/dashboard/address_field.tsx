/** The dashboard's wallet-address input: required, typed or pasted as is (no autocomplete, no spellcheck). */
import type { VNode } from "preact";
import type { Flash } from "../../http/flash.ts";
import { fieldAria, FieldError } from "./field_error.tsx";

/**
 * A labelled address input named `name`, shown with `value` (the form's draft); with `refused`,
 * the problem the flash names for it is said under it.
 */
export function AddressField(
  { id, name, label, value, refused }: {
    id: string;
    name: string;
    label: string;
    value: string;
    refused?: { flash: Flash | null; form: string };
  },
): VNode {
  const field = refused && { ...refused, name };
  return (
    <>
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        required
        autocomplete="off"
        spellcheck={false}
        value={value}
        {...(field ? fieldAria(field) : {})}
      />
      {field && <FieldError {...field} />}
    </>
  );
}
