import { describe, expect, it } from "vitest";
import type { ActorFailed } from "../../src/actor/event-stream.js";
import { type ActorRef, Behaviors, SupervisorStrategy } from "../../src/actor/index.js";
import { simSystem } from "./sim-system.js";

type Msg =
  | { type: "add"; n: number }
  | { type: "boom" }
  | { type: "get"; replyTo: ActorRef<number> };

/** Counts starts in `starts`; throws on "boom". */
function flaky(starts: { n: number }) {
  return Behaviors.setup<Msg>(() => {
    starts.n++;
    let sum = 0;
    return Behaviors.receiveMessage<Msg>((m) => {
      if (m.type === "boom") throw new Error("boom");
      if (m.type === "add") sum += m.n;
      else m.replyTo.tell(sum);
    });
  });
}

function collector(s: ReturnType<typeof simSystem>) {
  const got: number[] = [];
  return { got, ref: s.system.spawn(Behaviors.receiveMessage<number>((n) => void got.push(n))) };
}

describe("supervision", () => {
  it("default is stop: the actor stops, others are unaffected, the failure is logged and published", async () => {
    const s = simSystem();
    const failures: ActorFailed[] = [];
    s.system.eventStream.subscribe("ActorFailed", (e) => failures.push(e));
    const starts = { n: 0 };
    const a = s.system.spawn(flaky(starts), "a");
    const b = s.system.spawn(flaky({ n: 0 }), "b");
    const c = collector(s);
    a.tell({ type: "boom" });
    a.tell({ type: "get", replyTo: c.ref });
    b.tell({ type: "add", n: 7 });
    b.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([7]);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.path).toBe("shardkit://test/user/a");
    expect(failures[0]?.directive).toBe("stop");
    expect(s.system.stats.deadLetters).toBe(1);
  });

  it("resume keeps the state and drops the failing message", async () => {
    const s = simSystem();
    const starts = { n: 0 };
    const a = s.system.spawn(Behaviors.supervise(flaky(starts), SupervisorStrategy.resume()));
    const c = collector(s);
    a.tell({ type: "add", n: 1 });
    a.tell({ type: "boom" });
    a.tell({ type: "add", n: 2 });
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([3]);
    expect(starts.n).toBe(1);
  });

  it("restart re-runs setup (state reset) and keeps the mailbox", async () => {
    const s = simSystem();
    const starts = { n: 0 };
    const a = s.system.spawn(Behaviors.supervise(flaky(starts), SupervisorStrategy.restart()));
    const c = collector(s);
    a.tell({ type: "add", n: 1 });
    a.tell({ type: "boom" });
    a.tell({ type: "add", n: 2 });
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([2]);
    expect(starts.n).toBe(2);
  });

  it("restart gives up after maxRestarts within the window", async () => {
    const s = simSystem();
    const starts = { n: 0 };
    const a = s.system.spawn(
      Behaviors.supervise(
        flaky(starts),
        SupervisorStrategy.restart({ maxRestarts: 2, withinMs: 10_000 }),
      ),
    );
    for (let i = 0; i < 5; i++) a.tell({ type: "boom" });
    const c = collector(s);
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(starts.n).toBe(3);
    expect(c.got).toEqual([]);
    expect(s.system.stats.deadLetters).toBeGreaterThan(0);
  });

  it("restart with exponential backoff waits min, then 2x min (virtual time)", async () => {
    const s = simSystem();
    const startTimes: number[] = [];
    const b = Behaviors.setup<Msg>((ctx) => {
      startTimes.push(ctx.now());
      return Behaviors.receiveMessage<Msg>((m) => {
        if (m.type === "boom") throw new Error("boom");
      });
    });
    const a = s.system.spawn(
      Behaviors.supervise(
        b,
        SupervisorStrategy.restartWithBackoff({
          minBackoffMs: 100,
          maxBackoffMs: 1000,
          randomFactor: 0,
        }),
      ),
    );
    await s.settle();
    a.tell({ type: "boom" });
    await s.settle(150);
    a.tell({ type: "boom" });
    await s.settle(500);
    expect(startTimes).toEqual([0, 100, 350]);
  });

  it("a failing async handler (rejected promise) is supervised like a throw", async () => {
    const s = simSystem();
    const starts = { n: 0 };
    const b = Behaviors.setup<Msg>(() => {
      starts.n++;
      return Behaviors.receiveMessage<Msg>(async (m) => {
        await Promise.resolve();
        if (m.type === "boom") throw new Error("async boom");
      });
    });
    const a = s.system.spawn(Behaviors.supervise(b, SupervisorStrategy.restart()));
    a.tell({ type: "boom" });
    await s.settle();
    expect(starts.n).toBe(2);
    expect(s.system.stats.failures).toBe(1);
  });

  it("restart stops children of the failed actor first", async () => {
    const s = simSystem();
    const childStops: number[] = [];
    let gen = 0;
    const parent = Behaviors.setup<Msg>((ctx) => {
      const g = ++gen;
      ctx.spawn(
        Behaviors.receive<never>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "PostStop") childStops.push(g);
          },
        ),
        "child",
      );
      return Behaviors.receiveMessage<Msg>((m) => {
        if (m.type === "boom") throw new Error("boom");
      });
    });
    const a = s.system.spawn(Behaviors.supervise(parent, SupervisorStrategy.restart()));
    await s.settle();
    a.tell({ type: "boom" });
    await s.settle();
    expect(childStops).toEqual([1]);
    expect(gen).toBe(2);
  });
});
