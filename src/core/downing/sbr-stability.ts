/**
 * When the Split Brain Resolver may decide: only after the unreachable members
 * (sbr-view.ts `unreachableMembersOf`, with their statuses) have not changed for
 * stableAfterMs, so that a partition is judged once it has settled rather than while
 * the failure detectors are still flapping. Fed with the current unreachable members
 * and the time; says idle / wait / decide / down-all-unstable. No timer inside: the
 * driver polls `tick` (e.g. every second).
 *
 * Rules:
 * - any change of the unreachable members (one more, one less, one changed status)
 *   restarts the stable period and counts as a reachability change of the episode;
 * - the episode's change statistics are cleared when nothing is unreachable any more,
 *   when every unreachable member is down or exiting (being removed), after a decision
 *   was acted upon (`decisionApplied`), and when nothing changed for 2 * stableAfterMs;
 * - once something is unreachable and stable, the LEADER decides (`decide`); other
 *   nodes wait;
 * - instability: if the episode's first change is more than stableAfterMs +
 *   downAllWhenUnstableMs ago (changes kept coming, so no decision was applied), every
 *   node, leader or not, downs all (`down-all-unstable`); 0 disables this;
 * - after a decision was acted upon the stable period restarts, which gives the downing
 *   time to spread before any further decision.
 */
import { assert } from "../../base/assert.js";
import type { Member } from "../membership/member.js";
import { compareMembers } from "../membership/member-ordering.js";
import { uniqueAddressToString } from "../membership/unique-address.js";

/** Timing settings (see sbr-settings.ts for the derived down-all bound). */
export interface SbrStabilitySettings {
  readonly stableAfterMs: number;
  /** 0 = never down all for instability. */
  readonly downAllWhenUnstableMs: number;
}

/** What to do now. */
export type SbrTick =
  /** Nothing is unreachable. */
  | { readonly type: "idle" }
  /** Not stable yet (until `untilMs` if nothing changes), or stable but not the leader. */
  | { readonly type: "wait"; readonly reason: "unstable" | "not-leader"; readonly untilMs: number }
  /** Stable and leader: decide now (decideDowning). */
  | { readonly type: "decide" }
  /** Unstable for too long: down all (decideDowning with the down-all strategy). */
  | { readonly type: "down-all-unstable"; readonly unstableForMs: number };

/** Reachability change statistics of the current episode. */
export interface SbrChangeStats {
  readonly changeCount: number;
  readonly firstChangeAtMs: number | undefined;
  readonly latestChangeAtMs: number | undefined;
}

/** Multiple of stableAfterMs without change after which the statistics are cleared. */
const STATS_RESET_AFTER_STABLE_FACTOR = 2;

/** The stability machine (see the module comment). */
export class SbrStabilityTracker {
  private unreachableKey = "";
  private unreachableCount = 0;
  private changeCount = 0;
  private firstChangeAtMs: number | undefined;
  private latestChangeAtMs: number | undefined;
  private stableDeadlineMs = 0;

  constructor(private readonly settings: SbrStabilitySettings) {
    assert(settings.stableAfterMs > 0, "stableAfterMs must be > 0");
    assert(settings.downAllWhenUnstableMs >= 0, "downAllWhenUnstableMs must be >= 0");
  }

  /** The statistics of the current episode (plain data). */
  get stats(): SbrChangeStats {
    return {
      changeCount: this.changeCount,
      firstChangeAtMs: this.firstChangeAtMs,
      latestChangeAtMs: this.latestChangeAtMs,
    };
  }

  /**
   * Feeds the current unreachable members (any order). Returns true if they differ from
   * the previous ones (nodes or statuses): a reachability change.
   */
  observe(unreachable: Iterable<Member>, nowMs: number): boolean {
    const members = [...unreachable].sort(compareMembers);
    const k = members.map((m) => `${uniqueAddressToString(m.uniqueAddress)}=${m.status}`).join(" ");
    if (k === this.unreachableKey) return false;
    this.unreachableKey = k;
    this.unreachableCount = members.length;
    this.stableDeadlineMs = nowMs + this.settings.stableAfterMs;
    if (members.every((m) => m.status === "down" || m.status === "exiting")) {
      this.resetStats();
      return true;
    }
    if (this.changeCount === 0) this.firstChangeAtMs = nowMs;
    this.changeCount += 1;
    this.latestChangeAtMs = nowMs;
    return true;
  }

  /** What to do at `nowMs`; `isLeader`: whether self leads its (reachable) side. */
  tick(nowMs: number, isLeader: boolean): SbrTick {
    if (this.unreachableCount === 0) return { type: "idle" };
    const unstable = this.checkInstability(nowMs);
    if (unstable !== undefined) return unstable;
    if (nowMs < this.stableDeadlineMs)
      return { type: "wait", reason: "unstable", untilMs: this.stableDeadlineMs };
    if (!isLeader) return { type: "wait", reason: "not-leader", untilMs: nowMs };
    return { type: "decide" };
  }

  /** A decision was acted upon at `nowMs`: clear the episode, restart the stable period. */
  decisionApplied(nowMs: number): void {
    this.resetStats();
    this.stableDeadlineMs = nowMs + this.settings.stableAfterMs;
  }

  private checkInstability(nowMs: number): SbrTick | undefined {
    const { stableAfterMs, downAllWhenUnstableMs } = this.settings;
    const first = this.firstChangeAtMs;
    const latest = this.latestChangeAtMs;
    if (this.changeCount === 0 || first === undefined || latest === undefined) return undefined;
    if (nowMs - latest > stableAfterMs * STATS_RESET_AFTER_STABLE_FACTOR) {
      this.resetStats();
      return undefined;
    }
    const unstableForMs = nowMs - first;
    if (downAllWhenUnstableMs > 0 && unstableForMs > stableAfterMs + downAllWhenUnstableMs)
      return { type: "down-all-unstable", unstableForMs };
    return undefined;
  }

  private resetStats(): void {
    this.changeCount = 0;
    this.firstChangeAtMs = undefined;
    this.latestChangeAtMs = undefined;
  }
}
