/**
 * The reference Journal: everything in a Map, each append checked and applied at the
 * moment it is called (so appends of one id are applied in call order, like the
 * drivers' group commit preserves). It defines the contract the SQL plugins are held
 * to; tests and the simulator use it directly.
 *
 * Per id it keeps the contiguous run of live events and the highest sequence number
 * ever written; `deleteTo` drops a prefix of the run and leaves `highest` alone.
 */
import { copyBytes } from "../../base/bytes.js";
import {
  FencedWriteError,
  type Journal,
  JournalConflictError,
  type JournalEvent,
  JournalRejectedError,
  type PersistedEvent,
  type WriteFence,
} from "../../ports/journal.js";
import {
  assertPersistenceId,
  assertSeqNr,
  checkAppend,
  checkFenceInput,
  readLimit,
} from "../persistence-input.js";
import { type JournalSettings, resolveJournalSettings } from "../persistence-settings.js";

interface Log {
  /** Live events; events[i].sequenceNr === first + i. */
  events: PersistedEvent[];
  highest: number;
}

export interface MemoryJournalOptions {
  readonly journal?: Partial<JournalSettings>;
}

/** The reference Journal (see the module comment). */
export class MemoryJournal implements Journal {
  readonly settings: JournalSettings;
  private readonly logs = new Map<string, Log>();
  /** Newest fencing token seen per fence key. */
  private readonly fences = new Map<string, number>();
  private closed = false;

  constructor(options: MemoryJournalOptions = {}) {
    this.settings = resolveJournalSettings(options.journal);
  }

  async append(
    persistenceId: string,
    expectedSeqNr: number,
    events: readonly JournalEvent[],
    fence?: WriteFence,
  ): Promise<void> {
    checkAppend(persistenceId, expectedSeqNr, events, this.settings, fence);
    if (this.closed) throw new JournalRejectedError("closed", persistenceId, "journal is closed");
    if (fence !== undefined) this.checkFence(fence, persistenceId);
    let log = this.logs.get(persistenceId);
    const highest = log?.highest ?? 0;
    if (expectedSeqNr !== highest + 1)
      throw new JournalConflictError(persistenceId, expectedSeqNr, highest);
    if (log === undefined) {
      log = { events: [], highest: 0 };
      this.logs.set(persistenceId, log);
    }
    events.forEach((e, i) => {
      log.events.push({
        persistenceId,
        sequenceNr: expectedSeqNr + i,
        serializerId: e.serializerId,
        bytes: copyBytes(e.bytes),
        tags: e.tags === undefined ? [] : [...e.tags],
        timestampMs: e.timestampMs,
      });
    });
    log.highest = expectedSeqNr + events.length - 1;
    if (fence !== undefined) this.fences.set(fence.key, fence.token);
  }

  async advanceFence(fence: WriteFence): Promise<void> {
    checkFenceInput(fence);
    if (this.closed) throw new JournalRejectedError("closed", fence.key, "journal is closed");
    this.checkFence(fence);
    this.fences.set(fence.key, fence.token);
  }

  /** The newest fencing token seen for `key` (undefined: none), for tests and the oracle. */
  newestToken(key: string): number | undefined {
    return this.fences.get(key);
  }

  private checkFence(fence: WriteFence, persistenceId?: string): void {
    const newest = this.fences.get(fence.key);
    if (newest !== undefined && newest > fence.token)
      throw new FencedWriteError(fence, newest, persistenceId);
  }

  async read(
    persistenceId: string,
    fromSeqNr: number,
    toSeqNr: number,
    max?: number,
  ): Promise<readonly PersistedEvent[]> {
    const limit = readLimit(persistenceId, fromSeqNr, toSeqNr, max, this.settings);
    const log = this.logs.get(persistenceId);
    if (log === undefined || log.events.length === 0) return [];
    const first = (log.events[0] as PersistedEvent).sequenceNr;
    const start = Math.max(0, fromSeqNr - first);
    const end = Math.min(log.events.length, toSeqNr - first + 1, start + limit);
    return start < end ? log.events.slice(start, end) : [];
  }

  async highestSequenceNr(persistenceId: string): Promise<number> {
    assertPersistenceId(persistenceId);
    return this.logs.get(persistenceId)?.highest ?? 0;
  }

  async deleteTo(persistenceId: string, toSeqNr: number): Promise<void> {
    assertPersistenceId(persistenceId);
    assertSeqNr(toSeqNr, "toSeqNr", 0);
    const log = this.logs.get(persistenceId);
    if (log === undefined || log.events.length === 0) return;
    const first = (log.events[0] as PersistedEvent).sequenceNr;
    log.events.splice(0, Math.max(0, Math.min(log.events.length, toSeqNr - first + 1)));
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
