/** Read-only project pages: recent transactions and the event delivery log. */
import type { VNode } from "preact";
import type { Delivery } from "../../kv/deliveries.ts";
import type { Project } from "../../kv/projects.ts";
import { TX_STATUSES, type TxRequestRecord, type TxStatus } from "../../kv/tx_requests.ts";
import { FlashFor, type FrameData, ProjectFrame } from "./frame.tsx";
import { explorerAddressUrl, explorerTxUrl, formatTime, shortAddress } from "./format.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { Cell } from "./cell.tsx";
import { TokenAmount } from "./token_amount.tsx";
import type { TokenLabel } from "../../lib/chain/token_labels.ts";

/** What the transactions page shows. */
interface TransactionsPageData extends FrameData {
  project: Project;
  rpcUrl: string;
  transactions: TxRequestRecord[];
  /** The labels of the listed mints that could be read (symbol, decimals). */
  tokenLabels: ReadonlyMap<string, TokenLabel>;
  /** The status filter; null shows every request. */
  status: TxStatus | null;
  /** Cursor this page starts after (null: the newest). */
  after: string | null;
  /** Cursor of the next, older page; null when this page reached the oldest. */
  next: string | null;
}

const STATUS_BADGE: Record<string, string> = {
  confirmed: "badge ok",
  failed: "badge err",
  submitted: "badge",
  pending: "badge",
};

/** A request's amount: SOL, or a token by its symbol when known, else its shortened mint. */
function TxAmount(
  { amount, mint, label }: { amount: string; mint: string | null; label: TokenLabel | undefined },
): VNode {
  if (!mint) return <>{amount} SOL</>;
  if (label) {
    return (
      <TokenAmount amount={amount} mint={mint} symbol={label.symbol} decimals={label.decimals} />
    );
  }
  return (
    <>
      {amount} of <span class="mono" title={mint}>{shortAddress(mint)}</span>
    </>
  );
}

/** The recent transactions body; the filter and "Load more" are plain links and a GET form. */
export function TransactionsPage(data: TransactionsPageData): VNode {
  const { project } = data;
  const path = `${projectPath(project.id)}/transactions`;
  const query = (after: string | null) => {
    const params = new URLSearchParams();
    if (data.status) params.set("status", data.status);
    if (after) params.set("after", after);
    const text = params.toString();
    return text ? `${path}?${text}` : path;
  };
  return (
    <ProjectFrame data={data} project={project} tab="transactions">
      <section class="card" aria-labelledby="tx-heading">
        <h2 id="tx-heading">Recent transactions</h2>
        <p class="muted">
          The latest requests sent by your game servers (each item of a batch on its own row), and
          withdrawals from this dashboard (kind withdraw, with who asked), newest first. A failed
          one moved nothing.
        </p>
        <form method="get" action={path} data-testid="tx-filter">
          <label for="status">Status</label>
          <div class="row2">
            <select id="status" name="status">
              <option value="" selected={data.status === null}>Any</option>
              {TX_STATUSES.map((status) => (
                <option value={status} selected={data.status === status}>{status}</option>
              ))}
            </select>
            <button type="submit">Filter</button>
          </div>
        </form>
        {data.after && (
          <p class="muted" data-testid="tx-older">
            Showing older requests. <a href={query(null)}>Back to the newest</a>
          </p>
        )}
        {data.transactions.length === 0
          ? (
            <p class="empty" data-testid="no-transactions">
              {data.status || data.after ? "No transactions match." : "No transactions yet."}
            </p>
          )
          : (
            <table class="list stack" data-testid="tx-list">
              <thead>
                <tr>
                  <th>Status</th>
                  <th>Kind</th>
                  <th>Recipient</th>
                  <th>Amount</th>
                  <th>Signature</th>
                  <th>Requested</th>
                </tr>
              </thead>
              <tbody>
                {data.transactions.map((tx) => (
                  <tr key={tx.key}>
                    <Cell label="Status">
                      <span class={STATUS_BADGE[tx.status] ?? "badge"}>{tx.status}</span>
                      {tx.error && <div class="hint" title={tx.error}>{tx.error.slice(0, 160)}
                      </div>}
                      {tx.status === "submitted" && tx.expiryUnprovenAt !== undefined && (
                        <div class="hint attention" data-testid="tx-attention">
                          Needs attention: past its expiry, but the RPC node cannot show whether it
                          landed (it may hide its history). It stays submitted and is not retried;
                          check the signature in an explorer or set another RPC node.
                        </div>
                      )}
                    </Cell>
                    <Cell label="Kind">
                      <span data-testid="tx-kind">{tx.kind}</span>
                      {tx.requestedBy && (
                        <div class="hint" data-testid="tx-requested-by" title={tx.requestedBy}>
                          by <span class="mono">{shortAddress(tx.requestedBy)}</span>
                        </div>
                      )}
                      <div class="hint mono" title="Idempotency key">{tx.key.slice(0, 40)}</div>
                    </Cell>
                    <Cell label="Recipient">
                      <a
                        class="mono"
                        href={explorerAddressUrl(project.cluster, data.rpcUrl, tx.recipient)}
                        title={tx.recipient}
                      >
                        {shortAddress(tx.recipient)}
                      </a>
                      {tx.recipientUserId !== null && (
                        <div class="hint">Player {tx.recipientUserId}</div>
                      )}
                    </Cell>
                    <Cell label="Amount">
                      <TxAmount
                        amount={tx.body.amount}
                        mint={tx.body.mint}
                        label={tx.body.mint ? data.tokenLabels.get(tx.body.mint) : undefined}
                      />
                    </Cell>
                    <Cell label="Signature">
                      {tx.signature
                        ? (
                          <a
                            class="mono"
                            href={explorerTxUrl(project.cluster, data.rpcUrl, tx.signature)}
                            title={tx.signature}
                          >
                            {shortAddress(tx.signature)}
                          </a>
                        )
                        : <span class="muted">none</span>}
                      {tx.signed?.shared && (
                        <div class="hint" data-testid="tx-shared">
                          One of {tx.signed.shared} payouts of a batch in this transaction (one fee)
                        </div>
                      )}
                    </Cell>
                    <Cell label="Requested">{formatTime(tx.usage.at)}</Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        {data.next && (
          <p class="actions">
            <a class="button secondary" href={query(data.next)} data-testid="tx-load-more">
              Load more
            </a>
          </p>
        )}
      </section>
    </ProjectFrame>
  );
}

/** What the event log shows. */
interface EventsPageData extends FrameData {
  project: Project;
  deliveries: Delivery[];
  eventsOn: boolean;
}

const OUTCOME: Record<Delivery["outcome"], { label: string; badge: string }> = {
  delivered: { label: "delivered", badge: "badge ok" },
  rejected: { label: "rejected", badge: "badge err" },
  gave_up: { label: "gave up", badge: "badge err" },
  skipped: { label: "skipped", badge: "badge" },
  notice: { label: "by notice", badge: "badge ok" },
};

/** The event delivery log body. */
export function EventsPage(data: EventsPageData): VNode {
  const { project } = data;
  return (
    <ProjectFrame data={data} project={project} tab="events">
      <section class="card" aria-labelledby="log-heading">
        <h2 id="log-heading">Event delivery log</h2>
        <p class="muted">
          The last 100 events published to Roblox MessagingService, newest first, with Roblox's
          answer. {data.eventsOn
            ? "Events are on."
            : "Events are off: save a universe ID and publishing key in Settings."}
        </p>
        <FlashFor flash={data.flash} form="ping" />
        <form method="post" action={`${projectPath(project.id)}/ping`} class="actions">
          <input type="hidden" name="from" value="events" />
          <button type="submit" class="secondary">Send test event</button>
        </form>
        {data.deliveries.length === 0
          ? <p class="empty" data-testid="no-deliveries">No events delivered yet.</p>
          : (
            <table class="list stack" data-testid="delivery-list">
              <thead>
                <tr>
                  <th>Time</th>
                  <th>Event</th>
                  <th>Event ID</th>
                  <th>Outcome</th>
                  <th>Attempts</th>
                  <th>Answer</th>
                </tr>
              </thead>
              <tbody>
                {data.deliveries.map((d) => (
                  <tr key={d.id}>
                    <Cell label="Time">{formatTime(d.at)}</Cell>
                    <Cell label="Event" mono>{d.type}</Cell>
                    <Cell label="Event ID" mono>{d.eventId}</Cell>
                    <Cell label="Outcome">
                      <span class={OUTCOME[d.outcome].badge}>{OUTCOME[d.outcome].label}</span>
                    </Cell>
                    <Cell label="Attempts">{d.attempts}</Cell>
                    <Cell label="Answer">
                      {d.status !== null ? `HTTP ${d.status}` : ""}
                      {d.error && <div class="hint">{d.error}</div>}
                    </Cell>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
    </ProjectFrame>
  );
}
