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
 *   downAllWhenUnstableMs ago (changes kept coming, so no decision was applied) AND at
 *   least one member of the episode has been unreachable without interruption for at
 *   least stableAfterMs (a persistent failure the view cannot settle around), every
 *   node, leader or not, downs all (`down-all-unstable`); 0 disables this. Members that
 *   each come back within stableAfterMs (slow, overloaded, paused members: the
 *   unreachable set changes but nobody stays away) never down all: the resolver keeps
 *   waiting for a stable view;
 * - the episode (change statistics and the persistent-failure clock) is fed only with the
 *   `relevant` unreachable members given to `observe` (by default all of them): the
 *   driver leaves out members that were never up together with an observer of theirs
 *   (a boot storm's joiners), so their churn restarts the stable period but never counts
 *   towards downing all;
 * - after a decision was acted upon the stable period restarts, which gives the downing
 *   time to spread before any further decision;
 * - `excuse(pauseMs)`: this node itself was stalled for pauseMs (self-stall.ts); it saw
 *   nothing in that time, so the stable deadline and the episode's clocks move forward
 *   by the pause (it decides on as much observed stability as without the stall).
 */
import { assert, fail } from "../../base/assert.js";
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

function keyOf(members: readonly Member[]): string {
  return members.map((m) => `${uniqueAddressToString(m.uniqueAddress)}=${m.status}`).join(" ");
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
  private relevantKey = "";
  /** Relevant unreachable members (by node) and since when they are unreachable. */
  private unreachableSince = new Map<string, number>();

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
   * Feeds the current unreachable members (any order) and, optionally, the subset that
   * counts towards instability (default: all of them). Returns true if the unreachable
   * members differ from the previous ones (nodes or statuses): a reachability change.
   */
  observe(unreachable: Iterable<Member>, nowMs: number, relevant?: Iterable<Member>): boolean {
    const members = [...unreachable].sort(compareMembers);
    const k = keyOf(members);
    const rel = relevant === undefined ? members : [...relevant].sort(compareMembers);
    const rk = relevant === undefined ? k : keyOf(rel);
    this.trackSince(rel, nowMs);
    const changed = k !== this.unreachableKey;
    const relevantChanged = rk !== this.relevantKey;
    this.relevantKey = rk;
    if (changed) {
      this.unreachableKey = k;
      this.unreachableCount = members.length;
      this.stableDeadlineMs = nowMs + this.settings.stableAfterMs;
    }
    if (!relevantChanged) return changed;
    if (rel.every((m) => m.status === "down" || m.status === "exiting")) {
      this.resetStats();
      return changed;
    }
    if (this.changeCount === 0) this.firstChangeAtMs = nowMs;
    this.changeCount += 1;
    this.latestChangeAtMs = nowMs;
    return changed;
  }

  /**
   * This node was stalled for `pauseMs` up to `nowMs`: the stable deadline and the
   * episode's clocks move forward by it (never past `nowMs` for the clocks).
   */
  excuse(pauseMs: number, nowMs: number): void {
    if (!(Number.isFinite(pauseMs) && pauseMs >= 0)) fail(`pause must be finite, >= 0: ${pauseMs}`);
    if (pauseMs === 0) return;
    const shift = (t: number) => Math.min(nowMs, t + pauseMs);
    this.stableDeadlineMs += pauseMs;
    if (this.firstChangeAtMs !== undefined) this.firstChangeAtMs = shift(this.firstChangeAtMs);
    if (this.latestChangeAtMs !== undefined) this.latestChangeAtMs = shift(this.latestChangeAtMs);
    for (const [k, t] of this.unreachableSince) this.unreachableSince.set(k, shift(t));
  }

  /** The longest uninterrupted unreachability among the relevant members at `nowMs`. */
  longestUnreachableMs(nowMs: number): number {
    let longest = 0;
    for (const t of this.unreachableSince.values()) longest = Math.max(longest, nowMs - t);
    return longest;
  }

  private trackSince(relevant: readonly Member[], nowMs: number): void {
    const next = new Map<string, number>();
    for (const m of relevant) {
      if (m.status === "down" || m.status === "exiting") continue;
      const k = uniqueAddressToString(m.uniqueAddress);
      next.set(k, this.unreachableSince.get(k) ?? nowMs);
    }
    this.unreachableSince = next;
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
    if (
      downAllWhenUnstableMs > 0 &&
      unstableForMs > stableAfterMs + downAllWhenUnstableMs &&
      this.longestUnreachableMs(nowMs) >= stableAfterMs
    )
      return { type: "down-all-unstable", unstableForMs };
    return undefined;
  }

  private resetStats(): void {
    this.changeCount = 0;
    this.firstChangeAtMs = undefined;
    this.latestChangeAtMs = undefined;
  }
}
