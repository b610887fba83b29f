import { afterEach, describe, expect, it, vi } from "vitest";
import {
  ConsoleLogger,
  createNodeRuntime,
  NODE_TIMER_DELAY_MAX_MS,
  NodeClock,
  NodeRandom,
  NodeScheduler,
  resolveLogLevel,
  yieldToHost,
} from "../../src/runtime/node/index.js";

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("NodeClock", () => {
  it("is monotonic and advances in milliseconds", async () => {
    const clock = new NodeClock();
    let prev = clock.now();
    for (let i = 0; i < 10_000; i++) {
      const t = clock.now();
      expect(t).toBeGreaterThanOrEqual(prev);
      prev = t;
    }
    const start = clock.now();
    await sleep(20);
    expect(clock.now() - start).toBeGreaterThanOrEqual(15);
  });
});

describe("NodeScheduler (real timers)", () => {
  it("fires approximately on time and the live count returns to 0", async () => {
    const scheduler = new NodeScheduler();
    const clock = new NodeClock();
    const start = clock.now();
    const fired = new Promise<number>((resolve) => {
      scheduler.schedule(30, () => resolve(clock.now() - start));
    });
    expect(scheduler.liveTimers).toBe(1);
    const elapsed = await fired;
    expect(elapsed).toBeGreaterThanOrEqual(28);
    expect(elapsed).toBeLessThan(1_000);
    expect(scheduler.liveTimers).toBe(0);
  });

  it("cancel prevents the callback and is idempotent", async () => {
    const scheduler = new NodeScheduler();
    let fired = false;
    const timer = scheduler.schedule(5, () => {
      fired = true;
    });
    timer.dispose();
    timer.dispose();
    expect(scheduler.liveTimers).toBe(0);
    await sleep(30);
    expect(fired).toBe(false);
  });

  it("disposing after the timer ran is a no-op", async () => {
    const scheduler = new NodeScheduler();
    const other = scheduler.schedule(10_000, () => {});
    const ran = new Promise<void>((resolve) => {
      const timer = scheduler.schedule(0, () => {
        resolve();
        queueMicrotask(() => timer.dispose());
      });
    });
    await ran;
    await yieldToHost();
    expect(scheduler.liveTimers).toBe(1);
    scheduler.dispose();
    expect(scheduler.liveTimers).toBe(0);
    other.dispose();
  });

  it("clamps negative delays to 0", async () => {
    const scheduler = new NodeScheduler();
    await new Promise<void>((resolve) => scheduler.schedule(-100, resolve));
    expect(scheduler.liveTimers).toBe(0);
  });

  it("defer runs after pending microtasks and in call order", async () => {
    const scheduler = new NodeScheduler();
    const log: string[] = [];
    const done = new Promise<void>((resolve) => {
      scheduler.defer(() => log.push("defer-1"));
      void Promise.resolve()
        .then(() => log.push("micro-1"))
        .then(() => log.push("micro-2"));
      scheduler.defer(() => {
        log.push("defer-2");
        resolve();
      });
    });
    await done;
    expect(log).toEqual(["micro-1", "micro-2", "defer-1", "defer-2"]);
  });

  it("keeps timers ref'd by default and unrefs them on request", () => {
    const spy = vi.spyOn(globalThis, "setTimeout");
    try {
      new NodeScheduler().schedule(1_000, () => {}).dispose();
      const refd = spy.mock.results[0]?.value as NodeJS.Timeout;
      expect(refd.hasRef()).toBe(true);
      new NodeScheduler({ unrefTimers: true }).schedule(1_000, () => {}).dispose();
      const unrefd = spy.mock.results[1]?.value as NodeJS.Timeout;
      expect(unrefd.hasRef()).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("NodeScheduler (fake timers)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("chains delays beyond Node's 2^31-1 ms limit", () => {
    vi.useFakeTimers();
    const scheduler = new NodeScheduler();
    let fired = 0;
    scheduler.schedule(NODE_TIMER_DELAY_MAX_MS + 5_000, () => fired++);
    vi.advanceTimersByTime(NODE_TIMER_DELAY_MAX_MS);
    expect(fired).toBe(0);
    expect(scheduler.liveTimers).toBe(1);
    vi.advanceTimersByTime(4_999);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
    expect(scheduler.liveTimers).toBe(0);
  });

  it("cancels a chained timer in its second leg", () => {
    vi.useFakeTimers();
    const scheduler = new NodeScheduler();
    let fired = 0;
    const timer = scheduler.schedule(NODE_TIMER_DELAY_MAX_MS * 2 + 10, () => fired++);
    vi.advanceTimersByTime(NODE_TIMER_DELAY_MAX_MS + 1);
    timer.dispose();
    vi.advanceTimersByTime(NODE_TIMER_DELAY_MAX_MS * 2);
    expect(fired).toBe(0);
    expect(scheduler.liveTimers).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("treats an Infinity delay as never, without a timer", () => {
    vi.useFakeTimers();
    const scheduler = new NodeScheduler();
    scheduler.schedule(Number.POSITIVE_INFINITY, () => {});
    expect(scheduler.liveTimers).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(() => scheduler.schedule(Number.NaN, () => {})).toThrow(/NaN/);
  });
});

describe("yieldToHost", () => {
  it("resolves only after a deep chain of pending microtasks", async () => {
    let depth = 0;
    const chain = async (): Promise<void> => {
      for (let i = 0; i < 200; i++) {
        await Promise.resolve();
        depth++;
      }
    };
    void chain();
    await yieldToHost();
    expect(depth).toBe(200);
  });
});

describe("NodeRandom", () => {
  it("is reproducible with a seed and stays in range", () => {
    const a = new NodeRandom(42);
    const b = new NodeRandom(42);
    const xs = Array.from({ length: 100 }, () => a.nextInt(10));
    expect(Array.from({ length: 100 }, () => b.nextInt(10))).toEqual(xs);
    expect(new Set(xs).size).toBe(10);
    expect(a.seeded).toBe(true);
    const big = a.nextInt(2 ** 40);
    expect(Number.isInteger(big) && big >= 0 && big < 2 ** 40).toBe(true);
  });

  it("falls back to Math.random without a seed", () => {
    const r = new NodeRandom();
    expect(r.seeded).toBe(false);
    for (let i = 0; i < 100; i++) {
      const x = r.next();
      expect(x >= 0 && x < 1).toBe(true);
      expect(r.nextInt(3)).toBeLessThan(3);
    }
    expect(() => r.nextInt(1.5)).toThrow();
  });
});

describe("createNodeRuntime", () => {
  it("builds a runtime with a seeded random and a console logger at the given level", () => {
    const rt = createNodeRuntime({ seed: 9, logLevel: "warn" });
    expect(rt.random.nextInt(1000)).toBe(new NodeRandom(9).nextInt(1000));
    expect(rt.scheduler.liveTimers).toBe(0);
    expect(rt.logger).toBeInstanceOf(ConsoleLogger);
    expect((rt.logger as ConsoleLogger).level).toBe(resolveLogLevel("warn", process.env));
  });

  it("uses an injected logger as is", () => {
    const logger = new ConsoleLogger({ write: () => {} });
    expect(createNodeRuntime({ logger }).logger).toBe(logger);
  });
});
