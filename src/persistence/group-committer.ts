/**
 * Group commit for journal appends: appends from many entities that arrive in one
 * event-loop turn are written by one database round trip / transaction instead of one
 * each, which is what makes tens of thousands of events per second possible on a
 * durable store.
 *
 * Invariants:
 * - per-persistenceId order: appends of one id are committed in submission order, and a
 *   batch holds at most one append per id; the next append of an id waits until the
 *   batch holding the previous one has settled. So a plugin's batch never has to reason
 *   about two appends of one id, and concurrent batches never touch the same id.
 * - each caller's promise is settled individually from the plugin's per-append outcome:
 *   a conflict fails only its own append; a store failure fails the whole batch.
 * - bounded: a batch holds at most batchEventsMax events and batchBytesMax bytes (a
 *   single append is never split; `checkAppend` keeps each within the bounds); at most
 *   queuedEventsMax events are accepted and unsettled (beyond: JournalRejectedError
 *   "overloaded"); at most batchesInFlightMax batches run at once, and what is ready is
 *   spread over the free slots so that concurrent batches share the work.
 * - batches stay large under concurrency: while a batch is in flight, another one starts
 *   only with at least parallelBatchAppendsMin appends (or everything ready, when the
 *   bounds cut a batch shorter). What arrives meanwhile waits and joins the next batch,
 *   so N appends in flight do not turn into N batches of one append each (each batch
 *   costs the database a commit, a WAL flush, a statement). A lone batch starts at once
 *   with whatever is ready, so a single writer waits for nothing.
 * - a batch that waits before it is written (SQLite: another process holds the write
 *   lock) may take in what became ready meanwhile through `more` (see CommitBatch), under
 *   the same bounds and per-id rule, instead of leaving it for the next batch.
 *
 * Timer-free: the plugin passes `defer` (setImmediate in the drivers), so this file
 * stays inside the determinism boundary.
 */
import { AssertionError } from "../base/assert.js";
import { Deque } from "../base/deque.js";
import {
  type JournalEvent,
  JournalRejectedError,
  PersistenceStoreError,
  type WriteFence,
} from "../ports/journal.js";

/** One append as handed to a plugin's `commit`. */
export interface PendingAppend {
  readonly persistenceId: string;
  readonly expectedSeqNr: number;
  readonly events: readonly JournalEvent[];
  /** Payload bytes of all events. */
  readonly bytes: number;
  /** The writer's fencing token (see Journal.append); undefined: not fenced. */
  readonly fence: WriteFence | undefined;
}

/** A plugin's verdict on one append of a batch: undefined = committed, else its error. */
export type AppendOutcome = Error | undefined;

/**
 * Writes a batch. `more` takes the appends that became ready since the batch was formed
 * into it (within the batch bounds; at most one per id, never an id already in the
 * batch) and returns them; a plugin that waits before writing (SQLite waiting for
 * another process's write lock) calls it just before its next attempt, so what arrived
 * meanwhile is written by that attempt instead of waiting for the next batch. The
 * outcomes then cover `batch` followed by everything `more` returned, in order.
 */
export type CommitBatch = (
  batch: readonly PendingAppend[],
  more: () => readonly PendingAppend[],
) => readonly AppendOutcome[] | Promise<readonly AppendOutcome[]>;

export interface GroupCommitterOptions {
  readonly batchEventsMax: number;
  readonly batchBytesMax: number;
  readonly queuedEventsMax: number;
  readonly batchesInFlightMax: number;
  /**
   * While a batch is in flight, another starts only with at least this many appends
   * ready (default 1: any). With batchesInFlightMax 1 it has no effect.
   */
  readonly parallelBatchAppendsMin?: number;
  /** Runs a function on a later macrotask turn (collects one turn's appends). */
  readonly defer: (fn: () => void) => void;
  /**
   * Writes a batch; returns one outcome per append, in order. Throwing (or rejecting)
   * fails every append of the batch with a PersistenceStoreError.
   */
  readonly commit: CommitBatch;
}

/** Counters for tests, benchmarks and metrics. */
export interface GroupCommitStats {
  readonly batches: number;
  readonly appends: number;
  readonly events: number;
  /** Events of the largest batch so far. */
  readonly batchEventsPeak: number;
  /** Appends that joined a batch already formed (through `more`; counted in `appends`). */
  readonly joinedAppends: number;
}

interface Entry extends PendingAppend {
  resolve(): void;
  reject(error: Error): void;
}

/** Queues appends and writes them in batches through the plugin's `commit` (see above). */
export class GroupCommitter {
  /** Appends not yet in a batch, per id, in submission order. */
  private readonly waiting = new Map<string, Entry[]>();
  /** Ids with waiting appends and no batch in flight, roughly oldest first. */
  private readonly ready = new Deque<string>();
  private readonly inFlight = new Set<string>();
  private unsettledEvents = 0;
  private unsettledAppends = 0;
  private batchesInFlight = 0;
  private flushScheduled = false;
  private closed = false;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly counters = {
    batches: 0,
    appends: 0,
    events: 0,
    batchEventsPeak: 0,
    joinedAppends: 0,
  };

  constructor(private readonly options: GroupCommitterOptions) {}

  /** Queues an append; settles when its batch has been committed. */
  submit(
    persistenceId: string,
    expectedSeqNr: number,
    events: readonly JournalEvent[],
    bytes: number,
    fence?: WriteFence,
  ): Promise<void> {
    if (this.closed)
      return Promise.reject(new JournalRejectedError("closed", persistenceId, "journal is closed"));
    if (this.unsettledEvents + events.length > this.options.queuedEventsMax)
      return Promise.reject(
        new JournalRejectedError(
          "overloaded",
          persistenceId,
          `${this.unsettledEvents} events queued (queuedEventsMax=${this.options.queuedEventsMax})`,
        ),
      );
    return new Promise<void>((resolve, reject) => {
      const entry: Entry = {
        persistenceId,
        expectedSeqNr,
        events,
        bytes,
        fence,
        resolve,
        reject,
      };
      this.unsettledEvents += events.length;
      this.unsettledAppends++;
      const queue = this.waiting.get(persistenceId);
      if (queue !== undefined) queue.push(entry);
      else {
        this.waiting.set(persistenceId, [entry]);
        if (!this.inFlight.has(persistenceId)) this.ready.push(persistenceId);
      }
      this.scheduleFlush();
    });
  }

  /** Refuses new appends; resolves when every accepted append has settled. */
  close(): Promise<void> {
    this.closed = true;
    if (this.unsettledAppends === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Counters since creation. */
  stats(): GroupCommitStats {
    return { ...this.counters };
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    this.options.defer(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const parallelMin = this.options.parallelBatchAppendsMin ?? 1;
    while (this.batchesInFlight < this.options.batchesInFlightMax && this.ready.length > 0) {
      // a batch beside one in flight only when enough is ready; the rest waits for the
      // next settle (settle schedules a flush)
      if (this.batchesInFlight > 0 && this.ready.length < parallelMin) break;
      // spread what is ready over the free slots, so concurrent batches share the work,
      // but never in batches smaller than parallelMin
      const slots = this.options.batchesInFlightMax - this.batchesInFlight;
      this.run(this.takeBatch(Math.max(Math.ceil(this.ready.length / slots), parallelMin)));
    }
  }

  private takeBatch(appendsMax: number): Entry[] {
    const batch: Entry[] = [];
    const events = this.takeInto(batch, appendsMax, 0, 0);
    this.counters.batches++;
    this.counters.batchEventsPeak = Math.max(this.counters.batchEventsPeak, events);
    return batch;
  }

  /**
   * Moves ready appends into `batch` (which already holds `events0` events and `bytes0`
   * bytes) until `appendsMax` appends or a bound; returns the batch's events.
   */
  private takeInto(batch: Entry[], appendsMax: number, events0: number, bytes0: number): number {
    const { batchEventsMax, batchBytesMax } = this.options;
    let events = events0;
    let bytes = bytes0;
    for (let id = this.ready.peek(); id !== undefined; id = this.ready.peek()) {
      const queue = this.waiting.get(id) as Entry[];
      const head = queue[0] as Entry;
      const full =
        events + head.events.length > batchEventsMax || bytes + head.bytes > batchBytesMax;
      if (batch.length > 0 && (full || batch.length >= appendsMax)) break;
      this.ready.shift();
      queue.shift();
      if (queue.length === 0) this.waiting.delete(id);
      this.inFlight.add(id);
      batch.push(head);
      events += head.events.length;
      bytes += head.bytes;
      this.counters.appends++;
      this.counters.events += head.events.length;
    }
    return events;
  }

  /** `more` of a batch in flight (see CommitBatch): what is ready joins it. */
  private grow(batch: Entry[]): readonly Entry[] {
    if (this.ready.length === 0) return [];
    const from = batch.length;
    let events = 0;
    let bytes = 0;
    for (const e of batch) {
      events += e.events.length;
      bytes += e.bytes;
    }
    // a full batch takes nothing: takeInto always takes one append into an empty batch only
    events = this.takeInto(batch, Number.POSITIVE_INFINITY, events, bytes);
    this.counters.joinedAppends += batch.length - from;
    this.counters.batchEventsPeak = Math.max(this.counters.batchEventsPeak, events);
    return batch.slice(from);
  }

  private run(batch: Entry[]): void {
    this.batchesInFlight++;
    // `more` takes nothing once the plugin has answered (the batch is settling)
    let open = true;
    const more = (): readonly Entry[] => (open ? this.grow(batch) : []);
    const done = (outcomes: readonly AppendOutcome[] | undefined, error: unknown): void => {
      open = false;
      this.settle(batch, outcomes, error);
    };
    let result: readonly AppendOutcome[] | Promise<readonly AppendOutcome[]>;
    try {
      // a copy: `more` grows `batch` itself, the plugin's array stays as it was given
      result = this.options.commit(batch.slice(), more);
    } catch (error) {
      done(undefined, error);
      return;
    }
    if (Array.isArray(result)) done(result as readonly AppendOutcome[], undefined);
    else
      (result as Promise<readonly AppendOutcome[]>).then(
        (outcomes) => done(outcomes, undefined),
        (error: unknown) => done(undefined, error),
      );
  }

  private settle(
    batch: readonly Entry[],
    result: readonly AppendOutcome[] | undefined,
    error: unknown,
  ): void {
    this.batchesInFlight--;
    const bad = result !== undefined && result.length !== batch.length;
    const outcomes = bad ? undefined : result;
    const failure = bad
      ? new AssertionError(`commit returned ${result?.length} outcomes for ${batch.length} appends`)
      : error;
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i] as Entry;
      this.inFlight.delete(e.persistenceId);
      if (this.waiting.has(e.persistenceId)) this.ready.push(e.persistenceId);
      this.unsettledEvents -= e.events.length;
      this.unsettledAppends--;
      const outcome =
        outcomes === undefined
          ? new PersistenceStoreError("append", e.persistenceId, failure)
          : outcomes[i];
      if (outcome === undefined) e.resolve();
      else e.reject(outcome);
    }
    if (this.ready.length > 0) this.scheduleFlush();
    if (this.unsettledAppends === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
