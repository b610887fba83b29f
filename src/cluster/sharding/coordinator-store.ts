/**
 * CoordinatorStore: where a shard coordinator keeps its durable state (regions, proxies,
 * shard homes, remembered-but-unallocated shards) so that allocations survive a
 * coordinator fail-over and a full cluster restart (stateStoreMode "persistence").
 *
 * The coordinator machine (core/coordinator) emits `persist` batches of
 * CoordinatorEvents and, every snapshotAfterEvents events, a `save-snapshot`; the
 * coordinator actor hands them to this store and announces nothing before `persist`
 * resolved (persist before announce). On start it loads the latest snapshot plus the
 * events written after it.
 *
 * JournalCoordinatorStore keeps both in the Journal / SnapshotStore ports under the
 * persistenceId `/sharding/<type>/coordinator`, so it runs on the memory, SQLite and
 * PostgreSQL plugins. Only one coordinator incarnation writes at a time; if two ever do
 * (a split brain), the journal's optimistic concurrency makes the second one fail with
 * JournalConflictError: the coordinator then restarts and reloads instead of going on
 * with a state it no longer owns.
 */
import { assert } from "../../base/assert.js";
import type { Journal } from "../../ports/journal.js";
import type { SnapshotStore } from "../../ports/snapshot-store.js";
import {
  type CoordinatorEvent,
  type CoordinatorSnapshot,
  isCoordinatorEvent,
} from "../../protocol/sharding.js";
import {
  compactShardingData,
  coordinatorPersistenceId,
  decodeShardingData,
  encodeShardingData,
  replayShardingEvents,
} from "./sharding-store-codec.js";

/** What a coordinator recovers from. */
export interface CoordinatorRecoveryData {
  readonly snapshot?: CoordinatorSnapshot;
  /** Events written after the snapshot, in order. */
  readonly events: readonly CoordinatorEvent[];
}

/** The durable state of one entity type's coordinator. */
export interface CoordinatorStore {
  /** Loads the latest snapshot and the events after it. Call once, before `persist`. */
  load(): Promise<CoordinatorRecoveryData>;
  /** Appends `events` atomically, after every earlier batch. Resolves once durable. */
  persist(events: readonly CoordinatorEvent[]): Promise<void>;
  /** Saves `snapshot`, which covers every event persisted so far; may compact older data. */
  saveSnapshot(snapshot: CoordinatorSnapshot): Promise<void>;
}

/** The CoordinatorStore on a Journal (and optionally a SnapshotStore). */
export class JournalCoordinatorStore implements CoordinatorStore {
  readonly persistenceId: string;
  private seqNr = 0;
  private loaded = false;

  /**
   * @param now the time stamped on events and snapshots (the caller's clock, ms).
   */
  constructor(
    private readonly journal: Journal,
    private readonly snapshots: SnapshotStore | undefined,
    typeName: string,
    private readonly now: () => number,
  ) {
    this.persistenceId = coordinatorPersistenceId(typeName);
  }

  async load(): Promise<CoordinatorRecoveryData> {
    const pid = this.persistenceId;
    const stored = await this.snapshots?.loadLatest(pid);
    const snapshot =
      stored === undefined
        ? undefined
        : decodeShardingData(
            pid,
            stored.sequenceNr,
            stored.serializerId,
            stored.bytes,
            isCoordinatorSnapshot,
          );
    const highest = await this.journal.highestSequenceNr(pid);
    const events = await replayShardingEvents(
      this.journal,
      pid,
      stored?.sequenceNr ?? 0,
      highest,
      isCoordinatorEvent,
    );
    this.seqNr = Math.max(highest, stored?.sequenceNr ?? 0);
    this.loaded = true;
    return snapshot === undefined ? { events } : { snapshot, events };
  }

  async persist(events: readonly CoordinatorEvent[]): Promise<void> {
    assert(this.loaded, "JournalCoordinatorStore.persist before load");
    if (events.length === 0) return;
    const ts = Math.floor(this.now());
    await this.journal.append(
      this.persistenceId,
      this.seqNr + 1,
      events.map((e) => ({ ...encodeShardingData(e), timestampMs: ts })),
    );
    this.seqNr += events.length;
  }

  async saveSnapshot(snapshot: CoordinatorSnapshot): Promise<void> {
    if (this.snapshots === undefined || this.seqNr === 0) return;
    const at = this.seqNr;
    await this.snapshots.save(
      this.persistenceId,
      at,
      Math.floor(this.now()),
      encodeShardingData(snapshot),
    );
    await compactShardingData(this.journal, this.snapshots, this.persistenceId, at);
  }
}

function isStr(v: unknown): v is string {
  return typeof v === "string";
}

function isRec(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** True if `v` has the shape of a CoordinatorSnapshot. */
export function isCoordinatorSnapshot(v: unknown): v is CoordinatorSnapshot {
  if (!isRec(v)) return false;
  const { regions, proxies, unallocatedShards } = v;
  return (
    Array.isArray(regions) &&
    regions.every(
      (r: unknown) =>
        isRec(r) &&
        isStr(r.region) &&
        isStr(r.member) &&
        Array.isArray(r.shards) &&
        r.shards.every(isStr),
    ) &&
    Array.isArray(proxies) &&
    proxies.every((p: unknown) => isRec(p) && isStr(p.proxy) && isStr(p.member)) &&
    Array.isArray(unallocatedShards) &&
    unallocatedShards.every(isStr)
  );
}
