import { describe, expect, it } from "vitest";
import { SimFailure, SimWorld, withSeed } from "../../src/runtime/sim/index.js";

describe("SimWorld scheduler", () => {
  it("runs timers in (time, insertion) order and starts at t=0", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    const log: string[] = [];
    expect(world.now).toBe(0);
    scheduler.schedule(20, () => log.push(`b@${world.now}`));
    scheduler.schedule(10, () => log.push(`a@${world.now}`));
    scheduler.schedule(20, () => log.push(`c@${world.now}`));
    scheduler.schedule(-5, () => log.push(`neg@${world.now}`));
    expect(world.pendingEvents).toBe(4);
    expect(await world.runUntilIdle(1000)).toBe(true);
    expect(log).toEqual(["neg@0", "a@10", "b@20", "c@20"]);
    expect(world.stepsRun).toBe(4);
  });

  it("cancel is idempotent and a no-op after the timer ran", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    let fired = 0;
    const cancelled = scheduler.schedule(10, () => fired++);
    const ran = scheduler.schedule(5, () => fired++);
    expect(scheduler.liveTimers).toBe(2);
    cancelled.dispose();
    cancelled.dispose();
    expect(scheduler.liveTimers).toBe(1);
    expect(world.pendingEvents).toBe(1);
    await world.advance(100);
    expect(fired).toBe(1);
    ran.dispose();
    expect(scheduler.liveTimers).toBe(0);
    expect(world.pendingEvents).toBe(0);
  });

  it("defer and schedule(0) run at the current time, after already queued events, in call order", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    const log: string[] = [];
    await world.advance(7);
    scheduler.schedule(0, () => log.push("timer0-1"));
    scheduler.defer(() => {
      log.push("defer-1");
      scheduler.defer(() => log.push("nested-defer"));
      scheduler.schedule(0, () => log.push("nested-timer0"));
    });
    scheduler.schedule(0, () => log.push("timer0-2"));
    scheduler.defer(() => log.push("defer-2"));
    scheduler.schedule(1, () => log.push("timer1"));
    await world.runUntilIdle(100);
    expect(log).toEqual([
      "timer0-1",
      "defer-1",
      "timer0-2",
      "defer-2",
      "nested-defer",
      "nested-timer0",
      "timer1",
    ]);
    expect(world.now).toBe(8);
  });

  it("an Infinity delay never fires and is not counted", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    let fired = false;
    scheduler
      .schedule(Number.POSITIVE_INFINITY, () => {
        fired = true;
      })
      .dispose();
    expect(scheduler.liveTimers).toBe(0);
    expect(world.pendingEvents).toBe(0);
    await world.advance(1e12);
    expect(fired).toBe(false);
    expect(() => scheduler.schedule(Number.NaN, () => {})).toThrow(/NaN/);
  });

  it("cancelAll drops a node's pending timers and deferred callbacks only", async () => {
    const world = new SimWorld({ seed: 1 });
    const a = world.createRuntime("a");
    const b = world.createRuntime("b");
    const log: string[] = [];
    a.scheduler.schedule(5, () => log.push("a-timer"));
    a.scheduler.defer(() => log.push("a-defer"));
    b.scheduler.schedule(5, () => log.push("b-timer"));
    expect(a.scheduler.pendingDeferred).toBe(1);
    a.scheduler.cancelAll();
    expect(a.scheduler.liveTimers + a.scheduler.pendingDeferred).toBe(0);
    await world.runUntilIdle(100);
    expect(log).toEqual(["b-timer"]);
  });
});

describe("SimWorld clock drift and offset", () => {
  it("a +1000 ppm node's clock runs fast and its timers fire earlier in world time", async () => {
    const world = new SimWorld({ seed: 1 });
    const fast = world.createRuntime("fast", { clockDriftPpm: 1000 });
    const exact = world.createRuntime("exact");
    const firedAt: Record<string, number> = {};
    fast.scheduler.schedule(10_000, () => {
      firedAt.fast = world.now;
      expect(fast.clock.now()).toBeGreaterThanOrEqual(10_000);
    });
    exact.scheduler.schedule(10_000, () => {
      firedAt.exact = world.now;
    });
    await world.advance(5_000);
    expect(fast.clock.now()).toBeCloseTo(5_005, 9);
    expect(exact.clock.now()).toBe(5_000);
    await world.runUntilIdle(10_000);
    expect(firedAt.exact).toBe(10_000);
    expect(firedAt.fast).toBeCloseTo(10_000 / 1.001, 9);
    expect(firedAt.fast).toBeLessThan(10_000 - 9.9);
  });

  it("a slow node with an offset fires later, never before its local deadline", async () => {
    const world = new SimWorld({ seed: 1 });
    const slow = world.createRuntime("slow", { clockDriftPpm: -500, clockOffsetMs: 123_456.789 });
    expect(slow.clock.now()).toBe(123_456.789);
    await world.advance(0.3);
    const deadlines: number[] = [];
    for (const delay of [0, 0.1, 0.7, 1, 33.3, 1000]) {
      const deadline = slow.clock.now() + delay;
      slow.scheduler.schedule(delay, () => {
        expect(slow.clock.now()).toBeGreaterThanOrEqual(deadline);
        expect(slow.clock.now() - deadline).toBeLessThan(1e-6);
        deadlines.push(delay);
      });
    }
    await world.runUntilIdle(10_000);
    expect(deadlines).toEqual([0, 0.1, 0.7, 1, 33.3, 1000]);
    expect(world.now).toBeCloseTo(0.3 + 1000 / (1 - 500e-6), 6);
  });

  it("rejects a drift that would stop or reverse the clock", () => {
    const world = new SimWorld({ seed: 1 });
    expect(() => world.createRuntime("x", { clockDriftPpm: -1e6 })).toThrow(/clockDriftPpm/);
  });
});

describe("SimWorld run loop", () => {
  it("step runs one event at a time and returns false when empty", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    const log: number[] = [];
    scheduler.schedule(3, () => log.push(3));
    scheduler.schedule(9, () => log.push(9));
    expect(await world.step()).toBe(true);
    expect(log).toEqual([3]);
    expect(world.now).toBe(3);
    expect(await world.step()).toBe(true);
    expect(await world.step()).toBe(false);
    expect(world.now).toBe(9);
  });

  it("runUntil stops as soon as the predicate holds", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    let count = 0;
    for (let i = 1; i <= 10; i++) scheduler.schedule(i * 10, () => count++);
    expect(await world.runUntil(() => count === 4, 1000)).toBe(true);
    expect(world.now).toBe(40);
    expect(world.pendingEvents).toBe(6);
  });

  it("runUntil checks the predicate before running anything", async () => {
    const world = new SimWorld({ seed: 1 });
    world.createRuntime("a").scheduler.schedule(0, () => {});
    expect(await world.runUntil(() => true, 1000)).toBe(true);
    expect(world.stepsRun).toBe(0);
  });

  it("runUntil ends at exactly now + limit when the limit is hit", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    await world.advance(5);
    const log: number[] = [];
    scheduler.schedule(50, () => log.push(55));
    scheduler.schedule(100, () => log.push(105));
    scheduler.schedule(101, () => log.push(106));
    expect(await world.runUntil(() => false, 100)).toBe(false);
    expect(world.now).toBe(105);
    expect(log).toEqual([55, 105]);
    expect(await world.runUntil(() => false, 0.5)).toBe(false);
    expect(world.now).toBe(105.5);
    expect(log).toEqual([55, 105]);
  });

  it("runUntil with an empty queue advances to the limit and rechecks the predicate", async () => {
    const world = new SimWorld({ seed: 1 });
    const clock = world.createRuntime("a").clock;
    expect(await world.runUntil(() => clock.now() >= 30, 30)).toBe(true);
    expect(world.now).toBe(30);
  });

  it("advance runs everything due in the window and ends at now + ms", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    const log: number[] = [];
    const tick = (): void => {
      log.push(world.now);
      scheduler.schedule(10, tick);
    };
    scheduler.schedule(10, tick);
    await world.advance(35);
    expect(log).toEqual([10, 20, 30]);
    expect(world.now).toBe(35);
    await world.advance(5);
    expect(log).toEqual([10, 20, 30, 40]);
    expect(world.now).toBe(40);
  });

  it("runUntilIdle reports false when periodic work never stops", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    const tick = (): void => {
      scheduler.schedule(10, tick);
    };
    tick();
    expect(await world.runUntilIdle(1000)).toBe(false);
    expect(world.now).toBe(1000);
  });

  it("promise continuations inside an event complete before the next event", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    const log: string[] = [];
    const later = async (): Promise<void> => {
      log.push("async-start");
      await Promise.resolve();
      log.push("after-await-1");
      await new Promise<void>((resolve) => resolve());
      log.push("after-await-2");
      scheduler.schedule(0, () => log.push("scheduled-from-async"));
    };
    scheduler.schedule(1, () => {
      void later();
    });
    scheduler.schedule(1, () => log.push("next-event"));
    scheduler.schedule(1, () => log.push("third-event"));
    await world.step();
    expect(log).toEqual(["async-start", "after-await-1", "after-await-2"]);
    await world.runUntilIdle(10);
    expect(log).toEqual([
      "async-start",
      "after-await-1",
      "after-await-2",
      "next-event",
      "third-event",
      "scheduled-from-async",
    ]);
  });

  it("deep promise chains inside an event settle before the next event", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    const log: string[] = [];
    const hop = async (n: number): Promise<number> => (n === 0 ? 0 : 1 + (await hop(n - 1)));
    scheduler.schedule(1, () => {
      void (async () => {
        for (let i = 0; i < 50; i++) await Promise.resolve();
        log.push(`chain-done:${await hop(50)}`);
      })();
    });
    scheduler.schedule(1, () => log.push("next-event"));
    await world.runUntilIdle(10);
    expect(log).toEqual(["chain-done:50", "next-event"]);
  });

  it("each of hundreds of events runs after the microtasks of the one before (turns are queued in batches)", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    const log: string[] = [];
    for (let i = 0; i < 300; i++)
      scheduler.schedule(1, () => {
        log.push(`start ${i}`);
        void (async () => {
          for (let k = 0; k < 3; k++) await Promise.resolve();
          log.push(`settled ${i}`);
        })();
      });
    await world.runUntilIdle(10);
    expect(log).toEqual(
      Array.from({ length: 300 }, (_, i) => [`start ${i}`, `settled ${i}`]).flat(),
    );
  });

  it("a run that ends inside a batch of turns leaves nothing running, and the next run goes on", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    let ran = 0;
    for (let i = 0; i < 200; i++) scheduler.schedule(1, () => ran++);
    expect(await world.runUntil(() => ran === 10, 10)).toBe(true);
    // the turns queued after the 10th event find the run over: no event runs meanwhile
    for (let i = 0; i < 200; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(ran).toBe(10);
    expect(world.stepsRun).toBe(10);
    expect(await world.runUntil(() => ran === 150, 10)).toBe(true);
    expect(ran).toBe(150);
    await world.runUntilIdle(10);
    expect(ran).toBe(200);
  });

  it("is not re-entrant", async () => {
    const world = new SimWorld({ seed: 1 });
    world.createRuntime("a").scheduler.schedule(1, () => {});
    const running = world.advance(10);
    await expect(world.step()).rejects.toThrow(/re-entrant/);
    await running;
  });

  it("fails loudly on a zero-delay livelock", async () => {
    const world = new SimWorld({ seed: 1, stepsPerRunMax: 100 });
    const { scheduler } = world.createRuntime("a");
    const spin = (): void => scheduler.defer(spin);
    spin();
    await expect(world.advance(1)).rejects.toMatchObject({ code: "SIM_STEPS_EXCEEDED" });
  });

  it("surfaces an exception thrown by an event and stays usable", async () => {
    const world = new SimWorld({ seed: 1 });
    const { scheduler } = world.createRuntime("a");
    scheduler.schedule(1, () => {
      throw new Error("boom");
    });
    let after = false;
    scheduler.schedule(2, () => {
      after = true;
    });
    await expect(world.runUntilIdle(10)).rejects.toThrow("boom");
    expect(await world.runUntilIdle(10)).toBe(true);
    expect(after).toBe(true);
  });
});

describe("SimWorld nodes, randomness and trace", () => {
  it("rejects a duplicate node name", () => {
    const world = new SimWorld({ seed: 1 });
    world.createRuntime("a");
    expect(() => world.createRuntime("a")).toThrow(/already exists/);
    expect(world.nodeNames).toEqual(["a"]);
  });

  it("a node's random stream depends on seed and name, not on creation order", () => {
    const draw = (seed: number, order: string[], node: string): number[] => {
      const world = new SimWorld({ seed });
      for (const name of order) world.createRuntime(name);
      const random = world.getRuntime(node)!.random;
      return Array.from({ length: 8 }, () => random.nextInt(1_000_000));
    };
    const ab = draw(7, ["a", "b"], "b");
    expect(draw(7, ["b", "a"], "b")).toEqual(ab);
    expect(draw(7, ["c", "b", "a"], "b")).toEqual(ab);
    expect(draw(8, ["a", "b"], "b")).not.toEqual(ab);
    expect(draw(7, ["a", "b"], "a")).not.toEqual(ab);
    expect(draw(7 + 2 ** 32, ["a", "b"], "b")).not.toEqual(ab);
  });

  it("nextInt stays in range and covers it", () => {
    const { random } = new SimWorld({ seed: 3 }).createRuntime("a");
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = random.nextInt(7);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThan(7);
      seen.add(v);
    }
    expect(seen.size).toBe(7);
    expect(() => random.nextInt(0)).toThrow();
  });

  it("records logs and user facts into the trace with world time", async () => {
    const world = new SimWorld({ seed: 1, keepTrace: true });
    const { logger, scheduler } = world.createRuntime("n1");
    scheduler.schedule(5, () => {
      logger.child({ shard: 3 }).info("started", { entity: "e1" });
      world.record("n1", "deliver", { id: 7, big: 1n });
    });
    await world.runUntilIdle(10);
    expect(world.trace).toEqual([
      { t: 5, node: "n1", kind: "log", detail: 'info started {"shard":3,"entity":"e1"}' },
      { t: 5, node: "n1", kind: "deliver", detail: '{"id":7,"big":"1n"}' },
    ]);
    expect(world.traceLength).toBe(2);
  });

  it("computes the same hash whether or not entries are kept", async () => {
    const run = async (keepTrace: boolean): Promise<string> => {
      const world = new SimWorld({ seed: 1, keepTrace });
      world.record("a", "k", "x");
      await world.advance(3);
      world.record("b", "k", { y: 1 });
      return world.traceHash();
    };
    const kept = await run(true);
    expect(await run(false)).toBe(kept);
    expect(kept).toMatch(/^[0-9a-f]{16}$/);
    const empty = new SimWorld({ seed: 1 });
    expect(empty.traceHash()).not.toBe(kept);
    expect(empty.trace).toEqual([]);
  });

  it("prints only records at or above logLevel, with seed, time and node", async () => {
    const lines: string[] = [];
    const world = new SimWorld({ seed: 42, logLevel: "warn", write: (l) => lines.push(l) });
    const { logger } = world.createRuntime("n1");
    await world.advance(12);
    logger.info("quiet");
    logger.warn("loud", { k: "v" });
    expect(lines).toEqual(['[sim seed=42 t=12 n1] WARN loud {"k":"v"}']);
    expect(world.traceLength).toBe(2);
  });

  it("traceLogLevel limits what is traced and what isEnabled reports", () => {
    const world = new SimWorld({ seed: 1, traceLogLevel: "warn" });
    const { logger } = world.createRuntime("n1");
    expect(logger.isEnabled("info")).toBe(false);
    expect(logger.isEnabled("warn")).toBe(true);
    expect(logger.isEnabled("off")).toBe(false);
    logger.info("dropped");
    logger.error("kept");
    expect(world.traceLength).toBe(1);
  });

  it("describe() names seed and time", async () => {
    const world = new SimWorld({ seed: 99 });
    await world.advance(250);
    expect(world.describe()).toBe("seed=99 t=250");
  });
});

describe("withSeed", () => {
  it("returns the result of a successful run", async () => {
    expect(await withSeed(5, async (world) => world.seed * 2)).toBe(10);
  });

  it("prefixes a failure with the seed and keeps the original as cause", async () => {
    const original = new Error("invariant broken");
    const failure = await withSeed(1234, async (world) => {
      await world.advance(50);
      throw original;
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SimFailure);
    const f = failure as SimFailure;
    expect(f.message.startsWith("[sim seed=1234] ")).toBe(true);
    expect(f.message).toContain("invariant broken");
    expect(f.cause).toBe(original);
    expect(f.seed).toBe(1234);
    expect(f.timeMs).toBe(50);
  });
});
