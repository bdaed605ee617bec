/** Withdrawing from the managed wallet: its balances, one asset to an address, or everything. */
import type { VNode } from "preact";
import type { Project } from "../../kv/projects.ts";
import type { WalletBalances } from "../../lib/projects/wallet.ts";
import { TokenAmount } from "./token_amount.tsx";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { projectPath } from "../../http/dashboard_paths.ts";
import { Cell } from "./cell.tsx";
import { AddressField } from "./address_field.tsx";
import { fieldAria, FieldError } from "./field_error.tsx";

/** What the withdraw page shows. */
interface WithdrawPageData extends FrameData {
  project: Project;
  /** SOL and token balances; null when the chain could not be read in time. */
  balances: WalletBalances | null;
}

/** The withdraw page body. */
export function WithdrawPage(data: WithdrawPageData): VNode {
  const { project, flash } = data;
  const action = `${projectPath(project.id, "withdraw")}/prepare`;
  const draft = flash?.form === "withdraw" && flash.kind === "error" ? flash.draft ?? {} : {};
  const everything = flash?.form === "everything" && flash.kind === "error"
    ? flash.draft ?? {}
    : {};
  if (!project.walletAddress) {
    return (
      <ProjectFrame data={data} project={project} tab="withdraw">
        <p class="empty">The project has no managed wallet: there is nothing to withdraw.</p>
      </ProjectFrame>
    );
  }
  return (
    <ProjectFrame data={data} project={project} tab="withdraw">
      <section class="card" aria-labelledby="holdings-heading">
        <h2 id="holdings-heading">Managed wallet</h2>
        <FlashFor flash={flash} form="statement" />
        <p class="mono">{project.walletAddress}</p>
        {!data.balances
          ? <p class="notice error">The balances could not be read from the chain just now.</p>
          : (
            <table class="list stack" data-testid="holdings">
              <thead>
                <tr>
                  <th>Asset</th>
                  <th>Balance</th>
                </tr>
              </thead>
              <tbody>
                <tr>
                  <Cell label="Asset">SOL</Cell>
                  <Cell label="Balance">{data.balances.sol}</Cell>
                </tr>
                {data.balances.tokens.map((token) => (
                  <tr key={token.mint}>
                    <Cell label="Asset" mono>{token.mint}</Cell>
                    <Cell label="Balance">
                      <TokenAmount {...token} amount={token.uiAmount} />
                    </Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        <p class="hint">
          A withdrawal is outside the game policy's limits. It is listed with the transactions (kind
          withdraw, with who asked) and sent to your servers as a <span class="mono">tx</span>{" "}
          event. You confirm it by signing a message with your wallet.
        </p>
      </section>

      <section class="card" aria-labelledby="withdraw-heading">
        <h2 id="withdraw-heading">Withdraw SOL or a token</h2>
        <FlashFor flash={flash} form="withdraw" />
        <form method="post" action={action} data-testid="withdraw-form">
          <input type="hidden" name="form" value="withdraw" />
          <AddressField
            id="withdraw-recipient"
            name="recipient"
            label="To (wallet address)"
            value={String(draft.recipient ?? "")}
            refused={{ flash, form: "withdraw" }}
          />
          <div class="grid">
            <div>
              <label for="withdraw-asset">Asset: SOL or a mint address</label>
              <input
                id="withdraw-asset"
                name="asset"
                required
                list="withdraw-assets"
                autocomplete="off"
                spellcheck={false}
                value={String(draft.asset ?? "SOL")}
                {...fieldAria({ flash, form: "withdraw", name: "asset" })}
              />
              <FieldError flash={flash} form="withdraw" name="asset" />
              <datalist id="withdraw-assets">
                <option value="SOL" />
                {data.balances?.tokens.map((t) => <option key={t.mint} value={t.mint} />)}
              </datalist>
            </div>
            <div>
              <label for="withdraw-amount">Amount</label>
              <input
                id="withdraw-amount"
                name="amount"
                required
                inputMode="decimal"
                autocomplete="off"
                value={String(draft.amount ?? "")}
                {...fieldAria({ flash, form: "withdraw", name: "amount" })}
              />
              <FieldError flash={flash} form="withdraw" name="amount" />
            </div>
          </div>
          <div class="actions">
            <button type="submit">Review and sign</button>
          </div>
        </form>
      </section>

      <EverythingForm project={project} recipient={String(everything.recipient ?? "")}>
        <FlashFor flash={flash} form="everything" />
      </EverythingForm>
    </ProjectFrame>
  );
}

/**
 * The form withdrawing everything the wallet holds: every token, then the SOL less what the
 * withdrawal's own fees need. Also offered on the delete page, before deleting.
 */
export function EverythingForm(
  { project, recipient, children }: { project: Project; recipient: string; children?: VNode },
): VNode {
  return (
    <section class="card" aria-labelledby="everything-heading">
      <h2 id="everything-heading">Withdraw everything</h2>
      {children}
      <p>
        Every token in the wallet, then its SOL less what the withdrawal's own fees and the
        recipient's new token accounts need, and the small balance a wallet must keep while it is
        not empty (about 0.001 SOL stays). You review each amount before signing.
      </p>
      <form
        method="post"
        action={`${projectPath(project.id, "withdraw")}/prepare`}
        data-testid="withdraw-everything"
      >
        <input type="hidden" name="form" value="everything" />
        <input type="hidden" name="everything" value="true" />
        <AddressField
          id="everything-recipient"
          name="recipient"
          label="To (wallet address)"
          value={recipient}
        />
        <div class="actions">
          <button type="submit">Review and sign</button>
        </div>
      </form>
    </section>
  );
}
