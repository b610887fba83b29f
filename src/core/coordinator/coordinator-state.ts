/**
 * The shard coordinator's durable state: registered regions (registration order) with
 * their shards (allocation order), proxies, the shard -> region table and, with remember
 * entities, the shards waiting to be allocated again. It changes only by applying
 * CoordinatorEvents, so replaying the journal (optionally on top of a snapshot) rebuilds
 * exactly the state the previous coordinator had acknowledged.
 *
 * Invariants: every shard in `homes` is in the shard list of exactly its region, and no
 * shard is both allocated and in `unallocated`.
 *
 * Replay is lenient towards exact repetitions, because a batch whose write failed
 * ambiguously is written again and may then be in the journal twice in a row: registering
 * a known region again, allocating a shard to the region that has it, allocating to a
 * region that is no longer registered, deallocating an unallocated shard and terminating
 * an unknown region are no-ops (`apply` returns false). What can only come from two
 * coordinators writing at once (a shard allocated to a second region, a region id
 * registered for a second member) throws CoordinatorStateError.
 */
import { ShardkitError } from "../../base/errors.js";
import type { CoordinatorEvent, CoordinatorSnapshot, RegionId } from "../../protocol/sharding.js";
import type { ShardId } from "../sharding/shard-id.js";

/** The coordinator's journal or snapshot contradicts itself (e.g. after a split brain). */
export class CoordinatorStateError extends ShardkitError {
  constructor(detail: string, fields: Record<string, unknown>) {
    super("COORDINATOR_STATE_CORRUPT", `coordinator state is inconsistent: ${detail}`, fields);
  }
}

/** One registered region as the state keeps it. */
export interface RegionRecord {
  readonly member: string;
  /** Hosted shards, oldest allocation first. */
  readonly shards: readonly ShardId[];
}

interface MutableRegion {
  readonly member: string;
  shards: ShardId[];
}

/** Durable coordinator state (see the module comment). */
export class CoordinatorState {
  private readonly regionMap = new Map<RegionId, MutableRegion>();
  private readonly proxyMap = new Map<RegionId, string>();
  private readonly homes = new Map<ShardId, RegionId>();
  private readonly unallocatedSet = new Set<ShardId>();

  constructor(readonly rememberEntities: boolean) {}

  /** The region `shard` is allocated to, if any. */
  homeOf(shard: ShardId): RegionId | undefined {
    return this.homes.get(shard);
  }

  region(region: RegionId): RegionRecord | undefined {
    return this.regionMap.get(region);
  }

  /** Registered regions in registration order. */
  regions(): ReadonlyMap<RegionId, RegionRecord> {
    return this.regionMap;
  }

  /** Registered proxies (id -> member) in registration order. */
  proxies(): ReadonlyMap<RegionId, string> {
    return this.proxyMap;
  }

  /** Remember entities: shards to allocate again. */
  unallocated(): ReadonlySet<ShardId> {
    return this.unallocatedSet;
  }

  /** Number of allocated shards. */
  get shardCount(): number {
    return this.homes.size;
  }

  /** Applies one event; false when it was a tolerated no-op (see the module comment). */
  apply(event: CoordinatorEvent): boolean {
    switch (event.type) {
      case "shard-region-registered":
        return this.onRegionRegistered(event.region, event.member);
      case "shard-region-proxy-registered":
        return this.onProxyRegistered(event.proxy, event.member);
      case "shard-home-allocated":
        return this.onAllocated(event.shard, event.region);
      case "shard-home-deallocated":
        return this.onDeallocated(event.shard);
      case "shard-region-terminated":
        return this.onRegionTerminated(event.region);
      case "shard-region-proxy-terminated":
        return this.proxyMap.delete(event.proxy);
    }
  }

  private onRegionRegistered(region: RegionId, member: string): boolean {
    const known = this.regionMap.get(region);
    if (known !== undefined) {
      if (known.member === member) return false;
      throw new CoordinatorStateError(`region ${region} registered for a second member`, {
        region,
        member,
        previousMember: known.member,
      });
    }
    this.regionMap.set(region, { member, shards: [] });
    return true;
  }

  private onProxyRegistered(proxy: RegionId, member: string): boolean {
    const known = this.proxyMap.get(proxy);
    if (known !== undefined) {
      if (known === member) return false;
      throw new CoordinatorStateError(`proxy ${proxy} registered for a second member`, {
        proxy,
        member,
        previousMember: known,
      });
    }
    this.proxyMap.set(proxy, member);
    return true;
  }

  private onAllocated(shard: ShardId, region: RegionId): boolean {
    const current = this.homes.get(shard);
    if (current === region) return false;
    if (current !== undefined)
      throw new CoordinatorStateError(`shard ${shard} allocated to a second region`, {
        shard,
        region,
        currentRegion: current,
      });
    const r = this.regionMap.get(region);
    if (r === undefined) return false;
    r.shards.push(shard);
    this.homes.set(shard, region);
    this.unallocatedSet.delete(shard);
    return true;
  }

  private onDeallocated(shard: ShardId): boolean {
    const region = this.homes.get(shard);
    if (region === undefined) return false;
    const r = this.regionMap.get(region) as MutableRegion;
    r.shards = r.shards.filter((s) => s !== shard);
    this.homes.delete(shard);
    if (this.rememberEntities) this.unallocatedSet.add(shard);
    return true;
  }

  private onRegionTerminated(region: RegionId): boolean {
    const r = this.regionMap.get(region);
    if (r === undefined) return false;
    for (const shard of r.shards) {
      this.homes.delete(shard);
      if (this.rememberEntities) this.unallocatedSet.add(shard);
    }
    this.regionMap.delete(region);
    return true;
  }

  /** The state as one plain value (for a snapshot store). */
  toSnapshot(): CoordinatorSnapshot {
    return {
      regions: [...this.regionMap].map(([region, r]) => ({
        region,
        member: r.member,
        shards: [...r.shards],
      })),
      proxies: [...this.proxyMap].map(([proxy, member]) => ({ proxy, member })),
      unallocatedShards: [...this.unallocatedSet],
    };
  }

  /** A deep copy. */
  clone(): CoordinatorState {
    return CoordinatorState.fromSnapshot(this.toSnapshot(), this.rememberEntities);
  }

  /** Rebuilds a state from a snapshot; throws CoordinatorStateError when it is inconsistent. */
  static fromSnapshot(snapshot: CoordinatorSnapshot, rememberEntities: boolean): CoordinatorState {
    const state = new CoordinatorState(rememberEntities);
    for (const r of snapshot.regions) {
      if (state.regionMap.has(r.region))
        throw new CoordinatorStateError(`region ${r.region} appears twice in the snapshot`, {
          region: r.region,
        });
      state.regionMap.set(r.region, { member: r.member, shards: [] });
      for (const shard of r.shards) state.onAllocated(shard, r.region);
    }
    for (const p of snapshot.proxies) state.onProxyRegistered(p.proxy, p.member);
    if (rememberEntities)
      for (const s of snapshot.unallocatedShards)
        if (!state.homes.has(s)) state.unallocatedSet.add(s);
    return state;
  }
}

/**
 * The state recovered from an optional snapshot and the events written after it, in
 * journal order. Throws CoordinatorStateError when they contradict each other.
 */
export function recoverCoordinatorState(
  snapshot: CoordinatorSnapshot | undefined,
  events: readonly CoordinatorEvent[],
  rememberEntities: boolean,
): CoordinatorState {
  const state =
    snapshot === undefined
      ? new CoordinatorState(rememberEntities)
      : CoordinatorState.fromSnapshot(snapshot, rememberEntities);
  for (const e of events) state.apply(e);
  return state;
}
