import { describe, expect, it } from "vitest";
import {
  type ActorRef,
  Behaviors,
  DeathPactError,
  SupervisorStrategy,
} from "../../src/actor/index.js";
import { StashOverflowError } from "../../src/base/errors.js";
import { simSystem } from "./sim-system.js";

describe("stash", () => {
  it("stashes until ready, then unstashes in order before newer messages", async () => {
    type Msg = { type: "ready" } | { type: "work"; n: number };
    const s = simSystem();
    const done: number[] = [];
    const ready = Behaviors.receiveMessage<Msg>((m) => {
      if (m.type === "work") done.push(m.n);
    });
    const ref = s.system.spawn(
      Behaviors.receive<Msg>((ctx, m) => {
        if (m.type === "work") ctx.stash.stash(m);
        else {
          ctx.stash.unstashAll();
          return ready;
        }
      }),
    );
    ref.tell({ type: "work", n: 1 });
    ref.tell({ type: "work", n: 2 });
    ref.tell({ type: "ready" });
    ref.tell({ type: "work", n: 3 });
    await s.settle();
    expect(done).toEqual([1, 2, 3]);
  });

  it("overflow throws StashOverflowError into the handler (supervised; default stop)", async () => {
    const s = simSystem();
    const errors: unknown[] = [];
    s.system.eventStream.subscribe("ActorFailed", (e) => errors.push(e.error));
    const ref = s.system.spawn(
      Behaviors.receive<number>((ctx, m) => {
        ctx.stash.stash(m);
      }),
      "stasher",
      { stashCapacityMax: 3 },
    );
    for (let i = 0; i < 5; i++) ref.tell(i);
    await s.settle();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(StashOverflowError);
    // 3 stashed + the 5th message become dead letters when the actor stops
    expect(s.system.stats.deadLetters).toBe(4);
  });
});

describe("mailbox bound", () => {
  it("overflow goes to dead letters, counted", async () => {
    const s = simSystem();
    const seen: number[] = [];
    const ref = s.system.spawn(
      Behaviors.receiveMessage<number>((m) => void seen.push(m)),
      "bounded",
      { mailboxCapacityMax: 10 },
    );
    await s.settle();
    for (let i = 0; i < 25; i++) ref.tell(i);
    await s.settle();
    expect(seen).toEqual([...Array(10).keys()]);
    expect(s.system.stats.deadLetters).toBe(15);
  });

  it("the system-wide default bound applies to actors spawned without props", async () => {
    const s = simSystem(1, { mailboxCapacityMax: 5 });
    const ref = s.system.spawn(Behaviors.ignore);
    await s.settle();
    for (let i = 0; i < 8; i++) ref.tell(i);
    await s.settle();
    expect(s.system.stats.deadLetters).toBe(3);
  });
});

describe("timers", () => {
  it("single, fixed-delay and fixed-rate timers fire at the right virtual times; cancel stops them", async () => {
    const s = simSystem();
    const fired: [string, number][] = [];
    s.system.spawn(
      Behaviors.setup<string>((ctx) => {
        ctx.timers.startSingleTimer("once", "once", 250);
        ctx.timers.startTimerWithFixedDelay("delay", "delay", 100);
        ctx.timers.startTimerAtFixedRate("rate", "rate", 300, 50);
        return Behaviors.receiveMessage<string>((m) => {
          fired.push([m, ctx.now()]);
          if (m === "delay" && ctx.now() >= 400) ctx.timers.cancel("delay");
          if (m === "rate" && ctx.now() >= 650) ctx.timers.cancelAll();
        });
      }),
    );
    await s.settle(2000);
    expect(fired).toEqual([
      ["rate", 50],
      ["delay", 100],
      ["delay", 200],
      ["once", 250],
      ["delay", 300],
      ["rate", 350],
      ["delay", 400],
      ["rate", 650],
    ]);
  });

  it("a replaced or cancelled timer never delivers, even when its fire is already queued", async () => {
    const s = simSystem();
    const got: [string, number][] = [];
    const ref = s.system.spawn(
      Behaviors.receive<string>(async (ctx, m) => {
        if (m === "arm") {
          ctx.timers.startSingleTimer("k", "first", 10);
          ctx.timers.startSingleTimer("c", "cancelled", 10);
          // Stay busy until t=20: both fires (t=10) are queued behind this handler.
          await new Promise<void>((r) =>
            ctx.scheduleOnce(20, { tell: () => r() } as never, undefined as never),
          );
          ctx.timers.startSingleTimer("k", "second", 10);
          ctx.timers.cancel("c");
          return;
        }
        got.push([m, ctx.now()]);
      }),
    );
    ref.tell("arm");
    await s.settle(100);
    expect(got).toEqual([["second", 30]]);
  });
});

describe("receive timeout", () => {
  it("fires after idleness and is pushed back by activity", async () => {
    const s = simSystem();
    const events: [string, number][] = [];
    const ref = s.system.spawn(
      Behaviors.setup<string>((ctx) => {
        ctx.setReceiveTimeout(1000, "idle");
        return Behaviors.receiveMessage<string>((m) => {
          events.push([m, ctx.now()]);
          if (m === "idle") ctx.cancelReceiveTimeout();
        });
      }),
    );
    await s.settle(600);
    ref.tell("ping");
    await s.settle(5000);
    expect(events).toEqual([
      ["ping", 600],
      ["idle", 1600],
    ]);
  });
});

describe("watch", () => {
  it("a parent watching a child that stops gets Terminated", async () => {
    const s = simSystem();
    const signals: string[] = [];
    s.system.spawn(
      Behaviors.setup<string>((ctx) => {
        const child = ctx.spawn(
          Behaviors.receiveMessage<string>(() => Behaviors.stopped),
          "kid",
        );
        ctx.watch(child);
        child.tell("stop please");
        return Behaviors.receive<string>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "Terminated") signals.push(`terminated ${sig.ref.path.name}`);
          },
        );
      }),
    );
    await s.settle();
    expect(signals).toEqual(["terminated kid"]);
  });

  it("a failed watched child gives ChildFailed; watchWith delivers a custom message", async () => {
    const s = simSystem();
    const seen: string[] = [];
    s.system.spawn(
      Behaviors.setup<string>((ctx) => {
        const bad = ctx.spawn(
          Behaviors.receiveMessage<string>(() => {
            throw new Error("kid failed");
          }),
          "bad",
        );
        const good = ctx.spawn(
          Behaviors.receiveMessage<string>(() => Behaviors.stopped),
          "good",
        );
        ctx.watch(bad);
        ctx.watchWith(good, "good-is-gone");
        bad.tell("x");
        good.tell("x");
        return Behaviors.receive<string>(
          (_c, m) => void seen.push(m),
          (_c, sig) => {
            if (sig.type === "ChildFailed")
              seen.push(`failed:${sig.ref.path.name}:${(sig.error as Error).message}`);
          },
        );
      }),
    );
    await s.settle();
    expect(seen.sort()).toEqual(["failed:bad:kid failed", "good-is-gone"]);
  });

  it("watching an already stopped actor yields Terminated at once; unwatch suppresses it", async () => {
    const s = simSystem();
    const seen: string[] = [];
    const victim = s.system.spawn(Behaviors.stopped as never);
    const other = s.system.spawn(Behaviors.receiveMessage<string>(() => Behaviors.stopped));
    await s.settle();
    s.system.spawn(
      Behaviors.setup<string>((ctx) => {
        ctx.watch(victim);
        ctx.watch(other);
        ctx.unwatch(other);
        other.tell("die");
        return Behaviors.receive<string>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "Terminated") seen.push(sig.ref === victim ? "victim" : "other");
          },
        );
      }),
    );
    await s.settle();
    expect(seen).toEqual(["victim"]);
  });

  it("a child whose setup throws right after spawn+watch still gives ChildFailed", async () => {
    const s = simSystem();
    const seen: string[] = [];
    s.system.spawn(
      Behaviors.setup<string>((ctx) => {
        const kid = ctx.spawn(
          Behaviors.setup<string>(() => {
            throw new Error("setup failed");
          }),
          "kid",
        );
        ctx.watch(kid);
        return Behaviors.receive<string>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "ChildFailed") seen.push(`failed:${sig.ref.path.name}`);
            if (sig.type === "Terminated") seen.push(`terminated:${sig.ref.path.name}`);
          },
        );
      }),
    );
    await s.settle();
    expect(seen).toEqual(["failed:kid"]);
  });

  it("a watched child: unwatch suppresses Terminated; watchWith replaces watch (one notice)", async () => {
    const s = simSystem();
    const seen: string[] = [];
    s.system.spawn(
      Behaviors.setup<string>((ctx) => {
        const quiet = ctx.spawn(
          Behaviors.receiveMessage<string>(() => Behaviors.stopped),
          "quiet",
        );
        const loud = ctx.spawn(
          Behaviors.receiveMessage<string>(() => Behaviors.stopped),
          "loud",
        );
        const twice = ctx.spawn(
          Behaviors.receiveMessage<string>(() => Behaviors.stopped),
          "twice",
        );
        ctx.watch(quiet);
        ctx.unwatch(quiet);
        ctx.watch(loud);
        ctx.watchWith(loud, "loud-gone");
        ctx.watchWith(twice, "twice-gone");
        ctx.watch(twice);
        ctx.watch(twice);
        for (const k of [quiet, loud, twice]) k.tell("stop");
        return Behaviors.receive<string>(
          (_c, m) => void seen.push(m),
          (_c, sig) => {
            if (sig.type === "Terminated") seen.push(`terminated:${sig.ref.path.name}`);
          },
        );
      }),
    );
    await s.settle();
    expect(seen.sort()).toEqual(["loud-gone", "terminated:twice"]);
  });

  it("an unhandled Terminated signal fails the watcher with DeathPactError", async () => {
    const s = simSystem();
    const errors: unknown[] = [];
    s.system.eventStream.subscribe("ActorFailed", (e) => errors.push(e.error));
    s.system.spawn(
      Behaviors.setup<string>((ctx) => {
        const kid = ctx.spawn(Behaviors.receiveMessage<string>(() => Behaviors.stopped));
        ctx.watch(kid);
        kid.tell("x");
        return Behaviors.receiveMessage<string>(() => undefined);
      }),
    );
    await s.settle();
    expect(errors[0]).toBeInstanceOf(DeathPactError);
  });
});

describe("async handlers", () => {
  it("process nothing else until the promise settles", async () => {
    const s = simSystem();
    const log: string[] = [];
    const ref = s.system.spawn(
      Behaviors.receive<number>(async (ctx, m) => {
        log.push(`start ${m}`);
        await new Promise<void>((r) =>
          ctx.scheduleOnce(100, { tell: () => r() } as never, undefined as never),
        );
        log.push(`end ${m}`);
      }),
    );
    ref.tell(1);
    ref.tell(2);
    await s.settle(1000);
    expect(log).toEqual(["start 1", "end 1", "start 2", "end 2"]);
  });

  it("allowConcurrentAsync lets handlers interleave", async () => {
    const s = simSystem();
    const log: string[] = [];
    const wake: (() => void)[] = [];
    const ref = s.system.spawn(
      Behaviors.receiveMessage<number>(async (m) => {
        log.push(`start ${m}`);
        await new Promise<void>((r) => wake.push(r));
        log.push(`end ${m}`);
      }),
      "conc",
      { allowConcurrentAsync: true },
    );
    ref.tell(1);
    ref.tell(2);
    await s.settle();
    for (const w of wake) w();
    await s.settle();
    expect(log).toEqual(["start 1", "start 2", "end 1", "end 2"]);
  });

  it("an async handler may return the next behavior", async () => {
    const s = simSystem();
    const got: string[] = [];
    const second = Behaviors.receiveMessage<string>((m) => void got.push(`second:${m}`));
    const ref = s.system.spawn(
      Behaviors.receiveMessage<string>(async (m) => {
        got.push(`first:${m}`);
        await Promise.resolve();
        return second;
      }),
    );
    ref.tell("a");
    ref.tell("b");
    await s.settle();
    expect(got).toEqual(["first:a", "second:b"]);
  });
});

describe("termination", () => {
  it("terminates 10 000 actors in a tree, children before parents, leaving no timers", async () => {
    const s = simSystem();
    let stopped = 0;
    let violations = 0;
    const alive = new Set<string>();
    const leaf = (id: string) =>
      Behaviors.setup<never>((ctx) => {
        alive.add(id);
        ctx.timers.startTimerWithFixedDelay("tick", undefined as never, 1000);
        return Behaviors.receive<never>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "PostStop") {
              alive.delete(id);
              stopped++;
            }
          },
        );
      });
    const parent = (p: number) =>
      Behaviors.setup<never>((ctx) => {
        alive.add(`p${p}`);
        for (let i = 0; i < 99; i++) ctx.spawn(leaf(`p${p}/${i}`));
        return Behaviors.receive<never>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "PostStop") {
              for (let i = 0; i < 99; i++) if (alive.has(`p${p}/${i}`)) violations++;
              alive.delete(`p${p}`);
              stopped++;
            }
          },
        );
      });
    for (let p = 0; p < 100; p++) s.system.spawn(parent(p), `p${p}`);
    await s.settle(10);
    expect(alive.size).toBe(10_000);
    const done = s.system.terminate();
    await s.settle();
    await done;
    expect(stopped).toBe(10_000);
    expect(violations).toBe(0);
    expect(s.system.isTerminated).toBe(true);
    expect(s.world.pendingEvents).toBe(0);
  });

  it("spawning after terminate throws SystemTerminatedError; tells go to dead letters", async () => {
    const s = simSystem();
    const ref: ActorRef<string> = s.system.spawn(Behaviors.ignore);
    await s.system.terminate().then(undefined, () => {});
    const p = s.system.terminate();
    await s.settle();
    await p;
    expect(() => s.system.spawn(Behaviors.ignore)).toThrowError(/terminated/);
    ref.tell("x");
    expect(s.system.stats.deadLetters).toBe(1);
  });

  it("restart supervision does not leak timers", async () => {
    const s = simSystem();
    const ref = s.system.spawn(
      Behaviors.supervise(
        Behaviors.setup<string>((ctx) => {
          ctx.timers.startTimerAtFixedRate("t", "tick", 100);
          return Behaviors.receiveMessage<string>((m) => {
            if (m === "boom") throw new Error("x");
          });
        }),
        SupervisorStrategy.restart(),
      ),
    );
    await s.settle(50);
    for (let i = 0; i < 10; i++) ref.tell("boom");
    await s.settle(50);
    expect(s.world.pendingEvents).toBe(1);
  });
});
