/**
 * Withdrawals from the dashboard (`lib/projects/withdraw.ts`): the page, preparing the statement
 * to sign, the page that signs it, and the signed confirmation that sends. Each needs a role that
 * may withdraw (owner or admin).
 */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { pickText, readText } from "../../lib/projects/fields.ts";
import { readWalletBalances } from "../../lib/projects/wallet.ts";
import { readStatement } from "../../lib/auth/statements.ts";
import {
  confirmWithdrawal,
  describeLines,
  prepareWithdrawal,
  type WithdrawalAnswer,
} from "../../lib/projects/withdraw.ts";
import { isLocalOrigin } from "../../lib/config.ts";
import { StatementPage } from "../../components/dashboard/statement_page.tsx";
import { WithdrawPage } from "../../components/dashboard/withdraw_page.tsx";
import { projectPage } from "./_page.tsx";
import { projectAction } from "./_action.ts";

/** `GET`/`POST /dashboard/projects/:id/withdraw...`. */
export function withdrawRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  const page = (id: string) => projectPath(id, "withdraw");
  return new Hono()
    .get("/dashboard/projects/:id/withdraw", (c) =>
      projectPage(ctx, c, async (data, project) => ({
        title: `Withdraw · ${project.name}`,
        body: (
          <WithdrawPage
            {...data}
            project={project}
            balances={await readWalletBalances(ctx, project)}
          />
        ),
      }), { can: "withdraw" }))
    .post(
      "/dashboard/projects/:id/withdraw/prepare",
      origin,
      projectAction(ctx, {
        tab: "withdraw",
        can: "withdraw",
        form: (fields) => readText(fields.form) === "everything" ? "everything" : "withdraw",
        draft: (fields) => pickText(fields, ["recipient", "asset", "amount"]),
      }, async ({ developer, fields, project, role }) => {
        const prepared = await prepareWithdrawal(ctx, { project, developer, role }, fields);
        const { nonce, message, expiresAt, lines } = prepared;
        return {
          status: 201,
          json: { nonce, message, expiresAt, lines },
          flash: { kind: "info", message: `Sign to withdraw ${describeLines(lines)}` },
          redirect: `${page(project.id)}/confirm?nonce=${nonce}`,
        };
      }),
    )
    .get(
      "/dashboard/projects/:id/withdraw/confirm",
      (c) =>
        projectPage(ctx, c, async (data, project) => {
          const statement = await readStatement(ctx, {
            nonce: c.req.query("nonce") ?? "",
            purpose: "withdraw",
            projectId: project.id,
            developer: data.developer,
          });
          return {
            title: `Confirm the withdrawal · ${project.name}`,
            body: (
              <StatementPage
                {...data}
                project={project}
                tab="withdraw"
                heading="Confirm the withdrawal"
                statement={statement}
                action={page(project.id)}
                back={page(project.id)}
                sandbox={isLocalOrigin(ctx.config.baseUrl)}
              />
            ),
          };
        }, { can: "withdraw" }),
    )
    .post(
      "/dashboard/projects/:id/withdraw",
      origin,
      projectAction(ctx, { tab: "withdraw", can: "withdraw", form: "statement" }, async (
        { developer, fields, project, role },
      ) => {
        const nonce = readText(fields.nonce);
        const signature = readText(fields.signature);
        const withdrawal = await confirmWithdrawal(ctx, { project, developer, role }, {
          nonce: typeof nonce === "string" ? nonce : "",
          signature: typeof signature === "string" ? signature : "",
        });
        const outcomes = withdrawal.lines.map(lineOutcome);
        const failed = outcomes.some((o) => o.failed);
        const details = outcomes.flatMap((o) => o.details === null ? [] : [o.details]);
        return {
          json: { withdrawal },
          flash: {
            kind: failed ? "error" : "success",
            message: `Withdrawal to ${withdrawal.recipient}: ${
              outcomes.map((o) => o.words).join("; ")
            }`,
            ...(details.length > 0 ? { details: details.join("\n") } : {}),
          },
          redirect: projectPath(project.id, "transactions"),
        };
      }),
    );
}

/**
 * A line's outcome in words; the chain's coded error, when there is one, goes behind the notice's
 * details toggle.
 */
function lineOutcome(line: WithdrawalAnswer["lines"][number]) {
  const what = describeLines([line]);
  if (line.error) {
    return { failed: true, words: `${what} not sent: ${line.error.message}`, details: null };
  }
  const result = line.result!;
  if (result.status === "failed") {
    return {
      failed: true,
      words: `${what} failed and nothing was sent: the network refused the transaction`,
      details: result.error,
    };
  }
  const words = result.status === "confirmed" ? "confirmed" : "sent, waiting for confirmation";
  return { failed: false, words: `${what} ${words}`, details: null };
}
