/**
 * The low-balance warnings (`lib/projects/low_balance.ts`) as the overview and usage pages show
 * them: in the alarm colour, except for a wallet with no SOL at all, which is simply not funded yet.
 */
import type { VNode } from "preact";
import type { LowBalanceWarning } from "../../lib/projects/low_balance.ts";
import { Notice } from "../layout.tsx";
import { TokenAmount, tokenAmountText } from "./token_amount.tsx";

/** The warnings as notices (nothing when there are none). */
export function LowBalanceNotices({ warnings }: { warnings: LowBalanceWarning[] }): VNode | null {
  if (warnings.length === 0) return null;
  return (
    <div data-testid="low-balance">
      {warnings.map((w) =>
        w.asset === "SOL" && w.held === "0"
          ? (
            <Notice key={w.asset} kind="info">
              <strong>Not funded yet:</strong> the managed wallet holds no SOL. Send it at least
              {" "}
              {w.needed} SOL ({w.why}) before your game pays out.
            </Notice>
          )
          : (
            <Notice key={w.asset} kind="error">
              <strong>Low balance:</strong> the managed wallet holds {w.token
                ? <TokenAmount amount={w.held} mint={w.asset} {...w.token} />
                : `${w.held} SOL`}, less than {w.token
                ? tokenAmountText({ amount: w.needed, mint: w.asset, ...w.token })
                : `${w.needed} SOL`} ({w.why}). Top it up before transactions start to fail.
            </Notice>
          )
      )}
    </div>
  );
}
