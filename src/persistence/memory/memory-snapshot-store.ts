/**
 * The reference SnapshotStore: per id, snapshots sorted by sequence number. Saving at an
 * existing sequence number replaces that snapshot (as the SQL plugins' upsert does).
 */
import { copyBytes } from "../../base/bytes.js";
import type {
  SnapshotCriteria,
  SnapshotPayload,
  SnapshotStore,
  StoredSnapshot,
} from "../../ports/snapshot-store.js";
import {
  assertPersistenceId,
  checkSnapshot,
  snapshotBounds,
  snapshotMatches,
} from "../persistence-input.js";
import { resolveSnapshotSettings, type SnapshotSettings } from "../persistence-settings.js";

export interface MemorySnapshotStoreOptions {
  readonly snapshot?: Partial<SnapshotSettings>;
}

/** The reference SnapshotStore. */
export class MemorySnapshotStore implements SnapshotStore {
  readonly settings: SnapshotSettings;
  private readonly byId = new Map<string, StoredSnapshot[]>();

  constructor(options: MemorySnapshotStoreOptions = {}) {
    this.settings = resolveSnapshotSettings(options.snapshot);
  }

  async save(
    persistenceId: string,
    sequenceNr: number,
    timestampMs: number,
    snapshot: SnapshotPayload,
  ): Promise<void> {
    checkSnapshot(persistenceId, sequenceNr, timestampMs, snapshot, this.settings);
    const list = this.byId.get(persistenceId) ?? [];
    this.byId.set(persistenceId, list);
    const stored: StoredSnapshot = {
      persistenceId,
      sequenceNr,
      timestampMs,
      serializerId: snapshot.serializerId,
      bytes: copyBytes(snapshot.bytes),
    };
    const at = list.findIndex((s) => s.sequenceNr >= sequenceNr);
    if (at === -1) list.push(stored);
    else list.splice(at, list[at]?.sequenceNr === sequenceNr ? 1 : 0, stored);
  }

  async loadLatest(
    persistenceId: string,
    criteria?: SnapshotCriteria,
  ): Promise<StoredSnapshot | undefined> {
    assertPersistenceId(persistenceId);
    const b = snapshotBounds(criteria);
    const list = this.byId.get(persistenceId) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const s = list[i] as StoredSnapshot;
      if (snapshotMatches(b, s.sequenceNr, s.timestampMs)) return s;
    }
    return undefined;
  }

  async deleteUpTo(persistenceId: string, criteria: SnapshotCriteria): Promise<void> {
    assertPersistenceId(persistenceId);
    const b = snapshotBounds(criteria);
    const list = this.byId.get(persistenceId);
    if (list === undefined) return;
    const kept = list.filter((s) => !snapshotMatches(b, s.sequenceNr, s.timestampMs));
    if (kept.length === 0) this.byId.delete(persistenceId);
    else this.byId.set(persistenceId, kept);
  }
}
