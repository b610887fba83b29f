/**
 * Issue 13 item 6c: a graceful stop of an event-sourced entity (hand-off or passivation,
 * without a stop message) lets the append in flight finish and its reply go out before
 * the entity stops; the shard reports itself stopped only after that. Deterministic: one
 * shard actor on a simulated node, a journal whose appends wait for release().
 */
import { describe, expect, it } from "vitest";
import {
  type ActorRef,
  type Behavior,
  Behaviors,
  Effect,
  type EventCodec,
  EventSourcedBehavior,
  PoisonPill,
  persistenceIdOf,
} from "../../src/actor/index.js";
import { shardBehavior } from "../../src/cluster/sharding/shard-actor.js";
import { resolveShardSettings } from "../../src/core/shard/shard-settings.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import type { Journal } from "../../src/ports/journal.js";
import { EntityEnvelope, type ShardReport } from "../../src/protocol/sharding.js";
import { simSystem } from "../actor/sim-system.js";
import { JournalWrapper } from "../support/journal-wrapper.js";

type Cmd = { type: "add"; n: number; replyTo: ActorRef<number> };
type Ev = { n: number };
type St = { total: number };

const codec: EventCodec<Ev> = {
  encode: (v) => ({ serializerId: 7, bytes: new TextEncoder().encode(JSON.stringify(v)) }),
  decode: (_id, bytes) => JSON.parse(new TextDecoder().decode(bytes)) as Ev,
};

/** A journal whose appends wait for release() while `gate` is on. */
class GatedJournal extends JournalWrapper {
  constructor() {
    super(new MemoryJournal());
  }
  gate = false;
  private waiting: (() => void)[] = [];
  get pending(): number {
    return this.waiting.length;
  }
  release(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const f of w) f();
  }
  override async append(...args: Parameters<Journal["append"]>): Promise<void> {
    if (this.gate) await new Promise<void>((r) => this.waiting.push(r));
    return this.inner.append(...args);
  }
}

function counter(journal: Journal, id: string) {
  return EventSourcedBehavior.create<Cmd, Ev, St>({
    persistenceId: persistenceIdOf("Counter", id),
    emptyState: { total: 0 },
    commandHandler: (_s, cmd) =>
      Effect.persist<Ev, St>({ n: cmd.n }).thenReply(cmd.replyTo, (s) => s.total),
    eventHandler: (s, e) => ({ total: s.total + e.n }),
    journal,
    eventCodec: codec,
  });
}

function setup() {
  const s = simSystem();
  const journal = new GatedJournal();
  const replies: number[] = [];
  const reports: ShardReport[] = [];
  const replyTo = s.system.spawn(Behaviors.receiveMessage<number>((n) => void replies.push(n)));
  const region = s.system.spawn(Behaviors.receiveMessage<ShardReport>((r) => void reports.push(r)));
  const stopped: string[] = [];
  const shard = s.system.spawn(
    shardBehavior({
      shardId: "7",
      region,
      createBehavior: (ctx) => counter(journal, ctx.entityId) as Behavior<unknown>,
      settings: resolveShardSettings(),
      lifecycle: {
        shardStarted: () => {},
        shardStopped: () => {},
        entityStarted: () => {},
        entityStopped: (id) => void stopped.push(id),
        entityPassivated: () => {},
        regionStarted: () => {},
        regionStopped: () => {},
        shardHomeReceived: () => {},
        handOffCompleted: () => {},
        handOffTimedOut: () => {},
        handOffAbandoned: () => {},
      },
    }),
  );
  return { s, journal, replies, reports, replyTo, shard, stopped };
}

describe("graceful stop of an event-sourced entity (issue 13, 6c)", () => {
  it("hand-off without a stop message: the append in flight finishes and its reply goes out before the shard stops", async () => {
    const { s, journal, replies, reports, replyTo, shard, stopped } = setup();
    shard.tell(new EntityEnvelope("7", "e1", { type: "add", n: 1, replyTo }));
    await s.settle(10);
    expect(replies).toEqual([1]);
    journal.gate = true;
    shard.tell(new EntityEnvelope("7", "e1", { type: "add", n: 2, replyTo }));
    await s.settle(10);
    expect(journal.pending).toBe(1);
    shard.tell({ type: "shardkit.shard.hand-off" });
    await s.settle(100);
    // The write has not ended: the entity must still run, the shard not report stopped.
    expect(stopped).toEqual([]);
    expect(reports.filter((r) => r.type === "shardkit.shard-stopped")).toEqual([]);
    journal.release();
    await s.settle(100);
    expect(replies).toEqual([1, 3]);
    expect(stopped).toEqual(["e1"]);
    expect(reports.filter((r) => r.type === "shardkit.shard-stopped")).toHaveLength(1);
    expect(await journal.inner.highestSequenceNr("Counter|e1")).toBe(2);
  });

  it("passivation without a stop message waits for the append in flight too", async () => {
    const { s, journal, replies, replyTo, shard, stopped } = setup();
    shard.tell(new EntityEnvelope("7", "e2", { type: "add", n: 5, replyTo }));
    await s.settle(10);
    journal.gate = true;
    shard.tell(new EntityEnvelope("7", "e2", { type: "add", n: 1, replyTo }));
    await s.settle(10);
    shard.tell({ type: "shardkit.shard.passivate", entityId: "e2" });
    await s.settle(100);
    expect(stopped).toEqual([]);
    journal.release();
    await s.settle(100);
    expect(replies).toEqual([5, 6]);
    expect(stopped).toEqual(["e2"]);
    // A message after the passivation goes to a new incarnation, which recovers 6.
    journal.gate = false;
    shard.tell(new EntityEnvelope("7", "e2", { type: "add", n: 1, replyTo }));
    await s.settle(100);
    expect(replies).toEqual([5, 6, 7]);
  });

  it("a PoisonPill told directly waits for the append in flight (and for recovery)", async () => {
    const s = simSystem();
    const journal = new GatedJournal();
    const replies: number[] = [];
    const replyTo = s.system.spawn(Behaviors.receiveMessage<number>((n) => void replies.push(n)));
    const a = s.system.spawn(counter(journal, "p1"));
    // During recovery: commands before the pill are handled, then it stops.
    a.tell({ type: "add", n: 1, replyTo });
    a.tell(PoisonPill);
    a.tell({ type: "add", n: 10, replyTo });
    await s.settle(100);
    expect(replies).toEqual([1]);
    expect(s.system.stats.deadLetters).toBe(1); // the command after the pill
    const b = s.system.spawn(counter(journal, "p1"));
    await s.settle(10);
    journal.gate = true;
    b.tell({ type: "add", n: 2, replyTo });
    await s.settle(10);
    b.tell(PoisonPill);
    await s.settle(100);
    expect(replies).toEqual([1]);
    journal.release();
    await s.settle(100);
    expect(replies).toEqual([1, 3]);
    b.tell({ type: "add", n: 2, replyTo });
    await s.settle(100);
    expect(replies).toEqual([1, 3]);
  });
});
