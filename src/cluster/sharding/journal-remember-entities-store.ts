/**
 * The durable RememberEntitiesStore: each shard's remembered entities as an event log in
 * a Journal (persistenceId `/sharding/<type>/shard/<shardId>`), one event per batch
 * ({ started, stopped }), with a snapshot of the whole set every snapshotAfterEvents
 * events after which older events are deleted. Runs on the memory, SQLite and PostgreSQL
 * plugins.
 *
 * A shard is hosted by one region at a time, but over time by several nodes: each
 * `getEntities` (called when a shard starts) reloads the shard's log and learns its
 * sequence number. An append that conflicts (another node wrote since) reloads and writes
 * the batch again: batches are idempotent set changes, so this is safe.
 *
 * Memory: the set and sequence number of every shard this store has loaded stay cached
 * (at most one entry per shard of each type, numberOfShards bounds it).
 */
import { ConfigError } from "../../base/errors.js";
import { type Journal, JournalConflictError, type WriteFence } from "../../ports/journal.js";
import {
  assertRememberBatch,
  type RememberEntitiesStore,
  type RememberEntitiesUpdate,
} from "../../ports/remember-entities-store.js";
import type { SnapshotStore } from "../../ports/snapshot-store.js";
import {
  compactShardingData,
  decodeShardingData,
  encodeShardingData,
  rememberPersistenceId,
  replayShardingEvents,
} from "./sharding-store-codec.js";

/** Settings of JournalRememberEntitiesStore. */
export interface JournalRememberEntitiesSettings {
  /** Save a snapshot of a shard's set after this many batches (integer >= 1). */
  readonly snapshotAfterEvents: number;
}

export const DEFAULT_JOURNAL_REMEMBER_ENTITIES_SETTINGS: JournalRememberEntitiesSettings =
  Object.freeze({ snapshotAfterEvents: 100 });

interface StoredBatch {
  readonly s: readonly string[];
  readonly x: readonly string[];
}

interface ShardLog {
  seqNr: number;
  readonly set: Set<string>;
  sinceSnapshot: number;
}

export class JournalRememberEntitiesStore implements RememberEntitiesStore {
  private readonly settings: JournalRememberEntitiesSettings;
  private readonly logs = new Map<string, ShardLog>();

  /**
   * @param snapshots optional; without it the log is never compacted.
   * @param now the time stamped on events (ms).
   * @throws ConfigError on an invalid setting.
   */
  constructor(
    private readonly journal: Journal,
    private readonly snapshots: SnapshotStore | undefined,
    private readonly now: () => number,
    settings: Partial<JournalRememberEntitiesSettings> = {},
  ) {
    this.settings = { ...DEFAULT_JOURNAL_REMEMBER_ENTITIES_SETTINGS, ...settings };
    const n = this.settings.snapshotAfterEvents;
    if (!Number.isInteger(n) || n < 1)
      throw new ConfigError("rememberEntities.snapshotAfterEvents", n, "an integer >= 1");
  }

  async getEntities(typeName: string, shardId: string): Promise<readonly string[]> {
    const log = await this.load(rememberPersistenceId(typeName, shardId));
    return [...log.set].sort();
  }

  async update(
    typeName: string,
    shardId: string,
    batch: RememberEntitiesUpdate,
    fence?: WriteFence,
  ): Promise<void> {
    assertRememberBatch(batch);
    if (batch.started.length === 0 && batch.stopped.length === 0) return;
    const pid = rememberPersistenceId(typeName, shardId);
    let log = this.logs.get(pid) ?? (await this.load(pid));
    const event = encodeShardingData({ s: batch.started, x: batch.stopped });
    const append = (at: ShardLog) =>
      this.journal.append(
        pid,
        at.seqNr + 1,
        [{ ...event, timestampMs: Math.floor(this.now()) }],
        fence,
      );
    try {
      await append(log);
    } catch (e) {
      if (!(e instanceof JournalConflictError)) throw e;
      log = await this.load(pid); // someone else wrote: catch up, then write again
      await append(log);
    }
    log.seqNr++;
    for (const id of batch.started) log.set.add(id);
    for (const id of batch.stopped) log.set.delete(id);
    if (++log.sinceSnapshot >= this.settings.snapshotAfterEvents) await this.snapshot(pid, log);
  }

  private async snapshot(pid: string, log: ShardLog): Promise<void> {
    if (this.snapshots === undefined) return;
    const at = log.seqNr;
    await this.snapshots.save(
      pid,
      at,
      Math.floor(this.now()),
      encodeShardingData([...log.set].sort()),
    );
    log.sinceSnapshot = 0;
    await compactShardingData(this.journal, this.snapshots, pid, at);
  }

  private async load(pid: string): Promise<ShardLog> {
    const stored = await this.snapshots?.loadLatest(pid);
    const set = new Set<string>(
      stored === undefined
        ? []
        : decodeShardingData(pid, stored.sequenceNr, stored.serializerId, stored.bytes, isStrList),
    );
    const highest = await this.journal.highestSequenceNr(pid);
    const batches = await replayShardingEvents(
      this.journal,
      pid,
      stored?.sequenceNr ?? 0,
      highest,
      isBatch,
    );
    for (const b of batches) {
      for (const id of b.s) set.add(id);
      for (const id of b.x) set.delete(id);
    }
    const seqNr = Math.max(highest, stored?.sequenceNr ?? 0);
    const log: ShardLog = { seqNr, set, sinceSnapshot: batches.length };
    this.logs.set(pid, log);
    return log;
  }
}

function isStrList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

function isBatch(v: unknown): v is StoredBatch {
  if (typeof v !== "object" || v === null) return false;
  const b = v as { s?: unknown; x?: unknown };
  return isStrList(b.s) && isStrList(b.x);
}
