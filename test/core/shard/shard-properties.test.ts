/**
 * Property tests of the shard machine (fast-check, fixed seed: deterministic in CI; a
 * failure prints the seed and the shrunk input sequence). A model driver feeds random
 * input sequences — deliveries, StartEntity, confirmations, terminations (clean, failed,
 * with or without the passivated flag, stale), Passivate, timers, store acks/failures,
 * limits, hand-off, shutdown — and checks after every output:
 *
 * - never two live incarnations of one entity (start-entity-actor .. entity-terminated
 *   or force-stop), and no send to an entity without a live actor or after its stop;
 * - every delivered message ends exactly once as send-to-entity, in return-to-region, or
 *   as buffer-overflow; per entity, sends keep delivery order;
 * - remember entities: an actor starts only for an entity the store holds (persist before
 *   acting), one write in flight, batches within maxUpdatesPerWrite;
 * - ShardStopped only when no actor is left; nothing starts or is sent afterwards.
 *
 * Each run ends with a hand-off driven to completion, after which every message must be
 * accounted for and the shard's buffers empty.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RememberEntitiesBatch } from "../../../src/core/shard/remember-entities.js";
import { applyRememberBatch, assertValidBatch } from "../../../src/core/shard/remember-entities.js";
import { ShardMachine } from "../../../src/core/shard/shard-machine.js";
import type { ShardSettings } from "../../../src/core/shard/shard-settings.js";
import {
  type ShardInput,
  type ShardOutput,
  ShardPhase,
} from "../../../src/core/shard/shard-types.js";

const ENTITIES = ["a", "b", "c", "d"];

type Action =
  | { readonly t: "deliver"; readonly e: number; readonly n: number }
  | { readonly t: "start-entity"; readonly e: number }
  | { readonly t: "started"; readonly e: number }
  | {
      readonly t: "terminate";
      readonly e: number;
      readonly passivated: boolean;
      readonly failed: boolean;
    }
  | { readonly t: "passivate"; readonly e: number; readonly withMessage: boolean }
  | { readonly t: "fire"; readonly k: number }
  | { readonly t: "advance"; readonly ms: number }
  | { readonly t: "ack" }
  | { readonly t: "fail" }
  | { readonly t: "stale-ack"; readonly id: number }
  | { readonly t: "recovered"; readonly mask: number }
  | { readonly t: "limit"; readonly n: number }
  | { readonly t: "hand-off" }
  | { readonly t: "shutdown" };

const entity = fc.nat(ENTITIES.length - 1);

// Hand-off and shutdown are rare, so most runs spend a while in normal operation first.
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 32,
    arbitrary: fc.record({
      t: fc.constant("deliver" as const),
      e: entity,
      n: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("start-entity" as const), e: entity }) },
  { weight: 20, arbitrary: fc.record({ t: fc.constant("started" as const), e: entity }) },
  {
    weight: 16,
    arbitrary: fc.record({
      t: fc.constant("terminate" as const),
      e: entity,
      passivated: fc.boolean(),
      failed: fc.boolean(),
    }),
  },
  {
    weight: 12,
    arbitrary: fc.record({
      t: fc.constant("passivate" as const),
      e: entity,
      withMessage: fc.boolean(),
    }),
  },
  { weight: 12, arbitrary: fc.record({ t: fc.constant("fire" as const), k: fc.nat(5) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      t: fc.constant("advance" as const),
      ms: fc.integer({ min: 0, max: 3_000 }),
    }),
  },
  { weight: 12, arbitrary: fc.constant({ t: "ack" as const }) },
  { weight: 4, arbitrary: fc.constant({ t: "fail" as const }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("stale-ack" as const), id: fc.nat(20) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("recovered" as const), mask: fc.nat(15) }) },
  {
    weight: 4,
    arbitrary: fc.record({ t: fc.constant("limit" as const), n: fc.integer({ min: 1, max: 4 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ t: "hand-off" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "shutdown" as const }) },
);

const settingsArb: fc.Arbitrary<Partial<ShardSettings>> = fc.record({
  rememberEntities: fc.boolean(),
  passivateIdleAfterMs: fc.constantFrom(0, 1_000),
  entityRestartBackoffMs: fc.constantFrom(500, 2_000),
  entityRecoveryStrategy: fc.constantFrom("all" as const, "constant" as const),
  entityRecoveryConstantRateFrequencyMs: fc.constant(100),
  entityRecoveryConstantRateNumberOfEntities: fc.integer({ min: 1, max: 2 }),
  maxUpdatesPerWrite: fc.integer({ min: 1, max: 3 }),
  bufferSizeMax: fc.constantFrom(1, 3, 8, 100),
  handOffTimeoutMs: fc.constantFrom(1_000, 5_000),
});

/** The model driver: runs the machine and checks every output against the rules. */
class Driver {
  readonly machine: ShardMachine<string>;
  now = 0;
  private seq = 0;
  private readonly timers = new Map<string, { deadline: number; seq: number }>();
  /** Entities with a live actor; the value says whether it was confirmed started. */
  readonly live = new Map<string, boolean>();
  /** Entities that got a stop: no send until the next start. */
  private readonly stopped = new Set<string>();
  private store = new Set<string>();
  private write: { batchId: number; batch: RememberEntitiesBatch } | undefined;
  private nextMessage = 0;
  /** Message -> its entity, for every delivered message. */
  readonly delivered = new Map<string, string>();
  /** Messages sent, returned or overflowed (each at most once). */
  readonly accounted = new Set<string>();
  private readonly lastSent = new Map<string, number>();
  private shardStopped = false;
  /** Every output, in order (for the lockstep comparison). */
  readonly log: ShardOutput<string>[] = [];
  /** Deliveries that took the driver fast path (deliverToActive). */
  direct = 0;

  constructor(
    private readonly settings: Partial<ShardSettings>,
    /** Use the driver fast path for deliveries where the machine allows it. */
    private readonly fastPath = false,
  ) {
    this.machine = new ShardMachine<string>({ shardId: "1", settings });
  }

  feed(input: ShardInput<string>): void {
    for (const o of this.machine.handle(input, this.now)) this.check(o);
    this.checkStats();
  }

  private checkStats(): void {
    const s = this.machine.stats;
    expect(s.bufferedMessages).toBeLessThanOrEqual(this.settings.bufferSizeMax as number);
    expect(s.bufferedMessages).toBeGreaterThanOrEqual(this.delivered.size - this.accounted.size);
  }

  deliver(entityId: string): void {
    const message = `m${this.nextMessage++}`;
    this.delivered.set(message, entityId);
    if (this.fastPath && this.machine.deliverToActive(entityId, this.now)) {
      this.direct++;
      this.check({ type: "send-to-entity", entityId, message });
      this.checkStats();
    } else this.feed({ type: "deliver", entityId, message });
  }

  terminate(entityId: string, passivated: boolean, failed: boolean): void {
    this.live.delete(entityId);
    this.feed({ type: "entity-terminated", entityId, passivated, failed });
  }

  ack(): void {
    const w = this.write;
    if (w === undefined) return;
    this.write = undefined;
    this.store = applyRememberBatch(this.store, w.batch);
    this.feed({ type: "remember-store-ack", batchId: w.batchId });
  }

  fail(): void {
    const w = this.write;
    if (w === undefined) return;
    this.write = undefined;
    this.feed({ type: "remember-store-failed", batchId: w.batchId });
  }

  recovered(ids: string[]): void {
    if (this.machine.phase === ShardPhase.Recovering) for (const id of ids) this.store.add(id);
    this.feed({ type: "recovered-entities", entityIds: ids });
  }

  storeIds(): string[] {
    return [...this.store].sort();
  }

  get hasWrite(): boolean {
    return this.write !== undefined;
  }

  /** Running timers, earliest first. */
  timerKeys(): string[] {
    return [...this.timers]
      .sort((x, y) => x[1].deadline - y[1].deadline || x[1].seq - y[1].seq)
      .map(([k]) => k);
  }

  fire(key: string): void {
    const t = this.timers.get(key);
    if (t === undefined) return;
    this.now = Math.max(this.now, t.deadline);
    this.timers.delete(key);
    this.feed({ type: "timer", key });
  }

  advance(ms: number): void {
    const until = this.now + ms;
    for (let key = this.timerKeys()[0]; key !== undefined; key = this.timerKeys()[0]) {
      if ((this.timers.get(key)?.deadline ?? Number.POSITIVE_INFINITY) > until) break;
      this.fire(key);
    }
    this.now = until;
  }

  private account(message: string, entityId: string): void {
    expect(this.delivered.get(message), `${message} was delivered for ${entityId}`).toBe(entityId);
    expect(this.accounted.has(message), `${message} accounted twice`).toBe(false);
    this.accounted.add(message);
  }

  private check(o: ShardOutput<string>): void {
    this.log.push(o);
    switch (o.type) {
      case "start-entity-actor":
        expect(this.shardStopped, "start after shard-stopped").toBe(false);
        expect(this.live.has(o.entityId), `second live incarnation of ${o.entityId}`).toBe(false);
        if (this.settings.rememberEntities)
          expect(this.store.has(o.entityId), `${o.entityId} started before remembered`).toBe(true);
        this.live.set(o.entityId, false);
        this.stopped.delete(o.entityId);
        return;
      case "send-to-entity": {
        expect(this.live.has(o.entityId), `send to ${o.entityId} without an actor`).toBe(true);
        expect(this.stopped.has(o.entityId), `send to ${o.entityId} after its stop`).toBe(false);
        this.account(o.message, o.entityId);
        const n = Number(o.message.slice(1));
        expect(n, `order of ${o.entityId}`).toBeGreaterThan(this.lastSent.get(o.entityId) ?? -1);
        this.lastSent.set(o.entityId, n);
        return;
      }
      case "stop-entity-actor":
        expect(this.live.has(o.entityId), `stop of ${o.entityId} without an actor`).toBe(true);
        this.stopped.add(o.entityId);
        return;
      case "force-stop-entity-actor":
        expect(this.live.has(o.entityId), `force-stop of ${o.entityId} without an actor`).toBe(
          true,
        );
        this.live.delete(o.entityId);
        return;
      case "buffer-overflow":
        this.account(o.message, o.entityId);
        return;
      case "return-to-region":
        for (const m of o.messages) this.account(m.message, m.entityId);
        return;
      case "write-remember":
        expect(this.write, "two writes in flight").toBeUndefined();
        expect(o.batch.started.length + o.batch.stopped.length).toBeGreaterThan(0);
        expect(o.batch.started.length + o.batch.stopped.length).toBeLessThanOrEqual(
          this.settings.maxUpdatesPerWrite as number,
        );
        assertValidBatch(o.batch);
        this.write = { batchId: o.batchId, batch: o.batch };
        return;
      case "start-timer":
        expect(this.timers.has(o.key), `timer ${o.key} started twice`).toBe(false);
        this.timers.set(o.key, { deadline: this.now + o.delayMs, seq: this.seq++ });
        return;
      case "cancel-timer":
        this.timers.delete(o.key);
        return;
      case "shard-stopped":
        expect([...this.live.keys()], "shard-stopped with live actors").toEqual([]);
        this.shardStopped = true;
        return;
      case "log":
        return;
    }
  }
}

function step(d: Driver, a: Action): void {
  const id = (e: number) => ENTITIES[e] as string;
  switch (a.t) {
    case "deliver":
      for (let i = 0; i < a.n; i++) d.deliver(id(a.e));
      return;
    case "start-entity":
      d.feed({ type: "start-entity", entityId: id(a.e) });
      return;
    case "started":
      if (d.live.get(id(a.e)) === false) d.live.set(id(a.e), true);
      d.feed({ type: "entity-started", entityId: id(a.e) });
      return;
    case "terminate":
      d.terminate(id(a.e), a.passivated, a.failed);
      return;
    case "passivate":
      d.feed({
        type: "passivate",
        entityId: id(a.e),
        stopMessage: a.withMessage ? "bye" : undefined,
      });
      return;
    case "fire": {
      const keys = d.timerKeys();
      if (keys.length > 0) d.fire(keys[a.k % keys.length] as string);
      return;
    }
    case "advance":
      d.advance(a.ms);
      return;
    case "ack":
      d.ack();
      return;
    case "fail":
      d.fail();
      return;
    case "stale-ack":
      d.feed({ type: "remember-store-ack", batchId: 1000 + a.id });
      return;
    case "recovered":
      d.recovered(ENTITIES.filter((_, i) => (a.mask >> i) & 1));
      return;
    case "limit":
      d.feed({ type: "set-active-limit", limit: a.n === 4 ? Number.POSITIVE_INFINITY : a.n });
      return;
    case "hand-off":
      d.feed({ type: "hand-off" });
      return;
    case "shutdown":
      d.feed({ type: "shutdown" });
      return;
  }
}

/** Hand-off, then behave like a well-mannered driver until the shard has stopped. */
function drain(d: Driver): void {
  d.feed({ type: "hand-off" });
  for (let i = 0; i < 1_000 && d.machine.phase !== ShardPhase.Stopped; i++) {
    const unconfirmed = [...d.live].find(([, confirmed]) => !confirmed)?.[0];
    const anyLive = [...d.live.keys()][0];
    const timer = d.timerKeys()[0];
    if (unconfirmed !== undefined) {
      d.live.set(unconfirmed, true);
      d.feed({ type: "entity-started", entityId: unconfirmed });
    } else if (anyLive !== undefined) d.terminate(anyLive, true, false);
    else if (d.hasWrite) d.ack();
    else if (timer !== undefined) d.fire(timer);
    else break;
  }
}

describe("shard machine properties", () => {
  fc.configureGlobal({ seed: 0x5ba4d, numRuns: 300 });

  it("one live incarnation per entity, no message lost, persist before start", () => {
    fc.assert(
      fc.property(
        settingsArb,
        fc.array(action, { maxLength: 250, size: "max" }),
        (settings, actions) => {
          const d = new Driver(settings);
          for (const a of actions) step(d, a);
          drain(d);
          expect(d.machine.phase).toBe(ShardPhase.Stopped);
          const lost = [...d.delivered.keys()].filter((m) => !d.accounted.has(m));
          expect(lost, "messages neither sent, returned nor overflowed").toEqual([]);
          expect(d.machine.stats.bufferedMessages).toBe(0);
        },
      ),
    );
  });

  it("remembering shard that recovers first: remembered entities = store contents", () => {
    fc.assert(
      fc.property(
        settingsArb,
        fc.nat(15),
        fc.array(action, { maxLength: 250, size: "max" }),
        (s, mask, actions) => {
          const d = new Driver({ ...s, rememberEntities: true });
          d.recovered(ENTITIES.filter((_, i) => (mask >> i) & 1));
          for (const a of actions) {
            step(d, a);
            // Both change only when a write is acknowledged.
            if (d.machine.phase !== ShardPhase.Stopped)
              expect(d.machine.rememberedEntityIds()).toEqual(d.storeIds());
          }
          drain(d);
          expect(d.machine.stats.bufferedMessages).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("the driver fast path (deliverToActive) agrees with handle(deliver) in lockstep", () => {
    const snapshot = (m: ShardMachine<string>) => ({
      phase: m.phase,
      stats: m.stats,
      entities: m.entityIds().map((id) => [id, m.entityState(id)]),
      remembered: m.rememberedEntityIds(),
      timers: m.runningTimers(),
    });
    let direct = 0;
    fc.assert(
      fc.property(
        settingsArb,
        fc.array(action, { maxLength: 250, size: "max" }),
        (settings, actions) => {
          const slow = new Driver(settings);
          const fast = new Driver(settings, true);
          for (const a of actions) {
            step(slow, a);
            step(fast, a);
            expect(fast.log.length).toBe(slow.log.length);
            expect(snapshot(fast.machine)).toEqual(snapshot(slow.machine));
          }
          drain(slow);
          drain(fast);
          expect(fast.log).toEqual(slow.log);
          direct += fast.direct;
        },
      ),
      { numRuns: 100 },
    );
    expect(direct, "deliveries that took the fast path").toBeGreaterThan(100);
  });
});
