/**
 * When this node saw each member removed, for the coordinator's removal margin
 * (coordinator-io.ts, membership input `removed`): the margin of a removed member's
 * shards counts from its removal, so a coordinator that starts on this node after the
 * coordinator singleton already waited the margin does not wait it a second time
 * (docs/sharding-coordinator.md, "Lifecycle of a shard", 5.). One recorder per sharding
 * type and node, subscribed from the type's start, so removals seen before the
 * coordinator starts here are known to it. An entry older than the margin is kept: it
 * says the margin has passed (dropping it made a coordinator that starts later, e.g.
 * after loading its state, wait the whole margin again). Bounded: at most
 * REMOVALS_TRACKED_MAX entries, the oldest dropped first.
 */
import type { Disposable } from "../../base/disposable.js";
import type { CoordinatorRemoval } from "../../core/coordinator/coordinator-io.js";
import { uniqueAddressToString } from "../../core/membership/unique-address.js";
import type { Cluster } from "../membership/cluster.js";

/** Bound of the removal table (removed incarnations remembered, oldest dropped first). */
export const REMOVALS_TRACKED_MAX = 10_000;

export class RemovalTimes implements Disposable {
  private readonly seen = new Map<string, number>();
  private readonly subscription: Disposable;

  constructor(
    cluster: Cluster,
    private readonly now: () => number,
  ) {
    this.subscription = cluster.subscribe((e) => {
      if (e.type === "member-removed") this.record(uniqueAddressToString(e.member.uniqueAddress));
    });
  }

  /** Removals seen, oldest first. */
  recent(): CoordinatorRemoval[] {
    return [...this.seen].map(([uniqueAddress, atMs]) => ({ uniqueAddress, atMs }));
  }

  dispose(): void {
    this.subscription.dispose();
  }

  private record(uniqueAddress: string): void {
    if (this.seen.has(uniqueAddress)) return;
    if (this.seen.size >= REMOVALS_TRACKED_MAX) {
      const oldest = this.seen.keys().next();
      if (!oldest.done) this.seen.delete(oldest.value);
    }
    this.seen.set(uniqueAddress, this.now());
  }
}
