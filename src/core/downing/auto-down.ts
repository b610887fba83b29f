/**
 * Auto-down (docs/cluster.md, "Auto-down"): the leader downs every member that has been
 * unreachable for at least `afterMs`, each on its own clock. Unlike the split brain
 * resolver it never asks which side should survive, so under a partition each side downs
 * the other and the cluster splits into islands that each carry on. Opt-in only.
 *
 * The tracker remembers since when each member has been unreachable (by its unique
 * address and status: a member that comes back and goes again starts a new wait).
 */

import { compareByKey } from "../../base/compare.js";
import type { Member } from "../membership/member.js";
import { uniqueAddressToString } from "../membership/unique-address.js";

/** Since when each currently unreachable member has been unreachable. */
export class AutoDownTracker {
  private readonly since = new Map<string, { member: Member; sinceMs: number }>();

  /** Records the unreachable members seen at `nowMs`; forgets those that came back. */
  observe(unreachable: Iterable<Member>, nowMs: number): void {
    const seen = new Set<string>();
    for (const m of unreachable) {
      const k = uniqueAddressToString(m.uniqueAddress);
      seen.add(k);
      this.since.set(k, { member: m, sinceMs: this.since.get(k)?.sinceMs ?? nowMs });
    }
    for (const k of [...this.since.keys()]) if (!seen.has(k)) this.since.delete(k);
  }

  /**
   * The members unreachable for at least `afterMs` at `nowMs` and not already down,
   * in address order (deterministic).
   */
  due(nowMs: number, afterMs: number): Member[] {
    return [...this.since.entries()]
      .filter(([, e]) => nowMs - e.sinceMs >= afterMs && e.member.status !== "down")
      .sort(compareByKey)
      .map(([, e]) => e.member);
  }

  /** How long `member` has been unreachable at `nowMs` (undefined: it is not). */
  unreachableForMs(member: Member, nowMs: number): number | undefined {
    const e = this.since.get(uniqueAddressToString(member.uniqueAddress));
    return e === undefined ? undefined : nowMs - e.sinceMs;
  }
}
