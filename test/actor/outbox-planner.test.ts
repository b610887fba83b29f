/**
 * The outbox's pure parts without actors: the RedeliveryPlanner (what to redeliver
 * when, backoff, burst and warning bounds), the durable state fold and the settings.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  admitsSend,
  applyOutboxEvent,
  defaultOutboxSettings,
  emptyOutboxState,
  type OutboxEvent,
  type OutboxSettings,
  outboxSettings,
  outboxSnapshotOf,
  outboxStateOf,
  type PlannerSettings,
  RedeliveryPlanner,
  redeliveryDelayMs,
} from "../../src/actor/index.js";
import { ConfigError } from "../../src/base/errors.js";

const S: PlannerSettings = {
  redeliverIntervalMs: 100,
  redeliverBackoffFactor: 2,
  redeliverBackoffMaxMs: 1_000,
  redeliveryBurstMax: 3,
  warnAfterAttempts: 3,
};

/** Runs every tick due up to `until` (as the driver's timer would), recording attempts. */
function runUntil(
  p: RedeliveryPlanner,
  from: number,
  until: number,
  onTick: (now: number, plan: ReturnType<RedeliveryPlanner["tick"]>) => void,
): number {
  let now = from;
  for (let guard = 0; ; guard++) {
    if (guard > 100_000) throw new Error("planner does not make progress");
    const wake = p.nextWakeAtMs();
    if (wake === undefined || wake > until) return until;
    now = Math.max(now, wake);
    const plan = p.tick(now);
    expect(plan.deliver.length).toBeGreaterThan(0); // a wake-up always has work
    onTick(now, plan);
  }
}

describe("redeliveryDelayMs", () => {
  it("starts at the interval, grows by the factor and stops at the maximum", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => redeliveryDelayMs(n, S))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    expect(redeliveryDelayMs(10_000, S)).toBe(1_000); // no overflow to Infinity/NaN
    expect(redeliveryDelayMs(3, { ...S, redeliverBackoffFactor: 1 })).toBe(100);
  });

  it("is non-decreasing and within [interval, max] (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.double({ min: 1, max: 100, noNaN: true }),
        fc.integer({ min: 1, max: 3_000 }),
        (interval, factor, extra) => {
          const s = {
            ...S,
            redeliverIntervalMs: interval,
            redeliverBackoffFactor: factor,
            redeliverBackoffMaxMs: interval + extra,
          };
          let prev = 0;
          for (let n = 1; n < 60; n++) {
            const d = redeliveryDelayMs(n, s);
            expect(d).toBeGreaterThanOrEqual(interval);
            expect(d).toBeLessThanOrEqual(interval + extra);
            expect(d).toBeGreaterThanOrEqual(prev);
            prev = d;
          }
        },
      ),
    );
  });
});

describe("RedeliveryPlanner", () => {
  it("redelivers with exponential backoff until confirmed, then never again", () => {
    const p = new RedeliveryPlanner(S);
    expect(p.firstAttempt(1, 0)).toEqual({ deliveryId: 1, attempt: 1 });
    expect(p.nextWakeAtMs()).toBe(100);
    expect(p.tick(99).deliver).toEqual([]);
    const times: number[] = [];
    runUntil(p, 0, 1_600, (now, plan) => {
      times.push(...plan.deliver.map(() => now));
    });
    // attempts 2.. at 100, 300 (+200), 700 (+400), 1500 (+800)
    expect(times).toEqual([100, 300, 700, 1_500]);
    expect(p.attempts(1)).toBe(5);
    expect(p.confirm(1)).toBe(true);
    expect(p.confirm(1)).toBe(false);
    expect(p.nextWakeAtMs()).toBeUndefined();
    expect(p.tick(100_000).deliver).toEqual([]);
  });

  it("delivers earliest due first, at most redeliveryBurstMax per tick, then waits an interval", () => {
    const p = new RedeliveryPlanner(S);
    for (const id of [5, 3, 4, 1, 2, 6, 7]) p.recovered(id, 0);
    const t0 = p.tick(0);
    expect(t0.deliver.map((a) => a.deliveryId)).toEqual([1, 2, 3]);
    // Cut by the burst: the rest are due, but the next tick waits one interval.
    expect(p.nextWakeAtMs()).toBe(100);
    expect(p.tick(100).deliver.map((a) => a.deliveryId)).toEqual([4, 5, 6]);
    // 1..3 are due again at 0 + 100 = 100 too, but 7 was due earlier (0).
    expect(p.nextWakeAtMs()).toBe(200);
    expect(p.tick(200).deliver.map((a) => a.deliveryId)).toEqual([7, 1, 2]);
  });

  it("warns once per delivery when it is due after warnAfterAttempts attempts", () => {
    const p = new RedeliveryPlanner({ ...S, redeliveryBurstMax: 10 });
    p.firstAttempt(1, 0);
    p.firstAttempt(2, 50);
    const warned: number[][] = [];
    runUntil(p, 0, 5_000, (_now, plan) => {
      if (plan.warn.length > 0) warned.push(plan.warn.map((w) => w.deliveryId));
      for (const w of plan.warn) expect(w.attempt).toBe(3);
    });
    expect(warned).toEqual([[1], [2]]);
  });

  it("a recovered delivery is due at once; attempts start again at 1", () => {
    const p = new RedeliveryPlanner(S);
    p.recovered(9, 1_000);
    expect(p.nextWakeAtMs()).toBe(1_000);
    expect(p.tick(1_000).deliver).toEqual([{ deliveryId: 9, attempt: 1 }]);
    expect(p.dueAtMs(9)).toBe(1_100);
  });

  it("confirming many keeps the internal heap bounded", () => {
    const p = new RedeliveryPlanner(S);
    for (let i = 1; i <= 10_000; i++) {
      p.firstAttempt(i, i);
      p.confirm(i);
    }
    expect(p.size).toBe(0);
    expect(p.nextWakeAtMs()).toBeUndefined();
    expect((p as unknown as { heap: unknown[] }).heap.length).toBeLessThan(200);
  });

  type Op =
    | { k: "send"; at: number }
    | { k: "recover"; at: number }
    | { k: "confirm"; pick: number; at: number }
    | { k: "wait"; ms: number };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ k: fc.constant("send" as const), at: fc.integer({ min: 0, max: 300 }) }),
    fc.record({ k: fc.constant("recover" as const), at: fc.integer({ min: 0, max: 300 }) }),
    fc.record({
      k: fc.constant("confirm" as const),
      pick: fc.nat(),
      at: fc.integer({ min: 0, max: 300 }),
    }),
    fc.record({ k: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 3_000 }) }),
  );
  const settingsArb: fc.Arbitrary<PlannerSettings> = fc
    .record({
      redeliverIntervalMs: fc.integer({ min: 1, max: 500 }),
      redeliverBackoffFactor: fc.constantFrom(1, 1.5, 2, 3),
      extra: fc.integer({ min: 0, max: 2_000 }),
      redeliveryBurstMax: fc.integer({ min: 1, max: 5 }),
      warnAfterAttempts: fc.integer({ min: 1, max: 6 }),
    })
    .map(({ extra, ...s }) => ({ ...s, redeliverBackoffMaxMs: s.redeliverIntervalMs + extra }));

  it("properties: unconfirmed ones are always redelivered, confirmed ones never, bounds hold", () => {
    fc.assert(
      fc.property(settingsArb, fc.array(opArb, { maxLength: 60 }), (s, ops) => {
        const p = new RedeliveryPlanner(s);
        let now = 0;
        let nextId = 1;
        const live = new Set<number>();
        const confirmed = new Set<number>();
        const lastAttemptAt = new Map<number, number>();
        const attempts = new Map<number, number>();
        const warnedIds = new Set<number>();
        const onTick = (t: number, plan: ReturnType<RedeliveryPlanner["tick"]>) => {
          expect(plan.deliver.length).toBeLessThanOrEqual(s.redeliveryBurstMax);
          const seen = new Set<number>();
          for (const w of plan.warn) {
            expect(warnedIds.has(w.deliveryId)).toBe(false); // at most once
            expect(w.attempt).toBeGreaterThanOrEqual(s.warnAfterAttempts);
            warnedIds.add(w.deliveryId);
          }
          for (const a of plan.deliver) {
            expect(confirmed.has(a.deliveryId)).toBe(false); // never after confirm
            expect(live.has(a.deliveryId)).toBe(true);
            expect(seen.has(a.deliveryId)).toBe(false); // once per tick
            seen.add(a.deliveryId);
            const n = attempts.get(a.deliveryId) ?? 0;
            expect(a.attempt).toBe(n + 1);
            const prev = lastAttemptAt.get(a.deliveryId);
            // never sooner than the backoff after the previous attempt
            if (prev !== undefined && n > 0)
              expect(t - prev).toBeGreaterThanOrEqual(redeliveryDelayMs(n, s));
            attempts.set(a.deliveryId, n + 1);
            lastAttemptAt.set(a.deliveryId, t);
          }
        };
        for (const op of ops) {
          if (op.k === "wait") {
            now = runUntil(p, now, now + op.ms, onTick);
            continue;
          }
          now = runUntil(p, now, now + op.at, onTick);
          if (op.k === "send") {
            const id = nextId++;
            live.add(id);
            expect(p.firstAttempt(id, now)).toEqual({ deliveryId: id, attempt: 1 });
            attempts.set(id, 1);
            lastAttemptAt.set(id, now);
          } else if (op.k === "recover") {
            const id = nextId++;
            live.add(id);
            p.recovered(id, now);
            attempts.set(id, 0);
          } else if (live.size > 0) {
            const id = [...live][op.pick % live.size] as number;
            live.delete(id);
            confirmed.add(id);
            expect(p.confirm(id)).toBe(true);
          }
          expect(p.size).toBe(live.size);
        }
        // Eventually: within the longest backoff plus the time a full backlog needs to
        // drain through the burst bound, every unconfirmed delivery is attempted again.
        const window =
          s.redeliverBackoffMaxMs +
          (Math.ceil(live.size / s.redeliveryBurstMax) + 1) * s.redeliverIntervalMs;
        const before = new Map(attempts);
        now = runUntil(p, now, now + window, onTick);
        for (const id of live) expect(attempts.get(id)).toBeGreaterThan(before.get(id) ?? 0);
        // Confirmed ones stay gone however long we wait.
        for (const id of live) p.confirm(id);
        expect(p.nextWakeAtMs()).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});

describe("outbox state", () => {
  const sent = (deliveryId: number, payload = `m${deliveryId}`): OutboxEvent<string> => ({
    type: "sent",
    deliveryId,
    destination: "d",
    payload,
  });

  it("folds sent/confirmed events and never mutates the empty state", () => {
    const empty = emptyOutboxState<string>();
    let s = applyOutboxEvent(empty, sent(1));
    s = applyOutboxEvent(s, sent(2));
    s = applyOutboxEvent(s, { type: "confirmed", deliveryId: 1 });
    s = applyOutboxEvent(s, { type: "confirmed", deliveryId: 42 }); // unknown: ignored
    expect([...s.unconfirmed.keys()]).toEqual([2]);
    expect(s.nextDeliveryId).toBe(3);
    expect(empty.unconfirmed.size).toBe(0);
    expect(empty.nextDeliveryId).toBe(1);
    // a second fold from the same empty state is unaffected by the first
    expect(applyOutboxEvent(empty, sent(1)).unconfirmed.size).toBe(1);
  });

  it("a snapshot round-trips to an equivalent state (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(-1), fc.nat({ max: 30 })), { maxLength: 80 }),
        (steps) => {
          let s = emptyOutboxState<string>();
          let next = 1;
          for (const k of steps)
            s = applyOutboxEvent(s, k < 0 ? sent(next++) : { type: "confirmed", deliveryId: k });
          const json = JSON.parse(JSON.stringify(outboxSnapshotOf(s)));
          const r = outboxStateOf<string>(json);
          expect(r.nextDeliveryId).toBe(s.nextDeliveryId);
          expect([...r.unconfirmed.entries()]).toEqual([...s.unconfirmed.entries()]);
          // and folding on continues identically
          const a = applyOutboxEvent(s, sent(next));
          const b = applyOutboxEvent(r, sent(next));
          expect([...b.unconfirmed.keys()]).toEqual([...a.unconfirmed.keys()]);
        },
      ),
    );
  });

  it("admitsSend is the unconfirmedMax bound", () => {
    expect(admitsSend(0, 1)).toBe(true);
    expect(admitsSend(9, 10)).toBe(true);
    expect(admitsSend(10, 10)).toBe(false);
  });
});

describe("outboxSettings", () => {
  it("has defaults and rejects bad values with ConfigError naming the key", () => {
    expect(outboxSettings()).toEqual(defaultOutboxSettings);
    expect(outboxSettings({ warnAfterAttempts: Number.POSITIVE_INFINITY }).warnAfterAttempts).toBe(
      Number.POSITIVE_INFINITY,
    );
    const bad: [Partial<OutboxSettings>, string][] = [
      [{ redeliverIntervalMs: 0 }, "outbox.redeliverIntervalMs"],
      [{ redeliverBackoffFactor: 0.5 }, "outbox.redeliverBackoffFactor"],
      [{ redeliveryBurstMax: 0 }, "outbox.redeliveryBurstMax"],
      [{ warnAfterAttempts: 1.5 }, "outbox.warnAfterAttempts"],
      [{ unconfirmedMax: 0 }, "outbox.unconfirmedMax"],
      [
        { redeliverIntervalMs: 2_000, redeliverBackoffMaxMs: 1_000 },
        "outbox.redeliverBackoffMaxMs",
      ],
      [{ nope: 1 } as Partial<OutboxSettings>, "outbox.nope"],
    ];
    for (const [overrides, key] of bad) {
      let err: unknown;
      try {
        outboxSettings(overrides);
      } catch (e) {
        err = e;
      }
      expect(err, key).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).key).toBe(key);
    }
  });
});
