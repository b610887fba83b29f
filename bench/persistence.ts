/**
 * Journal benchmarks (real databases, one process): 1 000 entities write concurrently,
 * each persisting one ~100-byte event at a time (await, then the next), as event-sourced
 * entities do; group commit turns that into a few large batches.
 * - persistence.sqlite.events.throughput / persistence.pg.events.throughput: events/s;
 * - persistence.sqlite.persist.p99.ms / persistence.pg.persist.p99.ms: append latency.
 * SQLite uses a temp file (synchronous=FULL, the default). PostgreSQL runs only when
 * SHARDKIT_PG_URL is set (else a SKIP line), on tables with a unique prefix, dropped after.
 *
 * Recovery (SQLite, temp file): one event-sourced entity (EventSourcedBehavior on the real
 * runtime) whose journal holds 10 000 events of ~100 bytes (JSON), written up front in
 * appends of 1 000. Time from spawn until its first command (a `get`) is answered:
 * - persistence.recovery10k.ms: no snapshot, all 10 000 events replayed (pages of the
 *   journal's readBatchMax);
 * - persistence.recovery10k.snapshot.ms: a snapshot at sequence number 9 990 (saved
 *   through the snapshot store), then 10 events replayed.
 * Each is the median of 5 spawns after 1 warm-up, the same process and database (page
 * cache warm); each spawned entity is stopped before the next.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import {
  type ActorRef,
  ActorSystem,
  ask,
  Effect,
  type EventCodec,
  EventSourcedBehavior,
  persistenceIdOf,
} from "../src/actor/index.js";
import type { GroupCommitStats } from "../src/persistence/group-committer.js";
import { postgresPersistence } from "../src/persistence/postgres/postgres-persistence.js";
import { postgresTables } from "../src/persistence/postgres/postgres-schema.js";
import { sqlitePersistence } from "../src/persistence/sqlite/sqlite-persistence.js";
import type { Journal, JournalEvent } from "../src/ports/journal.js";
import type { SnapshotStore } from "../src/ports/snapshot-store.js";
import { createNodeRuntime } from "../src/runtime/node/index.js";
import { type BenchGroup, median, percentile, repeat } from "./harness.js";

const ENTITIES = 1_000;
const RUN_MS = 2_000;
const payload = new Uint8Array(100).fill(7);
const RECOVERY_EVENTS = 10_000;
const RECOVERY_SNAPSHOT_AT = 9_990;
const RECOVERY_APPEND_BATCH = 1_000;
const RECOVERY_RUNS = 5;
const RECOVERY_WARMUP = 1;
const RECOVERY_ASK_TIMEOUT_MS = 60_000;

interface RunResult {
  readonly throughput: number;
  readonly p99Ms: number;
}

/** Every entity appends one event at a time for RUN_MS; `run` distinguishes runs' ids. */
async function drive(journal: Journal, run: number): Promise<RunResult> {
  const latencies: number[] = [];
  let events = 0;
  const t0 = performance.now();
  const deadline = t0 + RUN_MS;
  const entity = async (i: number) => {
    const id = `bench-${run}-${i}`;
    for (let seq = 1; performance.now() < deadline; seq++) {
      const event: JournalEvent = { serializerId: 1, bytes: payload, timestampMs: Date.now() };
      const start = performance.now();
      await journal.append(id, seq, [event]);
      latencies.push(performance.now() - start);
      events++;
    }
  };
  await Promise.all(Array.from({ length: ENTITIES }, (_, i) => entity(i)));
  const seconds = (performance.now() - t0) / 1000;
  return { throughput: events / seconds, p99Ms: percentile(latencies, 99) };
}

async function measure(
  journal: Journal & { stats(): GroupCommitStats },
): Promise<{ throughput: number; p99Ms: number; batchEvents: number }> {
  let run = 0;
  const before = journal.stats();
  const results: RunResult[] = [];
  await repeat(3, 1, async () => {
    const r = await drive(journal, run++);
    if (run > 1) results.push(r);
    return r.throughput;
  });
  const after = journal.stats();
  return {
    throughput: median(results.map((r) => r.throughput)),
    p99Ms: median(results.map((r) => r.p99Ms)),
    batchEvents: (after.events - before.events) / Math.max(1, after.batches - before.batches),
  };
}

async function sqliteBench(report: Parameters<BenchGroup["run"]>[0]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "shardkit-bench-"));
  const p = sqlitePersistence({ path: join(dir, "bench.db") });
  try {
    const m = await measure(p.journal);
    const note = `${ENTITIES} entities, synchronous=${p.settings.synchronous}, ~${Math.round(m.batchEvents)} events/batch`;
    report({
      metric: "persistence.sqlite.events.throughput",
      value: m.throughput,
      unit: "events/s",
      note,
    });
    report({
      metric: "persistence.sqlite.persist.p99.ms",
      value: m.p99Ms,
      unit: "ms",
      note: "append latency",
    });
  } finally {
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function pgBench(report: Parameters<BenchGroup["run"]>[0], url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const prefix = `shardkit_bench_${process.pid}_`;
  const p = postgresPersistence({ pool, tablePrefix: prefix });
  try {
    const m = await measure(p.journal);
    const note = `${ENTITIES} entities, ~${Math.round(m.batchEvents)} events/batch`;
    report({
      metric: "persistence.pg.events.throughput",
      value: m.throughput,
      unit: "events/s",
      note,
    });
    report({
      metric: "persistence.pg.persist.p99.ms",
      value: m.p99Ms,
      unit: "ms",
      note: "append latency",
    });
  } finally {
    await p.close();
    // every table the schema creates (the fence table too)
    await pool.query(`DROP TABLE IF EXISTS ${Object.values(postgresTables(prefix)).join(", ")}`);
    await pool.end();
  }
}

// ------------------------------------------------------------------ recovery

type RCmd =
  | { readonly type: "get"; readonly replyTo: ActorRef<number> }
  | { readonly type: "stop"; readonly replyTo: ActorRef<number> };
/** ~100 bytes as JSON: an amount and a note, as a typical domain event. */
type REv = { readonly type: "deposited"; readonly amount: number; readonly note: string };
type RSt = { readonly balance: number; readonly count: number };
const REff = Effect.of<REv, RSt>();
const EMPTY: RSt = { balance: 0, count: 0 };
const applyEvent = (s: RSt, e: REv): RSt => ({ balance: s.balance + e.amount, count: s.count + 1 });

function jsonCodec<T>(serializerId: number): EventCodec<T> {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  return {
    encode: (v) => ({ serializerId, bytes: enc.encode(JSON.stringify(v)) }),
    decode: (_id, bytes) => JSON.parse(dec.decode(bytes)) as T,
  };
}
const plainEventCodec = jsonCodec<REv>(101);
/** Events decoded so far: checks how many each recovery really replayed. */
let decoded = 0;
const eventCodec: EventCodec<REv> = {
  encode: plainEventCodec.encode,
  decode: (id, bytes) => {
    decoded++;
    return plainEventCodec.decode(id, bytes);
  },
};
const stateCodec = jsonCodec<RSt>(102);

function eventAt(seq: number): REv {
  return {
    type: "deposited",
    amount: seq % 97,
    note: `order ${seq} paid by card, ref ${seq * 7919}`,
  };
}

/** Writes RECOVERY_EVENTS events for `pid`; with `snapshotAt`, also a snapshot there. */
async function seedHistory(
  journal: Journal,
  snapshots: SnapshotStore,
  pid: string,
  snapshotAt: number | undefined,
): Promise<number> {
  let state = EMPTY;
  let bytes = 0;
  for (let from = 1; from <= RECOVERY_EVENTS; from += RECOVERY_APPEND_BATCH) {
    const events: JournalEvent[] = [];
    for (let seq = from; seq < from + RECOVERY_APPEND_BATCH && seq <= RECOVERY_EVENTS; seq++) {
      const ev = eventAt(seq);
      const enc = eventCodec.encode(ev);
      bytes += enc.bytes.length;
      events.push({ ...enc, timestampMs: Date.now() });
      state = applyEvent(state, ev);
      if (seq === snapshotAt) await snapshots.save(pid, seq, Date.now(), stateCodec.encode(state));
    }
    await journal.append(pid, from, events);
  }
  return bytes / RECOVERY_EVENTS;
}

/** Spawns the entity, times spawn -> first answer, checks the state, stops it. */
async function recoverOnce(
  system: ActorSystem,
  journal: Journal,
  snapshots: SnapshotStore,
  pid: string,
  replayed: number,
): Promise<number> {
  const decodedBefore = decoded;
  const behavior = EventSourcedBehavior.create<RCmd, REv, RSt>({
    persistenceId: pid,
    emptyState: EMPTY,
    commandHandler: (state, cmd) =>
      cmd.type === "get"
        ? REff.reply(cmd.replyTo, state.count)
        : REff.reply(cmd.replyTo, state.count).thenStop(),
    eventHandler: applyEvent,
    journal,
    eventCodec,
    snapshots,
    snapshotCodec: stateCodec,
  });
  const t0 = performance.now();
  const ref = system.spawn(behavior);
  const count = await ask(ref, (replyTo: ActorRef<number>) => ({ type: "get", replyTo }), {
    timeoutMs: RECOVERY_ASK_TIMEOUT_MS,
  });
  const ms = performance.now() - t0;
  if (count !== RECOVERY_EVENTS)
    throw new Error(`recovered ${count} events of ${RECOVERY_EVENTS} for ${pid}`);
  if (decoded - decodedBefore !== replayed)
    throw new Error(`${pid} replayed ${decoded - decodedBefore} events, expected ${replayed}`);
  await ask(ref, (replyTo: ActorRef<number>) => ({ type: "stop", replyTo }), {
    timeoutMs: RECOVERY_ASK_TIMEOUT_MS,
  });
  return ms;
}

async function recoveryBench(report: Parameters<BenchGroup["run"]>[0]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "shardkit-bench-recovery-"));
  const p = sqlitePersistence({ path: join(dir, "recovery.db") });
  const system = ActorSystem.create({
    name: "benchrecovery",
    runtime: createNodeRuntime({ logLevel: "warn" }),
  });
  try {
    const plain = persistenceIdOf("Account", "no-snapshot");
    const snap = persistenceIdOf("Account", "snapshot");
    const eventBytes = await seedHistory(p.journal, p.snapshots, plain, undefined);
    await seedHistory(p.journal, p.snapshots, snap, RECOVERY_SNAPSHOT_AT);
    const once = (pid: string, replayed: number) => () =>
      recoverOnce(system, p.journal, p.snapshots, pid, replayed);
    const full = await repeat(RECOVERY_RUNS, RECOVERY_WARMUP, once(plain, RECOVERY_EVENTS));
    report({
      metric: "persistence.recovery10k.ms",
      value: median(full),
      unit: "ms",
      note: `SQLite, ${RECOVERY_EVENTS} events of ~${Math.round(eventBytes)} B replayed, spawn -> first reply, median of ${RECOVERY_RUNS}`,
    });
    const withSnap = await repeat(
      RECOVERY_RUNS,
      RECOVERY_WARMUP,
      once(snap, RECOVERY_EVENTS - RECOVERY_SNAPSHOT_AT),
    );
    report({
      metric: "persistence.recovery10k.snapshot.ms",
      value: median(withSnap),
      unit: "ms",
      note: `snapshot at ${RECOVERY_SNAPSHOT_AT}, ${RECOVERY_EVENTS - RECOVERY_SNAPSHOT_AT} events replayed`,
    });
  } finally {
    await system.terminate();
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const persistenceGroup: BenchGroup = {
  name: "persistence",
  description:
    "journal group commit: 1 000 entities persisting concurrently; event-sourced recovery",
  async run(report) {
    await sqliteBench(report);
    await recoveryBench(report);
    const url = process.env.SHARDKIT_PG_URL;
    if (url) await pgBench(report, url);
    else process.stdout.write("SKIP persistence.pg.*: SHARDKIT_PG_URL is not set\n");
  },
};
