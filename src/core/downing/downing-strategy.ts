/**
 * The Split Brain Resolver strategies: each maps one side's view of a partition to a
 * decision about WHICH side goes down (which nodes exactly is downing-decision.ts).
 *
 * Rules (sizes are counted members, see sbr-view.ts; "lowest" is member order):
 * - keep-majority: the side with more counted members (with the role) stays; on a tie
 *   the side holding the lowest-address counted member stays. Then re-checked with
 *   membership changes that may have happened on the other side during the partition
 *   (this side without leaving members, the other side with joining / weakly-up ones
 *   and with unreachable members that are down but not removed yet, tie broken by the
 *   lowest address counted on either side); if the re-check no longer keeps this side,
 *   down all. No counted member: down all.
 * - static-quorum: more than 2 * quorumSize - 1 members (with the role; joining and
 *   weakly-up included, since they may be up on the other side): down all, both sides
 *   could reach the quorum. Else a side with >= quorumSize reachable counted members
 *   downs the unreachable, a smaller side downs itself.
 * - keep-oldest: the side with the oldest counted member (lowest up-number) stays. With
 *   downIfAlone, an oldest that is alone while the other side has >= 2 members goes
 *   down instead and the other side stays. Re-checked as keep-majority is, with leaving
 *   members excluded (they may be exiting on the other side); disagreement: down all.
 * - down-all: every node goes down.
 * - auto-down (opt-in, see auto-down.ts): this side stays, every unreachable member goes
 *   down, whatever the sizes — so each side of a partition downs the other.
 * - lease-majority: the side that acquires the lease stays, the other downs itself; the
 *   minority side (keep-majority's sizes and tie rule) waits acquireLeaseDelayForMinorityMs
 *   before trying, so the majority normally wins.
 * - Indirectly connected nodes (all strategies but down-all, after static-quorum's
 *   size check): those nodes go down, and the strategy is applied again to the rest.
 */

import { hasRole, type Member } from "../membership/member.js";
import { compareByAge, compareMembers } from "../membership/member-ordering.js";
import type { SbrSettings } from "./sbr-settings.js";
import {
  COUNT_DEFAULT,
  counted,
  indirectlyConnectedOf,
  isUnreachable,
  type SbrContext,
  sides,
} from "./sbr-view.js";

/** A configured strategy. */
export type DowningStrategy =
  | { readonly type: "keep-majority"; readonly role?: string | undefined }
  | {
      readonly type: "static-quorum";
      readonly quorumSize: number;
      readonly role?: string | undefined;
    }
  | {
      readonly type: "keep-oldest";
      readonly downIfAlone: boolean;
      readonly role?: string | undefined;
    }
  | { readonly type: "down-all" }
  | {
      readonly type: "lease-majority";
      readonly acquireLeaseDelayForMinorityMs: number;
      readonly role?: string | undefined;
    }
  | { readonly type: "auto-down" };

/** The active strategy of validated settings. */
export function downingStrategyOf(settings: SbrSettings): DowningStrategy {
  switch (settings.activeStrategy) {
    case "keep-majority":
      return { type: "keep-majority", role: settings.keepMajority.role };
    case "static-quorum":
      return { type: "static-quorum", ...settings.staticQuorum };
    case "keep-oldest":
      return { type: "keep-oldest", ...settings.keepOldest };
    case "down-all":
      return { type: "down-all" };
    case "lease-majority":
      return {
        type: "lease-majority",
        acquireLeaseDelayForMinorityMs: settings.leaseMajority.acquireLeaseDelayForMinorityMs,
        role: settings.leaseMajority.role,
      };
    case "auto-down":
      return { type: "auto-down" };
  }
}

/** Which side goes down, before it is turned into nodes. */
export type StrategyDecision =
  | { readonly kind: "down-unreachable" }
  | { readonly kind: "down-reachable" }
  | { readonly kind: "down-all" }
  | { readonly kind: "down-indirectly-connected" }
  | { readonly kind: "acquire-lease-and-down-unreachable"; readonly delayMs: number }
  | { readonly kind: "acquire-lease-and-down-indirectly-connected"; readonly delayMs: number };

/** A decision and a one-line explanation. */
export interface Explained {
  readonly decision: StrategyDecision;
  readonly why: string;
}

type Side = "down-unreachable" | "down-reachable";

const DOWN_UNREACHABLE = { kind: "down-unreachable" } as const;
const DOWN_REACHABLE = { kind: "down-reachable" } as const;
const DOWN_ALL = { kind: "down-all" } as const;
const DOWN_INDIRECT = { kind: "down-indirectly-connected" } as const;

function roleText(role: string | undefined): string {
  return role === undefined ? "members" : `members with role ${role}`;
}

function majority(ctx: SbrContext, here: number, there: number, lowest: Member): Side {
  if (here === there) return isUnreachable(ctx, lowest) ? "down-reachable" : "down-unreachable";
  return here > there ? "down-unreachable" : "down-reachable";
}

/** keep-majority's sizes before the membership-change re-check. */
function majoritySide(ctx: SbrContext, role: string | undefined): Side | undefined {
  const ms = counted(ctx, COUNT_DEFAULT, role);
  if (ms.length === 0) return undefined;
  const [here, there] = sides(ctx, ms);
  return majority(ctx, here, there, ms[0] as Member);
}

/**
 * The re-check for membership changes made during the partition: this side counted as
 * small as possible (no joining, no leaving), the other side as large as possible
 * (joining and leaving included, and unreachable members that are down but not yet
 * removed: a node downed while cut off may not know it and still run on the other side,
 * e.g. when an earlier decision was taken before a new partition was detected and
 * counted part of the other side as this one). The tie-breaker is the lowest address
 * among the members counted on EITHER side, so a member that may already be up on the
 * other side takes part in it (a tie-breaker among this side's view of up members only
 * could keep both sides running).
 */
function majorityWithConcurrentChanges(
  ctx: SbrContext,
  role: string | undefined,
): Side | undefined {
  const mine = counted(ctx, { includingPossiblyUp: false, excludingPossiblyExiting: true }, role);
  const theirs = counted(ctx, { includingPossiblyUp: true, excludingPossiblyExiting: false }, role);
  const downThere = ctx.all.filter(
    (m) => m.status === "down" && (role === undefined || hasRole(m, role)),
  );
  const here = mine.filter((m) => !isUnreachable(ctx, m));
  const there = [...theirs, ...downThere].filter((m) => isUnreachable(ctx, m));
  const lowest = [...here, ...there].sort(compareMembers)[0];
  if (lowest === undefined) return undefined;
  return majority(ctx, here.length, there.length, lowest);
}

function keepMajority(ctx: SbrContext, role: string | undefined): Explained {
  const ms = counted(ctx, COUNT_DEFAULT, role);
  const [here, there] = sides(ctx, ms);
  const side = majoritySide(ctx, role);
  const what = `${here} reachable vs ${there} unreachable ${roleText(role)}`;
  if (side === undefined) return { decision: DOWN_ALL, why: `no ${roleText(role)}` };
  if (side === "down-reachable") return { decision: DOWN_REACHABLE, why: `minority: ${what}` };
  if (majorityWithConcurrentChanges(ctx, role) !== "down-unreachable")
    return {
      decision: DOWN_ALL,
      why: `majority only without concurrent membership changes: ${what}`,
    };
  return { decision: DOWN_UNREACHABLE, why: `majority: ${what}` };
}

function staticQuorum(ctx: SbrContext, quorumSize: number, role: string | undefined): Explained {
  const ms = counted(ctx, COUNT_DEFAULT, role);
  // The size guard counts joining / weakly-up members too: they may be up on the other
  // side, and a cluster above 2 * quorumSize - 1 lets both sides reach the quorum.
  const size = counted(
    ctx,
    { includingPossiblyUp: true, excludingPossiblyExiting: false },
    role,
  ).length;
  if (size > quorumSize * 2 - 1)
    return {
      decision: DOWN_ALL,
      why: `${size} ${roleText(role)} exceed 2 * quorumSize - 1 = ${quorumSize * 2 - 1}`,
    };
  if (indirectlyConnectedOf(ctx).all.size > 0)
    return { decision: DOWN_INDIRECT, why: "indirectly connected nodes" };
  const [here] = sides(ctx, ms);
  const what = `${here} reachable ${roleText(role)}, quorumSize ${quorumSize}`;
  return here >= quorumSize
    ? { decision: DOWN_UNREACHABLE, why: `quorum: ${what}` }
    : { decision: DOWN_REACHABLE, why: `no quorum: ${what}` };
}

function oldestDecision(oldestHere: boolean, here: number, there: number, alone: boolean): Side {
  if (oldestHere) return alone && here === 1 && there >= 2 ? "down-reachable" : "down-unreachable";
  return alone && there === 1 && here >= 2 ? "down-unreachable" : "down-reachable";
}

function oldestSide(
  ctx: SbrContext,
  downIfAlone: boolean,
  role: string | undefined,
  recheck: boolean,
): Side | undefined {
  const candidates = counted(
    ctx,
    { includingPossiblyUp: false, excludingPossiblyExiting: recheck },
    role,
  );
  const oldest = [...candidates].sort(compareByAge)[0];
  if (oldest === undefined) return undefined;
  const countOptions = recheck
    ? { includingPossiblyUp: downIfAlone, excludingPossiblyExiting: true }
    : COUNT_DEFAULT;
  const [here, there] = sides(ctx, counted(ctx, countOptions, role));
  return oldestDecision(!isUnreachable(ctx, oldest), here, there, downIfAlone);
}

function keepOldest(ctx: SbrContext, downIfAlone: boolean, role: string | undefined): Explained {
  const side = oldestSide(ctx, downIfAlone, role, false);
  if (side === undefined) return { decision: DOWN_ALL, why: `no ${roleText(role)}` };
  if (side === "down-reachable")
    return { decision: DOWN_REACHABLE, why: "the oldest is on the other side (or alone here)" };
  if (oldestSide(ctx, downIfAlone, role, true) !== "down-unreachable")
    return { decision: DOWN_ALL, why: "oldest side unclear with concurrent membership changes" };
  return { decision: DOWN_UNREACHABLE, why: "the oldest is on this side" };
}

function leaseMajority(ctx: SbrContext, delayMs: number, role: string | undefined): Explained {
  if (indirectlyConnectedOf(ctx).all.size > 0)
    return {
      decision: { kind: "acquire-lease-and-down-indirectly-connected", delayMs: 0 },
      why: "indirectly connected nodes",
    };
  const minority = majoritySide(ctx, role) === "down-reachable";
  return {
    decision: { kind: "acquire-lease-and-down-unreachable", delayMs: minority ? delayMs : 0 },
    why: minority ? "minority side: acquire the lease after a delay" : "majority side",
  };
}

/** The strategy's decision for one side's view (see the module comment). */
export function strategyDecision(strategy: DowningStrategy, ctx: SbrContext): Explained {
  if (strategy.type === "down-all") return { decision: DOWN_ALL, why: "down-all strategy" };
  // auto-down keeps its own side whatever its size (auto-down.ts decides when).
  if (strategy.type === "auto-down")
    return { decision: DOWN_UNREACHABLE, why: "auto-down: every unreachable member goes down" };
  if (strategy.type === "static-quorum")
    return staticQuorum(ctx, strategy.quorumSize, strategy.role);
  if (strategy.type === "lease-majority")
    return leaseMajority(ctx, strategy.acquireLeaseDelayForMinorityMs, strategy.role);
  if (indirectlyConnectedOf(ctx).all.size > 0)
    return { decision: DOWN_INDIRECT, why: "indirectly connected nodes" };
  switch (strategy.type) {
    case "keep-majority":
      return keepMajority(ctx, strategy.role);
    case "keep-oldest":
      return keepOldest(ctx, strategy.downIfAlone, strategy.role);
  }
}
