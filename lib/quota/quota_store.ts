/**
 * Writes quota rounds: the counters of several projects in one atomic commit that checks each
 * counter as this instance last saw it. Checks on the counters themselves, not on shared keys, so
 * instances sharing one store only conflict when they count the same project at the same moment.
 * What this instance wrote last is remembered, so a busy project needs no read before its next
 * round; a failed check forgets the round's projects, re-reads them and plans again. Each round
 * writes its id into the counters, so a round whose answer was lost on the network (a remote store)
 * is recognised as applied instead of being counted twice.
 */
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { ulid } from "../../core/ids.ts";
import { log } from "../../core/log.ts";
import { must } from "../../core/must.ts";
import { getManyAtOnce } from "../../kv/get_many.ts";
import { type RequestCounts, requestCountsKey } from "../../kv/request_counts.ts";
import { addRequestUsage } from "../../kv/usage.ts";
import { KnownEntries } from "../../kv/known_entries.ts";
import { planProject, type ProjectPlan, type ProjectRequest } from "./quota_plan.ts";

// Bounds memory: past this many contested projects, start again.
const MAX_CONTESTED = 50_000;
// A project another instance counted lately is read before each round for this long: a remembered
// copy would fail its check and cost a round trip more.
const CONTESTED_MS = 10_000;

/** The store side of the request quota for one instance. */
export class QuotaStore {
  #contested = new Map<string, number>();

  /** The counters as this instance last read or wrote them. */
  private known = new KnownEntries();

  constructor(private kv: Deno.Kv, private now: () => number) {}

  /** Plans and commits one round (one check per project: at most 10 on a remote store); returns each plan. */
  async commit(round: Array<{ id: string; request: ProjectRequest }>): Promise<ProjectPlan[]> {
    return await commitWithRetry("count requests", async () => {
      const entries = await this.#read(round.map((r) => r.id));
      const now = this.now();
      const roundId = ulid(now);
      const op = this.kv.atomic();
      const plans = round.map(({ id, request }, i) => {
        const entry = must(entries[i], `the counters of ${id}`);
        const plan = planProject(entry.value, request, now);
        plan.next.round = roundId;
        op.check(entry).set(requestCountsKey(id), plan.next);
        for (const { minute, n } of plan.used) {
          addRequestUsage(op, id, { at: minute * 60_000, count: n });
        }
        return plan;
      });
      const versionstamp = await this.#commitOnce(op, round.map((r) => r.id), roundId);
      if (versionstamp) {
        this.known.remember(round.map(({ id }, i) => {
          const { next } = must(plans[i], `the plan of ${id}`);
          return { key: requestCountsKey(id), value: next, versionstamp };
        }));
        return plans;
      }
      // Another instance counted one of these projects: read them afresh, and keep reading.
      const until = performance.now() + CONTESTED_MS;
      this.known.forget(round.map(({ id }) => requestCountsKey(id)));
      for (const { id } of round) this.#contested.set(id, until);
      // Which check failed is not told: retried one by one, a conflict on one project cannot keep
      // failing the others.
      if (round.length > 1) return (await Promise.all(round.map((r) => this.commit([r])))).flat();
      return RETRY;
    });
  }

  /** Keeps counters another commit of this instance wrote (`quota_fold.ts`). */
  remember(entry: Deno.KvEntry<RequestCounts>): void {
    this.known.remember([entry]);
  }

  /** Commits; when the answer is lost, the counters tell whether this round applied. */
  async #commitOnce(
    op: Deno.AtomicOperation,
    ids: string[],
    roundId: string,
  ): Promise<string | null> {
    let lost: unknown;
    try {
      const result = await op.commit();
      if (result.ok) return result.versionstamp;
    } catch (error) {
      lost = error;
    }
    const entries = await this.#getCounts(ids);
    const [first] = entries;
    if (first && entries.every((e) => e.value?.round === roundId)) return first.versionstamp;
    if (lost) log("warn", "A request count commit failed; counting again", { error: lost });
    return null;
  }

  /** The counters of `ids`, from memory where this instance wrote them last, else from the store. */
  async #read(ids: string[]): Promise<Deno.KvEntryMaybe<RequestCounts>[]> {
    if (this.#contested.size > MAX_CONTESTED) this.#contested.clear();
    const now = performance.now();
    const known = ids.map((id) =>
      (this.#contested.get(id) ?? 0) > now
        ? null
        : this.known.entries([requestCountsKey(id)])?.[0] as Deno.KvEntryMaybe<RequestCounts>
    );
    const missing = ids.flatMap((_, i) => known[i] ? [] : [i]);
    if (missing.length > 0) {
      const entries = await this.#getCounts(missing.map((i) => ids[i]!));
      this.known.remember(entries);
      missing.forEach((at, i) => known[at] = must(entries[i], `the counters of ${ids[at]}`));
    }
    return known as Deno.KvEntryMaybe<RequestCounts>[];
  }

  #getCounts(ids: string[]): Promise<Deno.KvEntryMaybe<RequestCounts>[]> {
    return getManyAtOnce<RequestCounts>(this.kv, ids.map(requestCountsKey));
  }
}
