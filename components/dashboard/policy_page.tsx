/** A project's transaction policy form: per-transaction maxima, allowed mints, hourly limits. */
import type { VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import { SOL_ASSET } from "../../lib/tx/request/policy.ts";
import { type TxPolicy } from "../../kv/policy.ts";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { projectPath } from "../../http/dashboard_paths.ts";
import { policyFormValues, rowCount } from "../../lib/projects/policy_form.ts";
import { fieldAria, FieldError } from "./field_error.tsx";
import type { TokenLabel } from "../../lib/chain/token_labels.ts";

/** What the policy page shows. */
interface PolicyPageData extends FrameData {
  project: Project;
  policy: TxPolicy;
  /** The labels (symbol, decimals) of the policy's mints that could be read. */
  tokenLabels: ReadonlyMap<string, TokenLabel>;
}

/** `GEM, 6 decimals` (or just the decimals) under a mint the chain describes. */
function MintLabel({ label }: { label: TokenLabel | undefined }): VNode | null {
  if (!label) return null;
  const decimals = `${label.decimals} decimal${label.decimals === 1 ? "" : "s"}`;
  return (
    <p class="hint" data-testid="mint-label">
      {label.symbol ? `${label.symbol}, ${decimals}` : decimals}
    </p>
  );
}

const BLANK_ROWS = 2;

/** The policy page body. */
export function PolicyPage(data: PolicyPageData): VNode {
  const { project, flash } = data;
  const refused = flash?.form === "policy" && flash.kind === "error" && flash.draft;
  const values: Record<string, unknown> = refused ? flash.draft! : policyFormValues(data.policy);
  const value = (name: string) => typeof values[name] === "string" ? values[name] as string : "";
  const mintRows = rowCount(values, "allowedMints") + BLANK_ROWS;
  const budgetRows = rowCount(values, "hourlyBudgets") + BLANK_ROWS;
  const field = (name: string) => ({ flash, form: "policy", name });
  return (
    <ProjectFrame data={data} project={project} tab="policy">
      <section class="card" aria-labelledby="policy-heading">
        <h2 id="policy-heading">Transaction policy</h2>
        <p>
          Every request to send SOL, send a token or mint one must fit this policy. Amounts are in
          token units (1.5 means one and a half). Leave a limit blank for none; clear a row to
          remove it.
        </p>
        <FlashFor flash={flash} form="policy" />
        <form method="post" action={`${projectPath(project.id)}/policy`} data-testid="policy-form">
          <label for="maxSolPerTransfer">Max SOL per transfer</label>
          <input
            id="maxSolPerTransfer"
            name="maxSolPerTransfer"
            inputMode="decimal"
            autocomplete="off"
            value={value("maxSolPerTransfer")}
            {...fieldAria(field("maxSolPerTransfer"))}
          />
          <FieldError {...field("maxSolPerTransfer")} />
          <p class="hint">SOL transfers are disabled while this is blank.</p>

          <label for="maxHeldSolPerPlayer">Max SOL held per player</label>
          <input
            id="maxHeldSolPerPlayer"
            name="maxHeldSolPerPlayer"
            inputMode="decimal"
            autocomplete="off"
            value={value("maxHeldSolPerPlayer")}
            {...fieldAria(field("maxHeldSolPerPlayer"))}
          />
          <FieldError {...field("maxHeldSolPerPlayer")} />
          <p class="hint">
            The most SOL one player may have in rewards not paid yet (held until they link a
            wallet). Blank for no cap.
          </p>

          <fieldset>
            <legend>Allowed mints</legend>
            <p class="hint">
              Tokens the project may send or mint, each with its maximum per transaction and,
              optionally, the most one player may have in rewards not paid yet. Mints need the
              managed wallet as mint authority.
            </p>
            <div class="rows">
              {Array.from({ length: mintRows }, (_, i) => (
                <div class="row3" key={i}>
                  <div>
                    <input
                      name={`allowedMints[${i}].mint`}
                      aria-label={`Mint address ${i + 1}`}
                      placeholder="Mint address"
                      autocomplete="off"
                      value={value(`allowedMints[${i}].mint`)}
                      {...fieldAria(field(`allowedMints[${i}].mint`))}
                    />
                    <FieldError {...field(`allowedMints[${i}].mint`)} />
                    <MintLabel label={data.tokenLabels.get(value(`allowedMints[${i}].mint`))} />
                  </div>
                  <div>
                    <input
                      name={`allowedMints[${i}].maxPerTransaction`}
                      aria-label={`Maximum per transaction ${i + 1}`}
                      placeholder="Max per transaction"
                      inputMode="decimal"
                      autocomplete="off"
                      value={value(`allowedMints[${i}].maxPerTransaction`)}
                      {...fieldAria(field(`allowedMints[${i}].maxPerTransaction`))}
                    />
                    <FieldError {...field(`allowedMints[${i}].maxPerTransaction`)} />
                  </div>
                  <div>
                    <input
                      name={`allowedMints[${i}].maxHeldPerPlayer`}
                      aria-label={`Maximum held per player ${i + 1}`}
                      placeholder="Max held per player (rewards)"
                      inputMode="decimal"
                      autocomplete="off"
                      value={value(`allowedMints[${i}].maxHeldPerPlayer`)}
                      {...fieldAria(field(`allowedMints[${i}].maxHeldPerPlayer`))}
                    />
                    <FieldError {...field(`allowedMints[${i}].maxHeldPerPlayer`)} />
                  </div>
                </div>
              ))}
            </div>
          </fieldset>

          <div class="grid">
            <div>
              <label for="perRecipientPerHour">Per recipient wallet, per hour</label>
              <input
                id="perRecipientPerHour"
                name="perRecipientPerHour"
                inputMode="numeric"
                autocomplete="off"
                value={value("perRecipientPerHour")}
                {...fieldAria(field("perRecipientPerHour"))}
              />
              <FieldError {...field("perRecipientPerHour")} />
              <p class="hint">Most transactions one wallet may receive in a rolling hour.</p>
            </div>
            <div>
              <label for="perPlayerPerHour">Per player, per hour</label>
              <input
                id="perPlayerPerHour"
                name="perPlayerPerHour"
                inputMode="numeric"
                autocomplete="off"
                value={value("perPlayerPerHour")}
                {...fieldAria(field("perPlayerPerHour"))}
              />
              <FieldError {...field("perPlayerPerHour")} />
              <p class="hint">Across all of a player's wallets, in a rolling hour.</p>
            </div>
          </div>

          <fieldset>
            <legend>Hourly budgets</legend>
            <p class="hint">
              The most of one asset ({SOL_ASSET}{" "}
              or a mint address) sent to everyone together in a rolling hour. Fees, and the rent of
              a recipient's new token account (about 0.002 SOL), are paid on top and not counted.
            </p>
            <div class="rows">
              {Array.from({ length: budgetRows }, (_, i) => (
                <div class="row2" key={i}>
                  <div>
                    <input
                      name={`hourlyBudgets[${i}].asset`}
                      aria-label={`Budget asset ${i + 1}`}
                      placeholder={`${SOL_ASSET} or mint address`}
                      autocomplete="off"
                      value={value(`hourlyBudgets[${i}].asset`)}
                      {...fieldAria(field(`hourlyBudgets[${i}].asset`))}
                    />
                    <FieldError {...field(`hourlyBudgets[${i}].asset`)} />
                  </div>
                  <div>
                    <input
                      name={`hourlyBudgets[${i}].amount`}
                      aria-label={`Budget amount ${i + 1}`}
                      placeholder="Amount per hour"
                      inputMode="decimal"
                      autocomplete="off"
                      value={value(`hourlyBudgets[${i}].amount`)}
                      {...fieldAria(field(`hourlyBudgets[${i}].amount`))}
                    />
                    <FieldError {...field(`hourlyBudgets[${i}].amount`)} />
                  </div>
                </div>
              ))}
            </div>
          </fieldset>
          <div class="actions">
            <button type="submit" data-testid="save-policy">Save policy</button>
          </div>
        </form>
      </section>
    </ProjectFrame>
  );
}
