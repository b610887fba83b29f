/**
 * GroupCommitter in isolation, driven by hand: `defer` queues flushes that the test
 * runs explicitly, and `commit` is a fake that records batches and settles when told.
 */
import { describe, expect, it } from "vitest";
import {
  type AppendOutcome,
  GroupCommitter,
  type GroupCommitterOptions,
  type PendingAppend,
} from "../../src/persistence/group-committer.js";
import {
  JournalConflictError,
  type JournalEvent,
  JournalRejectedError,
  PersistenceStoreError,
} from "../../src/ports/journal.js";

const event: JournalEvent = { serializerId: 1, bytes: new Uint8Array(10), timestampMs: 0 };
const events = (n: number) => Array.from({ length: n }, () => event);

interface Harness {
  committer: GroupCommitter;
  batches: PendingAppend[][];
  /** Runs the deferred flushes. */
  flush(): void;
  /** Settles the oldest unsettled batch. */
  finish(outcomes?: (batch: PendingAppend[]) => AppendOutcome[] | Error): Promise<void>;
}

function harness(overrides: Partial<GroupCommitterOptions> = {}): Harness {
  const deferred: (() => void)[] = [];
  const batches: PendingAppend[][] = [];
  const open: { batch: PendingAppend[]; done: (o: AppendOutcome[] | Error) => void }[] = [];
  const committer = new GroupCommitter({
    batchEventsMax: 10,
    batchBytesMax: 1_000,
    queuedEventsMax: 100,
    batchesInFlightMax: 1,
    defer: (fn) => deferred.push(fn),
    commit: (batch) => {
      batches.push([...batch]);
      return new Promise((resolve, reject) => {
        open.push({
          batch: [...batch],
          done: (o) => (o instanceof Error ? reject(o) : resolve(o)),
        });
      });
    },
    ...overrides,
  });
  return {
    committer,
    batches,
    flush: () => {
      for (const fn of deferred.splice(0)) fn();
    },
    finish: async (outcomes = (b) => b.map(() => undefined)) => {
      const o = open.shift();
      if (o === undefined) throw new Error("no batch in flight");
      o.done(outcomes(o.batch));
      await new Promise((r) => setImmediate(r));
    },
  };
}

const ids = (b: PendingAppend[] | undefined) =>
  (b ?? []).map((a) => `${a.persistenceId}@${a.expectedSeqNr}`);

describe("GroupCommitter", () => {
  it("groups one turn's appends into one batch, at most one append per id", async () => {
    const h = harness();
    const done = [
      h.committer.submit("a", 1, events(1), 10),
      h.committer.submit("b", 1, events(1), 10),
      h.committer.submit("a", 2, events(1), 10),
      h.committer.submit("c", 1, events(1), 10),
    ];
    expect(h.batches).toHaveLength(0); // nothing before the deferred flush
    h.flush();
    expect(ids(h.batches[0])).toEqual(["a@1", "b@1", "c@1"]);
    await h.finish();
    h.flush();
    expect(ids(h.batches[1])).toEqual(["a@2"]);
    await h.finish();
    await Promise.all(done);
    expect(h.committer.stats()).toEqual({
      batches: 2,
      appends: 4,
      events: 4,
      batchEventsPeak: 3,
      joinedAppends: 0,
    });
  });

  it("respects batchEventsMax and batchBytesMax without splitting an append", async () => {
    const h = harness();
    h.committer.submit("a", 1, events(6), 60);
    h.committer.submit("b", 1, events(4), 40);
    h.committer.submit("c", 1, events(1), 10); // would make 11 events
    h.committer.submit("d", 1, events(1), 900);
    h.committer.submit("e", 1, events(1), 200); // would make 1 100 bytes
    h.committer.submit("f", 1, events(10), 2_000); // alone over batchBytesMax: goes alone
    h.flush();
    for (let i = 0; i < 3; i++) {
      await h.finish();
      h.flush();
    }
    await h.finish();
    expect(h.batches.map(ids)).toEqual([["a@1", "b@1"], ["c@1", "d@1"], ["e@1"], ["f@1"]]);
  });

  it("spreads what is ready over the free batch slots", async () => {
    const h = harness({ batchesInFlightMax: 4 });
    for (const id of "abcdefg") h.committer.submit(id, 1, events(1), 10);
    h.flush();
    expect(h.batches.map(ids)).toEqual([["a@1", "b@1"], ["c@1", "d@1"], ["e@1", "f@1"], ["g@1"]]);
  });

  it("starts a batch beside one in flight only with parallelBatchAppendsMin ready", async () => {
    const h = harness({ batchesInFlightMax: 4, parallelBatchAppendsMin: 3 });
    h.committer.submit("a", 1, events(1), 10);
    h.flush();
    expect(h.batches.map(ids)).toEqual([["a@1"]]); // a lone batch goes with what is ready
    for (const id of "bc") h.committer.submit(id, 1, events(1), 10);
    h.flush();
    expect(h.batches).toHaveLength(1); // 2 ready < 3: they wait beside the batch in flight
    h.committer.submit("d", 1, events(1), 10);
    h.flush();
    expect(h.batches.map(ids).slice(1)).toEqual([["b@1", "c@1", "d@1"]]);
    for (const id of "ef") h.committer.submit(id, 1, events(1), 10);
    h.flush();
    expect(h.batches).toHaveLength(2);
    await h.finish(); // a slot frees, but one batch is still in flight: e, f keep waiting
    h.flush();
    expect(h.batches).toHaveLength(2);
    await h.finish(); // nothing in flight: a lone batch takes what is ready
    h.flush();
    expect(h.batches.map(ids).slice(2)).toEqual([["e@1", "f@1"]]);
  });

  it("spreads a backlog over the free slots in batches of at least parallelBatchAppendsMin", async () => {
    const h = harness({ batchesInFlightMax: 4, parallelBatchAppendsMin: 3, batchEventsMax: 100 });
    for (const id of "abcdefgh") h.committer.submit(id, 1, events(1), 10);
    h.flush();
    // ceil(8 / 4) = 2 < 3: batches of 3; the last 2 wait for a batch to settle
    expect(h.batches.map(ids)).toEqual([
      ["a@1", "b@1", "c@1"],
      ["d@1", "e@1", "f@1"],
    ]);
  });

  it("runs at most batchesInFlightMax batches and never one id in two of them", async () => {
    const h = harness({ batchEventsMax: 1, batchesInFlightMax: 2 });
    h.committer.submit("a", 1, events(1), 10);
    h.committer.submit("a", 2, events(1), 10);
    h.committer.submit("b", 1, events(1), 10);
    h.committer.submit("c", 1, events(1), 10);
    h.flush();
    expect(h.batches.map(ids)).toEqual([["a@1"], ["b@1"]]);
    await h.finish(); // a@1 done: a@2 may go, c@1 was waiting longer
    h.flush();
    expect(h.batches.map(ids).slice(2)).toEqual([["c@1"]]);
    await h.finish();
    h.flush();
    expect(h.batches.map(ids).slice(3)).toEqual([["a@2"]]);
  });

  it("settles each append from its own outcome; a failed commit fails the whole batch", async () => {
    const h = harness();
    const outcome = (p: Promise<void>) =>
      p.then(
        () => "ok" as const,
        (e: unknown) => e,
      );
    const a = outcome(h.committer.submit("a", 1, events(1), 10));
    const b = outcome(h.committer.submit("b", 1, events(1), 10));
    h.flush();
    await h.finish((batch) =>
      batch.map((x) => (x.persistenceId === "a" ? new JournalConflictError("a", 1) : undefined)),
    );
    expect(await a).toBeInstanceOf(JournalConflictError);
    expect(await b).toBe("ok");
    const c = outcome(h.committer.submit("c", 1, events(1), 10));
    const d = outcome(h.committer.submit("d", 1, events(1), 10));
    h.flush();
    await h.finish(() => new Error("disk on fire"));
    for (const p of [c, d]) {
      const error = await p;
      expect(error).toBeInstanceOf(PersistenceStoreError);
      expect((error as PersistenceStoreError).code).toBe("PERSISTENCE_STORE_FAILED");
    }
  });

  it("lets a batch in flight take in what became ready (more), within its bounds and order", async () => {
    let more: (() => readonly PendingAppend[]) | undefined;
    let answer: ((o: AppendOutcome[]) => void) | undefined;
    const given: PendingAppend[][] = [];
    const h = harness({
      commit: (batch, m) => {
        given.push([...batch]);
        more = m;
        return new Promise((resolve) => {
          answer = resolve;
        });
      },
    });
    const outcome = (p: Promise<void>) =>
      p.then(
        () => "ok" as const,
        (e: unknown) => e,
      );
    const a1 = outcome(h.committer.submit("a", 1, events(4), 40));
    h.flush();
    expect(given.map(ids)).toEqual([["a@1"]]);
    const joinedBefore = (more as () => readonly PendingAppend[])();
    expect(joinedBefore).toEqual([]); // nothing ready yet
    const a2 = outcome(h.committer.submit("a", 2, events(1), 10)); // its id is in the batch
    const b1 = outcome(h.committer.submit("b", 1, events(3), 30));
    const c1 = outcome(h.committer.submit("c", 1, events(2), 20));
    const d1 = outcome(h.committer.submit("d", 1, events(2), 20)); // would make 11 events
    const joined = (more as () => readonly PendingAppend[])();
    expect(ids([...joined])).toEqual(["b@1", "c@1"]);
    expect(given[0]?.map((x) => x.persistenceId)).toEqual(["a"]); // the plugin's array unchanged
    h.flush(); // the slot is taken: nothing starts beside the batch
    expect(given).toHaveLength(1);
    // outcomes for the batch followed by what joined it, in order
    answer?.([undefined, new JournalConflictError("b", 1), undefined]);
    expect(await a1).toBe("ok");
    expect(await b1).toBeInstanceOf(JournalConflictError);
    expect(await c1).toBe("ok");
    expect((more as () => readonly PendingAppend[])()).toEqual([]); // settled: takes nothing
    h.flush();
    expect(given.map(ids).slice(1)).toEqual([["d@1", "a@2"]]);
    answer?.([undefined, undefined]);
    expect(await d1).toBe("ok");
    expect(await a2).toBe("ok");
    expect(h.committer.stats()).toEqual({
      batches: 2,
      appends: 5,
      events: 12,
      batchEventsPeak: 9,
      joinedAppends: 2,
    });
  });

  it("refuses appends beyond queuedEventsMax (overloaded) until earlier ones settle", async () => {
    const h = harness({ queuedEventsMax: 5 });
    const first = h.committer.submit("a", 1, events(5), 50);
    const over = await h.committer.submit("b", 1, events(1), 10).catch((e: unknown) => e);
    expect(over).toBeInstanceOf(JournalRejectedError);
    expect((over as JournalRejectedError).reason).toBe("overloaded");
    h.flush();
    await h.finish();
    await first;
    const later = h.committer.submit("b", 1, events(1), 10);
    h.flush();
    await h.finish();
    await expect(later).resolves.toBeUndefined();
  });

  it("close resolves after every accepted append settled and refuses new ones", async () => {
    const h = harness();
    const a = h.committer.submit("a", 1, events(1), 10);
    let closed = false;
    const closing = h.committer.close().then(() => {
      closed = true;
    });
    await expect(h.committer.submit("b", 1, events(1), 10)).rejects.toMatchObject({
      reason: "closed",
    });
    h.flush();
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    await h.finish();
    await closing;
    await expect(a).resolves.toBeUndefined();
  });
});
