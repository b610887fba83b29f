/**
 * P1 / P3: one contract suite for the Journal port, run against memory, SQLite and
 * PostgreSQL (when SHARDKIT_PG_URL is set; otherwise a visible SKIP line).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { PostgresJournal } from "../../src/persistence/postgres/postgres-journal.js";
import { postgresTables } from "../../src/persistence/postgres/postgres-schema.js";
import { resolvePostgresSettings } from "../../src/persistence/postgres/postgres-settings.js";
import { sqlitePersistence } from "../../src/persistence/sqlite/sqlite-persistence.js";
import {
  FencedWriteError,
  type Journal,
  JournalConflictError,
  type JournalEvent,
  JournalRejectedError,
  type PersistedEvent,
} from "../../src/ports/journal.js";
import { type Backend, type Opened, persistenceBackends } from "./journal-backends.js";

const enc = new TextEncoder();
const dec = new TextDecoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ev(text: string, extra: Partial<JournalEvent> = {}): JournalEvent {
  return { serializerId: 1, bytes: enc.encode(text), timestampMs: 1_700_000_000_000, ...extra };
}
const texts = (events: readonly PersistedEvent[]) => events.map((e) => dec.decode(e.bytes));
const seqs = (events: readonly PersistedEvent[]) => events.map((e) => e.sequenceNr);

async function appendN(j: Journal, id: string, n: number, from = 1): Promise<void> {
  for (let s = from; s < from + n; s += 10) {
    const count = Math.min(10, from + n - s);
    await j.append(
      id,
      s,
      Array.from({ length: count }, (_, i) => ev(`${id}#${s + i}`)),
    );
  }
}

async function expectConflict(p: Promise<unknown>, id: string, seqNr: number): Promise<void> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JournalConflictError);
  const c = error as JournalConflictError;
  expect(c.code).toBe("JOURNAL_CONFLICT");
  expect(c.persistenceId).toBe(id);
  expect(c.seqNr).toBe(seqNr);
  expect(c.fields).toMatchObject({ persistenceId: id, seqNr });
}

let counter = 0;
const uid = (what: string) => `${what}-${process.pid}-${counter++}`;

/** PostgreSQL runs twice: with named statements (the default) and without. */
const backends = persistenceBackends("journal", { unnamedToo: true });

describe.each(backends)("Journal contract: %s", (name, make) => {
  let backend: Backend;
  let store: Opened;
  let j: Journal;
  beforeAll(() => {
    backend = make();
    store = backend.open();
    j = store.journal;
  });
  afterAll(async () => {
    await backend.teardown();
  });

  it("appends and reads back in order, with serializer id, tags and timestamps", async () => {
    const id = uid("roundtrip");
    await j.append(id, 1, [
      ev("a", { serializerId: 7, tags: ["t1", "t2"], timestampMs: 1 }),
      ev("b", { serializerId: 0xffff_ffff, timestampMs: 2 }),
    ]);
    await j.append(id, 3, [ev("c", { serializerId: 100, tags: [], timestampMs: 3 })]);
    const events = await j.read(id, 1, Number.MAX_SAFE_INTEGER);
    expect(events).toEqual([
      {
        persistenceId: id,
        sequenceNr: 1,
        serializerId: 7,
        bytes: enc.encode("a"),
        tags: ["t1", "t2"],
        timestampMs: 1,
      },
      {
        persistenceId: id,
        sequenceNr: 2,
        serializerId: 0xffff_ffff,
        bytes: enc.encode("b"),
        tags: [],
        timestampMs: 2,
      },
      {
        persistenceId: id,
        sequenceNr: 3,
        serializerId: 100,
        bytes: enc.encode("c"),
        tags: [],
        timestampMs: 3,
      },
    ]);
    for (const e of events) expect(e.bytes.constructor).toBe(Uint8Array);
    expect(await j.read(uid("unknown"), 1, 100)).toEqual([]);
  });

  it("reads ranges, honours max, and returns at most readBatchMax events per call", async () => {
    const id = uid("ranges");
    await appendN(j, id, 120);
    expect(seqs(await j.read(id, 10, 20))).toEqual(Array.from({ length: 11 }, (_, i) => 10 + i));
    expect(seqs(await j.read(id, 10, 20, 3))).toEqual([10, 11, 12]);
    expect(await j.read(id, 10, 20, 0)).toEqual([]);
    expect(await j.read(id, 20, 10)).toEqual([]);
    expect(await j.read(id, 121, 500)).toEqual([]);
    const first = await j.read(id, 1, 1_000);
    expect(first).toHaveLength(50); // readBatchMax
    const all: PersistedEvent[] = [];
    for (let from = 1; ; ) {
      const page = await j.read(id, from, 1_000, 1_000);
      if (page.length === 0) break;
      all.push(...page);
      from = (page.at(-1) as PersistedEvent).sequenceNr + 1;
    }
    expect(texts(all)).toEqual(Array.from({ length: 120 }, (_, i) => `${id}#${i + 1}`));
  });

  it("highestSequenceNr is 0 for an unknown id and the last appended number otherwise", async () => {
    const id = uid("highest");
    expect(await j.highestSequenceNr(id)).toBe(0);
    await appendN(j, id, 7);
    expect(await j.highestSequenceNr(id)).toBe(7);
  });

  it("deleteTo removes events but keeps the highest sequence number (no reuse)", async () => {
    const id = uid("delete");
    await appendN(j, id, 5);
    await j.deleteTo(id, 3);
    expect(seqs(await j.read(id, 1, 100))).toEqual([4, 5]);
    expect(await j.highestSequenceNr(id)).toBe(5);
    await j.deleteTo(id, 1_000);
    expect(await j.read(id, 1, 100)).toEqual([]);
    expect(await j.highestSequenceNr(id)).toBe(5);
    await expectConflict(j.append(id, 1, [ev("reuse")]), id, 1);
    await expectConflict(j.append(id, 5, [ev("reuse")]), id, 5);
    await j.append(id, 6, [ev("six")]);
    expect(texts(await j.read(id, 1, 100))).toEqual(["six"]);
    expect(await j.highestSequenceNr(id)).toBe(6);
    await j.deleteTo(uid("never-written"), 10); // no-op
  });

  it("round-trips large payloads byte for byte", async () => {
    const id = uid("large");
    const big = new Uint8Array(4 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >>> 11)) & 0xff;
    const mids = Array.from({ length: 8 }, (_, k) => big.subarray(k * 1000, k * 1000 + 256 * 1024));
    await j.append(id, 1, [{ serializerId: 3, bytes: big, timestampMs: 5 }]);
    await j.append(
      id,
      2,
      mids.map((bytes) => ({ serializerId: 4, bytes, timestampMs: 6 })),
    );
    const back = await j.read(id, 1, 100);
    expect(back).toHaveLength(9);
    expect(Buffer.compare(back[0]?.bytes as Uint8Array, big)).toBe(0);
    for (const [k, m] of mids.entries())
      expect(Buffer.compare(back[k + 1]?.bytes as Uint8Array, m)).toBe(0);
  });

  it("rejects an append that does not start at highest + 1 (reuse or gap), writing nothing", async () => {
    const id = uid("expected");
    await expectConflict(j.append(id, 2, [ev("gap")]), id, 2);
    await j.append(id, 1, [ev("1"), ev("2")]);
    await expectConflict(j.append(id, 2, [ev("x"), ev("y")]), id, 2);
    await expectConflict(j.append(id, 4, [ev("gap")]), id, 4);
    expect(texts(await j.read(id, 1, 100))).toEqual(["1", "2"]);
  });

  it("fencing: a write with an older token than the newest seen is refused, nothing written", async () => {
    const key = uid("T/7");
    const a = uid("fenced-a");
    const b = uid("fenced-b");
    await j.append(a, 1, [ev("a1")], { key, token: 3 });
    // a newer holder advances the fence (without writing anything itself)
    await j.advanceFence?.({ key, token: 4 });
    const refused = await j.append(a, 2, [ev("stale")], { key, token: 3 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(FencedWriteError);
    expect((refused as FencedWriteError).code).toBe("FENCED_WRITE");
    expect((refused as FencedWriteError).newestToken).toBe(4);
    expect(await j.highestSequenceNr(a)).toBe(1);
    expect(texts(await j.read(a, 1, 10))).toEqual(["a1"]);
    // the newer token writes; same token again is fine; unfenced writes are not checked
    await j.append(a, 2, [ev("a2")], { key, token: 4 });
    await j.append(b, 1, [ev("b1")], { key, token: 4 });
    await j.append(b, 2, [ev("b2")]);
    // a stale fenced write batched with good ones fails alone
    const results = await Promise.allSettled([
      j.append(a, 3, [ev("a3")], { key, token: 4 }),
      j.append(b, 3, [ev("stale-b")], { key, token: 2 }),
    ]);
    expect(results[0].status).toBe("fulfilled");
    expect(results[1].status).toBe("rejected");
    expect(await j.highestSequenceNr(b)).toBe(2);
    // advancing to an older token than the newest is refused too
    await expect(j.advanceFence?.({ key, token: 1 })).rejects.toBeInstanceOf(FencedWriteError);
  });

  it("fencing: a write whose own hold ran out (fence.expired) is refused before the store, typed, nothing written", async () => {
    const key = uid("T/8");
    const a = uid("fenced-expired");
    let expired = false;
    const fence = { key, token: 5, expired: () => expired };
    await j.append(a, 1, [ev("a1")], fence);
    expired = true; // e.g. the shard's lease deadline passed while the process was paused
    const refused = await j.append(a, 2, [ev("late")], fence).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(FencedWriteError);
    expect((refused as FencedWriteError).message).toMatch(/ran out here/);
    expect(texts(await j.read(a, 1, 10))).toEqual(["a1"]);
    // no newer holder exists: the same token, held again, still writes
    expired = false;
    await j.append(a, 2, [ev("a2")], fence);
    expect(await j.highestSequenceNr(a)).toBe(2);
  });

  it("P3: two writers for one persistenceId: the second gets JournalConflictError", async () => {
    const id = uid("p3");
    const other = backend.open(); // another node's connection to the same database
    await appendN(j, id, 3);
    // both incarnations recovered to highest = 3 and now write at 4, concurrently
    const [a, b] = await Promise.allSettled([
      j.append(id, 4, [ev("A4"), ev("A5")]),
      other.journal.append(id, 4, [ev("B4")]),
    ]);
    const outcomes = [a.status, b.status].sort();
    expect(outcomes).toEqual(["fulfilled", "rejected"]);
    const loser = (a.status === "rejected" ? a : b) as PromiseRejectedResult;
    expect(loser.reason).toBeInstanceOf(JournalConflictError);
    expect((loser.reason as JournalConflictError).seqNr).toBe(4);
    const written = texts(await j.read(id, 4, 100));
    expect(written).toEqual(a.status === "fulfilled" ? ["A4", "A5"] : ["B4"]);
    // the loser retrying the same write is refused again
    const retry = a.status === "rejected" ? j : other.journal;
    await expectConflict(retry.append(id, 4, [ev("again")]), id, 4);
    await other.close();
  });

  it("1 000 ids appending concurrently through group commit keep per-id order", async () => {
    const ids = Array.from({ length: 1_000 }, (_, i) => uid(`many${i}`));
    const before = store.stats?.();
    const appends: Promise<void>[] = [];
    // each id pipelines 5 appends of 2 events without waiting: 10 000 events in one turn
    for (let k = 0; k < 5; k++)
      for (const id of ids)
        appends.push(j.append(id, 1 + 2 * k, [ev(`${id}#${1 + 2 * k}`), ev(`${id}#${2 + 2 * k}`)]));
    await Promise.all(appends);
    for (const id of ids.filter((_, i) => i % 50 === 0)) {
      const events = await j.read(id, 1, 100);
      expect(texts(events)).toEqual(Array.from({ length: 10 }, (_, i) => `${id}#${i + 1}`));
      expect(await j.highestSequenceNr(id)).toBe(10);
    }
    if (before !== undefined && store.stats !== undefined) {
      const after = store.stats();
      const batches = after.batches - before.batches;
      expect(after.appends - before.appends).toBe(5_000);
      // grouped: ~10 000 events / batchEventsMax 500 = ~20 batches, not 5 000
      expect(batches).toBeGreaterThanOrEqual(20);
      expect(batches).toBeLessThan(100);
      expect(after.batchEventsPeak).toBeLessThanOrEqual(500);
    }
  });

  it("a conflict inside a batch fails only its own caller", async () => {
    const stale = uid("stale");
    await j.append(stale, 1, [ev("first")]);
    const others = Array.from({ length: 50 }, (_, i) => uid(`neighbour${i}`));
    const before = store.stats?.();
    const results = await Promise.allSettled([
      ...others.slice(0, 25).map((id) => j.append(id, 1, [ev(id)])),
      j.append(stale, 1, [ev("stale write")]),
      ...others.slice(25).map((id) => j.append(id, 1, [ev(id)])),
    ]);
    // 51 appends in at most batchesInFlightMax (4) batches: the conflicting append
    // shared its batch with others
    if (before !== undefined && store.stats !== undefined)
      expect(store.stats().batches - before.batches).toBeLessThanOrEqual(4);
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(1);
    expect((results[25] as PromiseRejectedResult).reason).toBeInstanceOf(JournalConflictError);
    for (const id of others) expect(texts(await j.read(id, 1, 10))).toEqual([id]);
    expect(texts(await j.read(stale, 1, 10))).toEqual(["first"]);
  });

  it("refuses an append beyond batchEventsMax or batchBytesMax with JournalRejectedError", async () => {
    const id = uid("too-large");
    const many = Array.from({ length: 501 }, () => ev("x"));
    const error = await j.append(id, 1, many).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalRejectedError);
    expect((error as JournalRejectedError).reason).toBe("too-large");
    const huge = { serializerId: 1, bytes: new Uint8Array(8 * 1024 * 1024 + 1), timestampMs: 0 };
    await expect(j.append(id, 1, [huge])).rejects.toMatchObject({ code: "JOURNAL_REJECTED" });
    expect(await j.highestSequenceNr(id)).toBe(0);
  });

  it("close waits for accepted appends, then refuses new ones", async () => {
    const s = backend.name === "memory" ? { journal: new MemoryJournal() } : backend.open();
    const id = uid("close");
    const pending = s.journal.append(id, 1, [ev("accepted")]);
    await s.journal.close();
    await expect(pending).resolves.toBeUndefined();
    await expect(s.journal.append(id, 2, [ev("late")])).rejects.toMatchObject({
      code: "JOURNAL_REJECTED",
      reason: "closed",
    });
    expect(texts(await j.read(id, 1, 10))).toEqual(backend.name === "memory" ? [] : ["accepted"]);
  });

  it.runIf(name.startsWith("postgres"))(
    "postgres: a writer racing between pre-check and insert fails only the colliding append",
    async () => {
      const { pool, prefix } = backend.pg as NonNullable<Backend["pg"]>;
      const table = postgresTables(prefix).journal;
      const raced = uid("raced");
      const bystander = uid("bystander");
      // one batch slot, so both appends share one batch
      const journal = new PostgresJournal({
        pool,
        tablePrefix: prefix,
        batchesInFlightMax: 1,
      });
      await journal.highestSequenceNr(raced); // schema exists
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query(
          `INSERT INTO ${table} (persistence_id, sequence_nr, serializer_id, payload, timestamp_ms)
           VALUES ($1, 1, 1, '\\x00', 0)`,
          [raced],
        );
        // invisible to the batch's pre-check; its insert blocks on the uncommitted key
        const racing = journal.append(raced, 1, [ev("loser")]);
        const innocent = journal.append(bystander, 1, [ev("ok")]);
        let settled = false;
        void Promise.allSettled([racing, innocent]).then(() => {
          settled = true;
        });
        await sleep(300);
        expect(settled).toBe(false);
        await client.query("COMMIT");
        await expectConflict(racing, raced, 1);
        await expect(innocent).resolves.toBeUndefined();
        expect(texts(await j.read(bystander, 1, 10))).toEqual(["ok"]);
        expect(await j.highestSequenceNr(raced)).toBe(1);
        expect(journal.stats()).toMatchObject({ batches: 1, appends: 2 }); // one shared batch
      } finally {
        await journal.close();
        client.release();
      }
    },
  );
});

describe("journal settings and SQLite specifics", () => {
  it("rejects invalid bounds and table prefixes with ConfigError naming the key", () => {
    expect(() => new MemoryJournal({ journal: { batchEventsMax: 0 } })).toThrow(ConfigError);
    expect(() => new MemoryJournal({ journal: { readBatchMax: 1.5 } })).toThrow(
      /journal\.readBatchMax/,
    );
    expect(
      () => new MemoryJournal({ journal: { bogus: 1 } as unknown as { readBatchMax: number } }),
    ).toThrow(ConfigError);
    expect(() => sqlitePersistence({ path: ":memory:", tablePrefix: "x; DROP TABLE y" })).toThrow(
      /sqlite\.tablePrefix/,
    );
    expect(() =>
      sqlitePersistence({ path: ":memory:", synchronous: "off" as unknown as "full" }),
    ).toThrow(/sqlite\.synchronous/);
    expect(() => sqlitePersistence({ path: "" })).toThrow(ConfigError);
    expect(() => sqlitePersistence({ path: ":memory:", walCheckpointIntervalMs: -1 })).toThrow(
      /sqlite\.walCheckpointIntervalMs/,
    );
    expect(() => resolvePostgresSettings({ parallelBatchAppendsMin: 0 })).toThrow(
      /postgres\.parallelBatchAppendsMin/,
    );
    expect(resolvePostgresSettings().parallelBatchAppendsMin).toBe(64);
  });

  it("sqlite: a constraint violation inside a batch fails only its own append", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shardkit-sqlite-"));
    const p = sqlitePersistence({ path: join(dir, "poison.db") });
    // a trigger stands in for the (otherwise impossible) primary-key violation
    p.db.exec(`CREATE TRIGGER poison BEFORE INSERT ON shardkit_journal
      WHEN NEW.persistence_id = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END`);
    const results = await Promise.allSettled([
      p.journal.append("a", 1, [ev("a")]),
      p.journal.append("poison", 1, [ev("p")]),
      p.journal.append("b", 1, [ev("b")]),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(JournalConflictError);
    expect(p.journal.stats()).toMatchObject({ batches: 1, appends: 3 });
    expect(texts(await p.journal.read("a", 1, 10))).toEqual(["a"]);
    expect(texts(await p.journal.read("b", 1, 10))).toEqual(["b"]);
    expect(await p.journal.highestSequenceNr("poison")).toBe(0);
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sqlite opens the file in WAL mode with the configured synchronous level", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shardkit-sqlite-"));
    const p = sqlitePersistence({
      path: join(dir, "wal.db"),
      synchronous: "normal",
      tablePrefix: "t_",
    });
    expect(p.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(p.db.pragma("synchronous", { simple: true })).toBe(1); // NORMAL
    const tables = p.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all();
    expect(tables).toEqual(["t_fence", "t_journal", "t_journal_deleted", "t_lease", "t_snapshot"]);
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sqlite checkpoints the WAL on a worker thread, and commits do not (below the bound)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shardkit-sqlite-"));
    const p = sqlitePersistence({ path: join(dir, "ckpt.db"), walCheckpointIntervalMs: 10 });
    try {
      for (let i = 0; i < 20; i++)
        await Promise.all(
          Array.from({ length: 50 }, (_, k) => p.journal.append(`id${k}`, i + 1, [ev("x")])),
        );
      const deadline = Date.now() + 5_000;
      while ((p.checkpointStats()?.framesCheckpointed ?? 0) === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      const stats = p.checkpointStats();
      expect(stats?.failures).toBe(0);
      expect(stats?.runs).toBeGreaterThan(0);
      expect(stats?.framesCheckpointed).toBeGreaterThan(0);
      // the worker's copy is complete: nothing left for an inline checkpoint to do
      await new Promise((r) => setTimeout(r, 50));
      const [row] = p.db.pragma("wal_checkpoint(PASSIVE)") as {
        log: number;
        checkpointed: number;
      }[];
      expect(row?.checkpointed).toBe(row?.log);
      expect(await p.journal.highestSequenceNr("id7")).toBe(20);
    } finally {
      await p.close(); // stops the worker: close resolves, nothing keeps running
      rmSync(dir, { recursive: true, force: true });
    }
    expect(p.checkpointStats()?.failures).toBe(0);
  });

  it("sqlite runs no checkpoint worker for :memory: or walCheckpointIntervalMs 0", async () => {
    const memory = sqlitePersistence({ path: ":memory:" });
    expect(memory.checkpointStats()).toBeUndefined();
    await memory.close();
    const dir = mkdtempSync(join(tmpdir(), "shardkit-sqlite-"));
    const off = sqlitePersistence({ path: join(dir, "off.db"), walCheckpointIntervalMs: 0 });
    expect(off.checkpointStats()).toBeUndefined();
    await off.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
