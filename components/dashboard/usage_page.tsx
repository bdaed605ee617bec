/** A project's usage: how close it is to every limit, as server-rendered SVG charts. */
import type { TokenLabel } from "../../lib/chain/token_labels.ts";
import type { VNode } from "preact";
import { type FrameData, ProjectFrame } from "./frame.tsx";
import { BarChart, COLORS, Meter } from "./charts.tsx";
import { LowBalanceNotices } from "./low_balance_notices.tsx";
import type { LowBalanceWarning } from "../../lib/projects/low_balance.ts";
import { shortAddress } from "./format.ts";
import type { UsageFigures } from "../../lib/projects/usage.ts";
import type { Project } from "../../kv/projects.ts";

/** What the usage page shows. */
interface UsagePageData extends FrameData {
  project: Project;
  figures: UsageFigures;
  /** Null without a managed wallet or when its balances could not be read. */
  warnings: LowBalanceWarning[] | null;
  /** The labels (symbol, decimals) of the budgets' mints that could be read. */
  tokenLabels: ReadonlyMap<string, TokenLabel>;
}

const NUMBER = new Intl.NumberFormat("en-US");

function clock(at: number): string {
  return `${new Date(at).toISOString().slice(11, 16)} UTC`;
}

function count(n: number, max: number): string {
  return `${NUMBER.format(n)} of ${NUMBER.format(max)}`;
}

/** The usage body. */
export function UsagePage(data: UsagePageData): VNode {
  const { project, figures } = data;
  const { requests, tx, events } = figures;
  const thisMinute = requests.perMinute.at(-1)?.count ?? 0;
  const peak = Math.max(...requests.perMinute.map((m) => m.count));
  const delivered = events.reduce((s, h) => s + h.delivered, 0);
  const dropped = events.reduce((s, h) => s + h.dropped, 0);
  const txLimit = NUMBER.format(tx.limit);
  const limits = `${NUMBER.format(requests.minuteLimit)} requests a minute and ` +
    `${NUMBER.format(requests.dayLimit)} a UTC day per project, ${txLimit} transactions per ` +
    "rolling 24 hours";
  const hourTicks = [
    { index: 0, label: "-23 h" },
    { index: 12, label: "-11 h" },
    { index: 23, label: "now" },
  ];
  return (
    <ProjectFrame data={data} project={project} tab="usage">
      <p class="muted">
        As of {clock(figures.now)}. Limits: {limits}, and the hourly budgets of your policy.
      </p>
      {data.warnings
        ? <LowBalanceNotices warnings={data.warnings} />
        : project.walletAddress && (
          <p class="notice info">The managed wallet's balances could not be read right now.</p>
        )}

      <div class="grid usage">
        <section class="card" aria-labelledby="requests-heading">
          <h2 id="requests-heading">Requests</h2>
          <Meter
            id="requests-minute"
            label="This minute"
            value={thisMinute}
            max={requests.minuteLimit}
            text={count(thisMinute, requests.minuteLimit)}
          />
          <Meter
            id="requests-today"
            label="Today (UTC)"
            value={requests.today}
            max={requests.dayLimit}
            text={count(requests.today, requests.dayLimit)}
          />
          <BarChart
            id="chart-requests"
            title="Requests per minute, last hour"
            description={`Busiest minute: ${peak} requests; the limit is ${requests.minuteLimit}.`}
            bars={requests.perMinute.map((m) => ({ label: clock(m.at), values: [m.count] }))}
            series={[{ name: "requests", color: COLORS.main }]}
            limit={{ value: requests.minuteLimit, label: `${requests.minuteLimit} a minute` }}
            ticks={[
              { index: 0, label: "-59 min" },
              { index: 30, label: "-29 min" },
              { index: 59, label: "now" },
            ]}
          />
        </section>

        <section class="card" aria-labelledby="tx-heading">
          <h2 id="tx-heading">Transactions</h2>
          <Meter
            id="tx-day"
            label="Rolling 24 hours (failed ones excluded)"
            value={tx.counted24h}
            max={tx.limit}
            text={count(tx.counted24h, tx.limit)}
          />
          <p class="hint" data-testid="tx-failed">
            {NUMBER.format(tx.failedShown)} failed in the hours below (they count toward nothing).
          </p>
          <BarChart
            id="chart-tx"
            title="Transactions per hour, last 24 hours"
            description={`${tx.counted24h} counted toward the ${txLimit} limit, ${tx.failedShown} failed.`}
            bars={tx.perHour.map((h) => ({ label: clock(h.at), values: [h.counted, h.failed] }))}
            series={[{ name: "sent", color: COLORS.main }, { name: "failed", color: COLORS.bad }]}
            ticks={hourTicks}
          />
        </section>

        <section class="card" aria-labelledby="budgets-heading">
          <h2 id="budgets-heading">Hourly budgets</h2>
          {figures.budgets.length === 0
            ? <p class="muted">The policy sets no hourly budget.</p>
            : figures.budgets.map((b, i) => (
              <Meter
                key={b.asset}
                id={`budget-${i}`}
                label={b.asset === "SOL"
                  ? "SOL"
                  : data.tokenLabels.get(b.asset)?.symbol ?? shortAddress(b.asset)}
                value={b.fraction ?? 0}
                max={1}
                text={`${b.used} of ${b.budget} in the rolling hour`}
              />
            ))}
        </section>

        <section class="card" aria-labelledby="events-heading">
          <h2 id="events-heading">Events</h2>
          <p class="hint" data-testid="events-totals">
            Last 24 hours: {NUMBER.format(delivered)} delivered, {NUMBER.format(dropped)} dropped.
          </p>
          <BarChart
            id="chart-events"
            title="Events delivered and dropped per hour, last 24 hours"
            description={`${delivered} delivered, ${dropped} dropped.`}
            bars={events.map((h) => ({ label: clock(h.at), values: [h.delivered, h.dropped] }))}
            series={[
              { name: "delivered", color: COLORS.main },
              { name: "dropped", color: COLORS.bad },
            ]}
            ticks={hourTicks}
          />
        </section>
      </div>
    </ProjectFrame>
  );
}
