/**
 * The coordinator's view of cluster membership, replaced wholesale by each `membership`
 * input, and the status rules the machine applies to it:
 *
 * - a NEW region registers only from a member that is Up (sharding is not
 *   active on weakly-up members, as in Akka) and has the sharding role; a known region may
 *   re-register while its member is still alive (up .. exiting) so that it keeps a
 *   coordinator while leaving;
 * - a new shard goes only to a region whose member is Up and reachable;
 * - a member that may run shards is one with the role that is Up, leaving, exiting,
 *   preparing/ready for shutdown, or Down but not yet removed (a downed node may still run
 *   its shards on the far side of a partition until it is removed); regions recovery
 *   waits for each of them;
 * - a member that is absent (removed) takes its regions and proxies with it.
 * Rebalance is blocked (for the built-in strategies) while a member with the role is
 * unreachable, joining or weakly-up.
 */
import type { RebalanceClusterFacts } from "./allocation/region-view.js";
import type { CoordinatorMember } from "./coordinator-io.js";

const ALIVE = new Set<string>([
  "up",
  "preparing-for-shutdown",
  "ready-for-shutdown",
  "leaving",
  "exiting",
]);

/** See the module comment. `role` undefined = every member may host regions. */
export class CoordinatorMembership {
  private members = new Map<string, CoordinatorMember>();
  private received = false;

  constructor(private readonly role: string | undefined) {}

  /** True once a membership input has arrived. */
  get known(): boolean {
    return this.received;
  }

  update(members: readonly CoordinatorMember[]): void {
    this.members = new Map(members.map((m) => [m.uniqueAddress, m]));
    this.received = true;
  }

  get(uniqueAddress: string): CoordinatorMember | undefined {
    return this.members.get(uniqueAddress);
  }

  hasRole(m: CoordinatorMember): boolean {
    return this.role === undefined || m.roles.includes(this.role);
  }

  /** The member is gone for good: absent from the membership, or removed. */
  isGone(uniqueAddress: string): boolean {
    const m = this.members.get(uniqueAddress);
    return this.received && (m === undefined || m.status === "removed");
  }

  /** The member is up .. exiting (its process runs and is a cluster member). */
  isAlive(m: CoordinatorMember): boolean {
    return ALIVE.has(m.status);
  }

  /** A new shard may be allocated to a region on this member. */
  canTakeNewShards(uniqueAddress: string): boolean {
    const m = this.members.get(uniqueAddress);
    return m !== undefined && m.status === "up" && m.reachable;
  }

  /** Members with the role that may run shards (see the module comment), in input order. */
  mayRunShards(): CoordinatorMember[] {
    return [...this.members.values()].filter(
      (m) => this.hasRole(m) && (ALIVE.has(m.status) || m.status === "down"),
    );
  }

  /** Facts that block the built-in rebalance strategies. */
  rebalanceFacts(): RebalanceClusterFacts {
    let hasUnreachableMember = false;
    let hasJoiningMember = false;
    for (const m of this.members.values()) {
      if (!this.hasRole(m)) continue;
      if (!m.reachable) hasUnreachableMember = true;
      if (m.status === "joining" || m.status === "weakly-up") hasJoiningMember = true;
    }
    return { hasUnreachableMember, hasJoiningMember };
  }
}
