/**
 * The page where a member signs a statement (a withdrawal, a key export) with the wallet they
 * signed in with. With JavaScript the island signs through the wallet and posts the form; without
 * it the message is shown whole, to sign with any tool, and the signature is pasted into the form.
 */
import type { ComponentChildren, VNode } from "preact";
import { DashboardSignStatement } from "../../islands/dashboard_sign_statement.tsx";
import type { Project } from "../../kv/projects.ts";
import { Island } from "../islands.tsx";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { formatTime } from "./format.ts";
import type { ProjectTab } from "../../http/dashboard_paths.ts";

/** What the statement page shows. */
interface StatementPageData extends FrameData {
  project: Project;
  tab: ProjectTab;
  heading: string;
  /** The statement found; null when it expired, was used, or is not this member's. */
  statement: { nonce: string; message: string; expiresAt: number } | null;
  /** Where the signed form posts. */
  action: string;
  /** Where to ask for a new statement. */
  back: string;
  /** True on a local playground (the sandbox key may sign). */
  sandbox: boolean;
  children?: ComponentChildren;
}

/** The statement page body. */
export function StatementPage(data: StatementPageData): VNode {
  const { project, statement } = data;
  return (
    <ProjectFrame data={data} project={project} tab={data.tab}>
      <section class="card" aria-labelledby="statement-heading">
        <h2 id="statement-heading">{data.heading}</h2>
        <FlashFor flash={data.flash} form="statement" />
        {!statement
          ? (
            <p class="notice error" role="alert" data-testid="statement-gone">
              This confirmation expired, was used already, or is not yours.{" "}
              <a href={data.back}>Start again</a>.
            </p>
          )
          : (
            <>
              {data.children}
              <p>
                Sign this message with the wallet you signed in with (<span class="mono">
                  {data.developer}
                </span>). Signing is free and sends no transaction; the message can be used once,
                until {formatTime(statement.expiresAt)}.
              </p>
              <pre class="mono statement" data-testid="statement-message">{statement.message}</pre>
              <Island
                component={DashboardSignStatement}
                props={{
                  message: statement.message,
                  address: data.developer,
                  formId: "confirm-statement",
                  fieldName: "signature",
                  sandbox: data.sandbox,
                }}
              />
              <form id="confirm-statement" method="post" action={data.action}>
                <input type="hidden" name="nonce" value={statement.nonce} />
                <label for="statement-signature">
                  Signature (base64 of the 64-byte ed25519 signature of the message's UTF-8 bytes)
                </label>
                <textarea
                  id="statement-signature"
                  name="signature"
                  rows={2}
                  required
                  spellcheck={false}
                  autocomplete="off"
                />
                <div class="actions">
                  <button type="submit" class="danger" data-testid="confirm-statement">
                    Confirm
                  </button>
                  <a class="button secondary" href={data.back}>Cancel</a>
                </div>
              </form>
            </>
          )}
      </section>
    </ProjectFrame>
  );
}
