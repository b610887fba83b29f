/**
 * Event-sourced entities on the real plugins (memory, SQLite and, when SHARDKIT_PG_URL is
 * set, PostgreSQL; otherwise a visible SKIP line), with the real runtime: many entities
 * persisting concurrently through group commit, recovery by a new incarnation on another
 * connection (another "node"), snapshots, and P3: a stale second incarnation writing gets
 * JournalConflictError and stops, losing nothing the first one wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActorFailed } from "../../src/actor/event-stream.js";
import {
  type ActorRef,
  ActorSystem,
  ask,
  Effect,
  EventSourcedBehavior,
  persistenceIdOf,
} from "../../src/actor/index.js";
import { msgpackCodec } from "../../src/api/codecs.js";
import { type Journal, JournalConflictError } from "../../src/ports/journal.js";
import type { SnapshotStore } from "../../src/ports/snapshot-store.js";
import { createNodeRuntime } from "../../src/runtime/node/index.js";
import { type Backend, persistenceBackends } from "./journal-backends.js";

type Cmd =
  | { type: "add"; n: number; replyTo: ActorRef<number> }
  | { type: "get"; replyTo: ActorRef<number> };
type Ev = { type: "added"; n: number };
type St = { total: number };
const Eff = Effect.of<Ev, St>();

let run = 0;

function counter(
  pid: string,
  journal: Journal,
  snapshots?: SnapshotStore,
  onRecovered?: (s: St) => void,
) {
  return EventSourcedBehavior.create<Cmd, Ev, St>({
    persistenceId: pid,
    emptyState: { total: 0 },
    commandHandler: (state, cmd) =>
      cmd.type === "add"
        ? Eff.persist({ type: "added", n: cmd.n }).thenReply(cmd.replyTo, (s) => s.total)
        : Eff.reply(cmd.replyTo, state.total),
    eventHandler: (state, ev) => ({ total: state.total + ev.n }),
    journal,
    eventCodec: msgpackCodec<Ev>(),
    ...(snapshots === undefined
      ? {}
      : { snapshots, snapshotCodec: msgpackCodec<St>(), snapshotAfter: 10 }),
    onRecoveryCompleted: onRecovered,
  });
}

function system(): ActorSystem {
  return ActorSystem.create({
    name: `es${run++}`,
    runtime: createNodeRuntime({ logLevel: "off", unrefTimers: true }),
  });
}

const add = (ref: ActorRef<Cmd>, n: number, timeoutMs = 10_000) =>
  ask(ref, (replyTo: ActorRef<number>) => ({ type: "add", n, replyTo }), { timeoutMs });
const get = (ref: ActorRef<Cmd>) =>
  ask(ref, (replyTo: ActorRef<number>) => ({ type: "get", replyTo }), { timeoutMs: 10_000 });

describe.each(persistenceBackends("es_backends"))("event-sourced entities on %s", (_n, make) => {
  let backend: Backend;
  const systems: ActorSystem[] = [];
  const sys = () => {
    const s = system();
    systems.push(s);
    return s;
  };
  beforeAll(() => {
    backend = make();
  });
  afterAll(async () => {
    for (const s of systems) await s.terminate();
    await backend.teardown();
  });

  it("50 entities persisting concurrently: every acknowledged event is there, in order, and a new incarnation on another connection recovers it", async () => {
    const tag = `c${run}`;
    const { journal } = backend.open();
    const s1 = sys();
    const ids = Array.from({ length: 50 }, (_, i) => persistenceIdOf("Counter", `${tag}-${i}`));
    const refs = ids.map((pid) => s1.spawn(counter(pid, journal)));
    const acks = await Promise.all(
      refs.map(async (ref) => {
        const replies: number[] = [];
        for (let k = 1; k <= 20; k++) replies.push(await add(ref, k));
        return replies;
      }),
    );
    // Each reply is the total after that event: 1, 3, 6, ... (never before it was durable).
    for (const replies of acks)
      expect(replies).toEqual(replies.map((_, i) => ((i + 1) * (i + 2)) / 2));
    for (const pid of ids) {
      const events = await journal.read(pid, 1, 1_000);
      expect(events.map((e) => e.sequenceNr)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    }
    const other = backend.open();
    const s2 = sys();
    for (const pid of ids.slice(0, 10))
      expect(await get(s2.spawn(counter(pid, other.journal)))).toBe(210);
  });

  it("recovers from the latest snapshot plus the events after it", async () => {
    const pid = persistenceIdOf("Snap", `s${run}`);
    const { journal, snapshots } = backend.open();
    const ref = sys().spawn(counter(pid, journal, snapshots));
    for (let k = 0; k < 35; k++) await add(ref, 1);
    const snap = await snapshots.loadLatest(pid);
    expect(snap?.sequenceNr).toBe(30);
    const other = backend.open();
    let recoveredFrom: St | undefined;
    const again = sys().spawn(
      counter(pid, other.journal, other.snapshots, (st) => {
        recoveredFrom = st;
      }),
    );
    expect(await get(again)).toBe(35);
    expect(recoveredFrom).toEqual({ total: 35 });
  });

  it("P3: a stale second incarnation gets JournalConflictError and stops; the first one's events stay", async () => {
    const pid = persistenceIdOf("Dup", `d${run}`);
    const a = backend.open();
    const b = backend.open();
    const sa = sys();
    const sb = sys();
    const failures: ActorFailed[] = [];
    sb.eventStream.subscribe("ActorFailed", (e) => failures.push(e));
    const first = sa.spawn(counter(pid, a.journal));
    const second = sb.spawn(counter(pid, b.journal));
    expect(await get(first)).toBe(0);
    expect(await get(second)).toBe(0);
    expect(await add(first, 1)).toBe(1);
    await expect(add(second, 100, 1_000)).rejects.toThrow(); // never acknowledged
    expect(failures.some((f) => f.error instanceof JournalConflictError)).toBe(true);
    expect(await get(first)).toBe(1);
    const events = await a.journal.read(pid, 1, 10);
    expect(events.map((e) => e.sequenceNr)).toEqual([1]);
  });
});
