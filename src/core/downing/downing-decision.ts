/**
 * The Split Brain Resolver's decision: which nodes to down, computed from one node's
 * view by the configured strategy (downing-strategy.ts). Pure: the stability timing is
 * sbr-stability.ts, the lease is acquired by the driver and fed back as an input.
 *
 * From a side decision to nodes (only downable nodes, i.e. not already down or
 * exiting, are ever listed):
 * - down-unreachable: the unreachable ones; down-reachable: the reachable ones (this
 *   side, self included); down-all: every downable node;
 * - down-indirectly-connected: the indirectly connected nodes, plus what the strategy
 *   decides about the remaining unreachable nodes once the records between indirectly
 *   connected nodes (and records involving non-downable nodes) are dropped; if that
 *   second look again finds indirectly connected nodes, down all;
 * - lease-majority: without `leaseAcquired` the outcome is "acquire-lease" (after
 *   `delayMs`); with the lease this side keeps running (down-unreachable or
 *   down-indirectly-connected); without it this side downs itself (down-reachable, or
 *   the indirectly connected plus the reachable ones).
 * Nothing is decided while no member (other than self) is unreachable; with only down or
 * exiting members unreachable a decision is still made (it may down this side). Output
 * lists are sorted by node order; the driver should down self last (`selfDowned`).
 */
import { assertNever } from "../../base/assert.js";
import {
  uniqueAddressToString as nodeKey,
  type UniqueAddress,
  uniqueAddressEquals,
} from "../membership/unique-address.js";
import {
  type DowningStrategy,
  type StrategyDecision,
  strategyDecision,
} from "./downing-strategy.js";
import {
  contextOf,
  downableKeys,
  type IndirectlyConnected,
  indirectlyConnectedOf,
  nodesOf,
  type SbrContext,
  type SbrView,
  unreachableMembersOf,
  withRecords,
} from "./sbr-view.js";

/** What the final decision downs. */
export type SbrDecisionKind =
  | "down-unreachable"
  | "down-reachable"
  | "down-all"
  | "down-indirectly-connected"
  | "reverse-down-indirectly-connected";

/** A decision to act upon. */
export interface SbrDownDecision {
  readonly type: "down";
  readonly decision: SbrDecisionKind;
  /** The nodes to down, sorted by node order. */
  readonly down: readonly UniqueAddress[];
  /** True if `down` contains self (down the others first). */
  readonly selfDowned: boolean;
  /** The indirectly connected nodes found (sorted; usually empty). */
  readonly indirectlyConnected: readonly UniqueAddress[];
  /** Human-readable explanation for logs. */
  readonly reason: string;
}

/** Outcome of one decision attempt. */
export type SbrOutcome =
  | { readonly type: "no-decision"; readonly reason: "nothing-unreachable" }
  /** lease-majority: acquire the lease after `delayMs`, then decide again with the result. */
  | { readonly type: "acquire-lease"; readonly delayMs: number; readonly reason: string }
  | SbrDownDecision;

/** Inputs besides the view. */
export interface DecideDowningOptions {
  /** lease-majority only: whether this side holds the lease (undefined: not tried yet). */
  readonly leaseAcquired?: boolean;
}

function finalKind(
  decision: StrategyDecision,
  leaseAcquired: boolean | undefined,
): SbrDecisionKind | undefined {
  switch (decision.kind) {
    case "down-unreachable":
    case "down-reachable":
    case "down-all":
    case "down-indirectly-connected":
      return decision.kind;
    case "acquire-lease-and-down-unreachable":
      if (leaseAcquired === undefined) return undefined;
      return leaseAcquired ? "down-unreachable" : "down-reachable";
    case "acquire-lease-and-down-indirectly-connected":
      if (leaseAcquired === undefined) return undefined;
      return leaseAcquired ? "down-indirectly-connected" : "reverse-down-indirectly-connected";
    default:
      return assertNever(decision, "strategy decision");
  }
}

/** The nodes the strategy downs among the unreachable that are not indirectly connected. */
function additionalWhenIndirect(
  ctx: SbrContext,
  strategy: DowningStrategy,
  downable: ReadonlySet<string>,
  ic: IndirectlyConnected,
): Set<string> | "down-all" {
  if ([...ctx.unreachable].every((k) => ic.all.has(k))) return new Set();
  const { cycle, seenWhileUnreachable: seen } = ic;
  const records = ctx.records.filter((r) => {
    const o = nodeKey(r.observer);
    const s = nodeKey(r.subject);
    if (!downable.has(o) || !downable.has(s)) return false;
    return !((cycle.has(o) && cycle.has(s)) || (seen.has(o) && seen.has(s)));
  });
  const rest = withRecords(ctx, records);
  const second = strategyDecision(strategy, rest).decision;
  switch (second.kind) {
    case "down-indirectly-connected":
    case "acquire-lease-and-down-indirectly-connected":
      return "down-all";
    case "acquire-lease-and-down-unreachable":
      return nodesToDown("down-unreachable", rest, strategy).keys;
    default:
      return nodesToDown(second.kind, rest, strategy).keys;
  }
}

interface Downed {
  readonly kind: SbrDecisionKind;
  readonly keys: Set<string>;
}

function nodesToDown(kind: SbrDecisionKind, ctx: SbrContext, strategy: DowningStrategy): Downed {
  const downable = downableKeys(ctx);
  const only = (keep: (k: string) => boolean) => new Set([...downable].filter(keep));
  switch (kind) {
    case "down-unreachable":
      return { kind, keys: only((k) => ctx.unreachable.has(k)) };
    case "down-reachable":
      return { kind, keys: only((k) => !ctx.unreachable.has(k)) };
    case "down-all":
      return { kind, keys: only(() => true) };
    case "down-indirectly-connected": {
      const ic = indirectlyConnectedOf(ctx);
      const extra = additionalWhenIndirect(ctx, strategy, downable, ic);
      if (extra === "down-all") return { kind: "down-all", keys: only(() => true) };
      return { kind, keys: only((k) => ic.all.has(k) || extra.has(k)) };
    }
    case "reverse-down-indirectly-connected": {
      const ic = indirectlyConnectedOf(ctx);
      return { kind, keys: only((k) => ic.all.has(k) || !ctx.unreachable.has(k)) };
    }
    default:
      return assertNever(kind, "decision kind");
  }
}

function leaseText(leaseAcquired: boolean | undefined): string {
  if (leaseAcquired === undefined) return "";
  return leaseAcquired ? " (lease acquired)" : " (lease not acquired)";
}

/**
 * The decision of `strategy` for `view` (see the module comment). Deterministic: the
 * same inputs give the same outcome on every node.
 */
export function decideDowning(
  strategy: DowningStrategy,
  view: SbrView,
  options: DecideDowningOptions = {},
): SbrOutcome {
  if (unreachableMembersOf(view).length === 0)
    return { type: "no-decision", reason: "nothing-unreachable" };
  const ctx = contextOf(view);
  const { decision, why } = strategyDecision(strategy, ctx);
  const reason = `${strategy.type}: ${why}`;
  const kind = finalKind(decision, options.leaseAcquired);
  if (kind === undefined) {
    const delayMs = "delayMs" in decision ? decision.delayMs : 0;
    return { type: "acquire-lease", delayMs, reason };
  }
  const downed = nodesToDown(kind, ctx, strategy);
  const down = nodesOf(ctx, downed.keys);
  const indirect = indirectlyConnectedOf(ctx).all;
  return {
    type: "down",
    decision: downed.kind,
    down,
    selfDowned: down.some((n) => uniqueAddressEquals(n, view.self)),
    indirectlyConnected: nodesOf(ctx, indirect),
    reason: `${reason}${leaseText(options.leaseAcquired)}${
      downed.kind !== kind ? "; indirectly connected again after excluding them: down all" : ""
    }`,
  };
}
