/**
 * How many downing decisions this member's split brain resolver (or auto-down) took, by
 * kind: a plain count per decision, read at scrape time by the node's metrics
 * (src/observability/node-metrics.ts, `shardkit_cluster_downing_decisions_total`).
 * Decisions are rare (one per stable unreachable set), so a Map is fine here.
 */
import type { DowningDecisionKind } from "../../core/membership/membership-machine.js";

/** A decision as counted: the resolver's kinds, its down-all-when-unstable, auto-down. */
export type { DowningDecisionKind };

/** Every kind, in a fixed order (the metric shows each, 0 until it happens). */
export const DOWNING_DECISION_KINDS: readonly DowningDecisionKind[] = [
  "down-unreachable",
  "down-reachable",
  "down-all",
  "down-indirectly-connected",
  "reverse-down-indirectly-connected",
  "down-all-when-unstable",
  "auto-down",
];

/** Counts of the decisions taken (see the module comment). */
export class DowningDecisions {
  private readonly counts = new Map<DowningDecisionKind, number>();

  /** One decision of `kind` was taken (whatever the formation gate then withheld). */
  count(kind: DowningDecisionKind): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }

  /** Decisions of `kind` so far. */
  of(kind: DowningDecisionKind): number {
    return this.counts.get(kind) ?? 0;
  }
}
