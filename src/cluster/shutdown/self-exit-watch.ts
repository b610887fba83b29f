/**
 * SelfExitWatch: follows this member's own way out of the cluster — Leaving, Exiting,
 * Down, Removed — for the cluster shutdown tasks, which must wait for those steps.
 *
 * Removal is not always visible as a status: a member usually learns it was removed from
 * a gossip that no longer lists it, which the Cluster driver reports through
 * `registerOnMemberRemoved` (also used when it sees itself downed) and not as an event.
 * So the watch combines the Cluster's events with that callback, and `until` re-checks
 * its predicate after each of them.
 *
 * Waits end when the predicate holds or the AbortSignal fires (the phase timed out);
 * they never reject. Disposing the watch ends every wait and unsubscribes.
 */
import type { Disposable } from "../../base/disposable.js";
import type { ClusterEvent } from "../../core/membership/cluster-events.js";
import type { MemberStatus } from "../../core/membership/member-status.js";
import { uniqueAddressToString } from "../../core/membership/unique-address.js";
import type { Cluster } from "../membership/cluster.js";

/** This member's exit, as the watch sees it. */
export type SelfExitState =
  /** Not (yet) a member: never joined, so there is nothing to leave. */
  "not-member" | "member" | "leaving" | "exiting" | "downed" | "removed";

interface Waiter {
  readonly done: (state: SelfExitState) => boolean;
  readonly resolve: () => void;
}

/** See the module comment. */
export class SelfExitWatch implements Disposable {
  private removed = false;
  private disposed = false;
  private readonly waiters = new Set<Waiter>();
  private readonly listeners = new Set<(event: SelfExitEvent) => void>();
  private readonly subscription: Disposable;

  constructor(private readonly cluster: Cluster) {
    this.subscription = cluster.subscribe((e) => this.onEvent(e));
    cluster.registerOnMemberRemoved(() => this.onSelfRemoved());
  }

  /** Where this member is on its way out. */
  get state(): SelfExitState {
    const me = this.cluster.selfMember;
    if (me?.status === "down") return "downed";
    if (this.removed) return "removed";
    if (me === undefined) return "not-member";
    return stateOf(me.status);
  }

  /** Calls `listener` when this member is seen leaving/exiting, downed or removed. */
  onExit(listener: (event: SelfExitEvent) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Resolves when `done(state)` holds, or `signal` aborts, or the watch is disposed. */
  until(done: (state: SelfExitState) => boolean, signal: AbortSignal): Promise<void> {
    if (this.disposed || signal.aborted || done(this.state)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        done,
        resolve: () => {
          this.waiters.delete(waiter);
          signal.removeEventListener("abort", waiter.resolve);
          resolve();
        },
      };
      this.waiters.add(waiter);
      signal.addEventListener("abort", waiter.resolve, { once: true });
    });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.subscription.dispose();
    this.listeners.clear();
    for (const w of [...this.waiters]) w.resolve();
  }

  private onEvent(e: ClusterEvent): void {
    if (this.disposed) return;
    if (
      (e.type === "member-left" || e.type === "member-exited") &&
      uniqueAddressToString(e.member.uniqueAddress) === uniqueAddressToString(this.cluster.self)
    )
      this.emit("leaving");
    this.recheck();
  }

  private onSelfRemoved(): void {
    if (this.disposed) return;
    this.removed = true;
    this.emit(this.cluster.selfMember?.status === "down" ? "downed" : "removed");
    this.recheck();
  }

  private emit(event: SelfExitEvent): void {
    for (const l of [...this.listeners]) l(event);
  }

  private recheck(): void {
    const state = this.state;
    for (const w of [...this.waiters]) if (w.done(state)) w.resolve();
  }
}

/** What `onExit` reports. */
export type SelfExitEvent = "leaving" | "downed" | "removed";

function stateOf(status: MemberStatus): SelfExitState {
  switch (status) {
    case "leaving":
      return "leaving";
    case "exiting":
      return "exiting";
    case "down":
      return "downed";
    case "removed":
      return "removed";
    default:
      return "member";
  }
}
