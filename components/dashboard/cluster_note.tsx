/**
 * Which cluster a project's keys pay on, said beside every key, its snippet and its creation form:
 * a key reads `blk_live_` on devnet too (the spec fixes its shape), so the page says what it spends.
 */
import type { VNode } from "preact";
import type { Cluster } from "../../core/cluster.ts";

/** "Pays on devnet (test SOL)" or, in the alarm colour, "Pays on mainnet: real money". */
export function ClusterNote({ cluster }: { cluster: Cluster }): VNode {
  return cluster === "mainnet"
    ? <span class="badge err" data-testid="key-cluster">Pays on mainnet: real money</span>
    : <span class="badge" data-testid="key-cluster">Pays on devnet (test SOL)</span>;
}
