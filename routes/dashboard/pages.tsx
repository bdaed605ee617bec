import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { hasOauthApp } from "../../lib/auth/oauth_app.ts";
import { parseAddress } from "../../lib/chain/validation.ts";
import { listWatches } from "../../lib/watches/watches.ts";
import { ULID_PATTERN } from "../../core/ids.ts";
import { withDeadline } from "../../core/deadline.ts";
import { linkUrl } from "../../lib/link/page_url.ts";
import { eventsEnabled } from "../../lib/events/settings.ts";
import { EventsPage, TransactionsPage } from "../../components/dashboard/activity_pages.tsx";
import { DeletePage } from "../../components/dashboard/delete_page.tsx";
import { KeysPage } from "../../components/dashboard/keys_page.tsx";
import { OverviewPage } from "../../components/dashboard/overview_page.tsx";
import { getKeyExports } from "../../kv/key_exports.ts";
import { type PlayerRow, PlayersPage } from "../../components/dashboard/players_page.tsx";
import { PolicyPage } from "../../components/dashboard/policy_page.tsx";
import { settingsView } from "../../lib/projects/settings.ts";
import { SettingsPage } from "../../components/dashboard/settings_page.tsx";
import { WatchesPage } from "../../components/dashboard/watches_page.tsx";
import { readLowBalanceWarnings } from "../../lib/projects/low_balance.ts";
import { readHeldAssets, readPlayerRewards } from "../../lib/projects/rewards.ts";
import { readTokenLabels, readWalletBalances } from "../../lib/projects/wallet.ts";
import { isSandboxService } from "../../lib/projects/sandbox_funds.ts";
import { loadUsageFigures } from "../../lib/projects/usage.ts";
import { UsagePage } from "../../components/dashboard/usage_page.tsx";
import { listApiKeys } from "../../kv/api_keys.ts";
import { listDeliveries } from "../../kv/deliveries.ts";
import { getLinkByAddress, getLinkByUser, listLinks } from "../../kv/links.ts";
import { getPolicy } from "../../kv/policy.ts";
import type { Project } from "../../kv/projects.ts";
import { listTxRequests, TX_STATUSES } from "../../kv/tx_requests.ts";
import { projectPage } from "./_page.tsx";
import { parseUserId } from "../../lib/user_id.ts";

const PLAYERS_PAGE_SIZE = 100;
const TX_PAGE_SIZE = 50;
// The overview must not hang on a slow RPC node; the balance is then shown as unreadable.
const BALANCE_WAIT_MS = 4_000;

/** The dashboard's pages (GET). */
export function dashboardPageRoutes(ctx: AppContext): Hono {
  const { baseUrl } = ctx.config;
  const rpcUrl = (project: Project) => ctx.config.rpcUrls[project.cluster];
  return new Hono()
    .get("/dashboard/projects/:id", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const policyRead = getPolicy(ctx.kv, project.id);
        // The chain reads wait up to 4 s each: in parallel, a slow node costs the page 4 s, not 12.
        const [keys, policy, balance, holdings, lowBalance, exported, held] = await Promise.all([
          listApiKeys(ctx.kv, project.id, ctx.clock.now()),
          policyRead,
          readBalance(ctx, project),
          readWalletBalances(ctx, project),
          policyRead.then((p) => readLowBalanceWarnings(ctx, project, p)),
          getKeyExports(ctx.kv, project.id),
          readHeldAssets(ctx, project),
        ]);
        return {
          title: `${project.name} · ${ctx.config.serviceName}`,
          body: (
            <OverviewPage
              {...data}
              project={project}
              linkUrl={linkUrl(baseUrl, project.slug)}
              rpcUrl={rpcUrl(project)}
              baseUrl={baseUrl}
              balance={balance}
              tokens={holdings?.tokens ?? null}
              walletsAvailable={ctx.wallets.name !== "none"}
              sandbox={isSandboxService(ctx)}
              eventsOn={eventsEnabled(project)}
              signInReady={hasOauthApp(project)}
              activeKeys={keys.filter((k) => k.revokedAt === null).length}
              policySet={policy.maxSolPerTransfer !== null || policy.allowedMints.length > 0}
              lowBalance={lowBalance?.warnings ?? []}
              keyExported={exported.value}
              heldRewards={held}
            />
          ),
        };
      }))
    .get("/dashboard/projects/:id/usage", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const policy = await getPolicy(ctx.kv, project.id);
        const balance = await readLowBalanceWarnings(ctx, project, policy);
        const holdings = balance?.holdings ?? null;
        return {
          title: `Usage · ${project.name}`,
          body: (
            <UsagePage
              {...data}
              project={project}
              figures={await loadUsageFigures(ctx, { project, policy, holdings })}
              warnings={balance?.warnings ?? null}
              tokenLabels={await readTokenLabels(
                ctx,
                project,
                policy.hourlyBudgets.flatMap((b) => b.asset === "SOL" ? [] : [b.asset]),
              )}
            />
          ),
        };
      }))
    .get("/dashboard/projects/:id/keys", (c) =>
      projectPage(ctx, c, async (data, project) => ({
        title: `API keys · ${project.name}`,
        body: (
          <KeysPage
            {...data}
            project={project}
            baseUrl={baseUrl}
            keys={await listApiKeys(ctx.kv, project.id, ctx.clock.now())}
          />
        ),
      })))
    .get("/dashboard/projects/:id/settings", (c) =>
      projectPage(ctx, c, (data, project) => ({
        title: `Settings · ${project.name}`,
        body: (
          <SettingsPage
            {...data}
            project={project}
            settings={settingsView(project, ctx.config)}
            sandbox={isSandboxService(ctx)}
          />
        ),
      })))
    .get("/dashboard/projects/:id/policy", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const policy = await getPolicy(ctx.kv, project.id);
        const mints = policy.allowedMints.map((m) => m.mint);
        return {
          title: `Policy · ${project.name}`,
          body: (
            <PolicyPage
              {...data}
              project={project}
              policy={policy}
              tokenLabels={await readTokenLabels(ctx, project, mints)}
            />
          ),
        };
      }))
    .get("/dashboard/projects/:id/watches", (c) =>
      projectPage(ctx, c, async (data, project) => ({
        title: `Watches · ${project.name}`,
        body: (
          <WatchesPage
            {...data}
            project={project}
            rpcUrl={rpcUrl(project)}
            watches={await listWatches(ctx, project.id)}
            eventsOn={eventsEnabled(project)}
          />
        ),
      })))
    .get(
      "/dashboard/projects/:id/transactions",
      (c) =>
        projectPage(ctx, c, async (data, project) => {
          // A status or cursor that is not one of ours shows the newest page of every request.
          const status = TX_STATUSES.find((s) => s === c.req.query("status")) ?? null;
          const after = ULID_PATTERN.test(c.req.query("after") ?? "")
            ? c.req.query("after")!
            : null;
          const page = await listTxRequests(ctx.kv, project.id, {
            now: ctx.clock.now(),
            limit: TX_PAGE_SIZE,
            status: status ?? undefined,
            after: after ?? undefined,
          });
          const mints = page.records.flatMap((r) => r.body.mint ? [r.body.mint] : []);
          return {
            title: `Transactions · ${project.name}`,
            body: (
              <TransactionsPage
                {...data}
                project={project}
                rpcUrl={rpcUrl(project)}
                transactions={page.records}
                tokenLabels={await readTokenLabels(ctx, project, mints)}
                status={status}
                after={after}
                next={page.next}
              />
            ),
          };
        }),
    )
    .get("/dashboard/projects/:id/players", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const query = (c.req.query("q") ?? "").trim().slice(0, 100);
        const [found, rewards] = await Promise.all([
          findPlayers(ctx.kv, project.id, query),
          readPlayerRewards(ctx, project, parseUserId(query)),
        ]);
        return {
          title: `Players · ${project.name}`,
          body: (
            <PlayersPage
              {...data}
              project={project}
              rpcUrl={rpcUrl(project)}
              query={query}
              {...found}
              rewards={rewards}
            />
          ),
        };
      }))
    .get("/dashboard/projects/:id/events", (c) =>
      projectPage(ctx, c, async (data, project) => ({
        title: `Event log · ${project.name}`,
        body: (
          <EventsPage
            {...data}
            project={project}
            deliveries={await listDeliveries(ctx.kv, project.id)}
            eventsOn={eventsEnabled(project)}
          />
        ),
      })))
    .get("/dashboard/projects/:id/delete", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const keys = await listApiKeys(ctx.kv, project.id, ctx.clock.now());
        return {
          title: `Delete ${project.name}`,
          body: (
            <DeletePage
              {...data}
              project={project}
              linkUrl={linkUrl(baseUrl, project.slug)}
              activeKeys={keys.filter((k) => k.revokedAt === null).length}
              balances={await readWalletBalances(ctx, project)}
            />
          ),
        };
      }, { can: "delete" }));
}

async function readBalance(
  ctx: AppContext,
  project: Project,
): Promise<{ sol: string; funded: boolean } | { error: string } | null> {
  const address = parseAddress(project.walletAddress ?? undefined);
  if (!address) return null;
  return await withDeadline(
    ctx.chain.getSolBalance(project.cluster, address).then(
      (balance) => ({ sol: balance.sol, funded: BigInt(balance.lamports) > 0n }),
      () => ({ error: "unreadable" }),
    ),
    { ms: BALANCE_WAIT_MS, fallback: { error: "timeout" } },
  );
}

async function findPlayers(
  kv: Deno.Kv,
  projectId: string,
  query: string,
): Promise<{ players: PlayerRow[]; queryProblem: string | null; truncated: boolean }> {
  if (query === "") {
    const links = await listLinks(kv, projectId, PLAYERS_PAGE_SIZE + 1);
    return {
      players: links.slice(0, PLAYERS_PAGE_SIZE),
      queryProblem: null,
      truncated: links.length > PLAYERS_PAGE_SIZE,
    };
  }
  const userId = parseUserId(query);
  if (userId !== null) {
    const link = await getLinkByUser(kv, projectId, userId);
    return { players: link ? [{ userId, ...link }] : [], queryProblem: null, truncated: false };
  }
  if (parseAddress(query)) {
    const link = await getLinkByAddress(kv, projectId, query);
    return {
      players: link ? [{ userId: link.userId, address: query, linkedAt: link.linkedAt }] : [],
      queryProblem: null,
      truncated: false,
    };
  }
  return {
    players: [],
    queryProblem: "Enter a Roblox user ID (digits, no leading zero) or a Solana wallet address.",
    truncated: false,
  };
}
