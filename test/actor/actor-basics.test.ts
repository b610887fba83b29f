import { describe, expect, it } from "vitest";
import {
  AbstractBehavior,
  type ActorContext,
  type ActorRef,
  Behaviors,
  PoisonPill,
  type Signal,
} from "../../src/actor/index.js";
import { InvalidActorNameError } from "../../src/base/errors.js";
import { simSystem } from "./sim-system.js";

type CounterMsg = { type: "inc"; by: number } | { type: "get"; replyTo: ActorRef<number> };

const counter = (start = 0) =>
  Behaviors.setup<CounterMsg>(() => {
    let n = start;
    return Behaviors.receiveMessage((msg) => {
      switch (msg.type) {
        case "inc":
          n += msg.by;
          return;
        case "get":
          msg.replyTo.tell(n);
          return;
      }
    });
  });

function probe<T>(s: ReturnType<typeof simSystem>) {
  const got: T[] = [];
  const ref = s.system.spawn(
    Behaviors.receiveMessage<T>((m) => {
      got.push(m);
    }),
  );
  return { ref, got };
}

describe("actor basics", () => {
  it("delivers messages in order, one at a time, and replies", async () => {
    const s = simSystem();
    const c = s.system.spawn(counter(), "counter");
    const p = probe<number>(s);
    for (let i = 1; i <= 100; i++) c.tell({ type: "inc", by: i });
    c.tell({ type: "get", replyTo: p.ref });
    await s.until(() => p.got.length === 1);
    expect(p.got).toEqual([5050]);
    expect(c.path.toString()).toBe("shardkit://test/user/counter");
  });

  it("class style with state in fields and a stopped behavior", async () => {
    type Msg =
      | { type: "add"; v: string }
      | { type: "dump"; replyTo: ActorRef<string[]> }
      | { type: "quit" };
    const stopped: string[] = [];
    class Collector extends AbstractBehavior<Msg> {
      private items: string[] = [];
      onMessage(msg: Msg) {
        if (msg.type === "add") this.items.push(msg.v);
        else if (msg.type === "dump") msg.replyTo.tell([...this.items]);
        else return Behaviors.stopped;
      }
      override onSignal(signal: Signal) {
        if (signal.type === "PostStop") stopped.push(this.context.path.name);
      }
    }
    const s = simSystem();
    const ref = s.system.spawn(
      Behaviors.setup<Msg>((ctx) => new Collector(ctx)),
      "collector",
    );
    const p = probe<string[]>(s);
    ref.tell({ type: "add", v: "a" });
    ref.tell({ type: "add", v: "b" });
    ref.tell({ type: "dump", replyTo: p.ref });
    ref.tell({ type: "quit" });
    await s.until(() => stopped.length === 1);
    expect(p.got).toEqual([["a", "b"]]);
    expect(stopped).toEqual(["collector"]);
  });

  it("become switches behavior (functional state machine)", async () => {
    type Msg = { type: "open" } | { type: "close" } | { type: "ping"; replyTo: ActorRef<string> };
    const closed: ReturnType<typeof Behaviors.receiveMessage<Msg>> = Behaviors.receiveMessage<Msg>(
      (m) => {
        if (m.type === "open") return opened;
        if (m.type === "ping") m.replyTo.tell("closed");
      },
    );
    const opened: ReturnType<typeof Behaviors.receiveMessage<Msg>> = Behaviors.receiveMessage<Msg>(
      (m) => {
        if (m.type === "close") return closed;
        if (m.type === "ping") m.replyTo.tell("open");
      },
    );
    const s = simSystem();
    const door = s.system.spawn(closed);
    const p = probe<string>(s);
    door.tell({ type: "ping", replyTo: p.ref });
    door.tell({ type: "open" });
    door.tell({ type: "ping", replyTo: p.ref });
    door.tell({ type: "close" });
    door.tell({ type: "ping", replyTo: p.ref });
    await s.until(() => p.got.length === 3);
    expect(p.got).toEqual(["closed", "open", "closed"]);
  });

  it("sending to a stopped actor goes to dead letters without throwing", async () => {
    const s = simSystem();
    const dead: unknown[] = [];
    s.system.eventStream.subscribe("DeadLetter", (e) => dead.push(e.message));
    const c = s.system.spawn(counter());
    c.tell(PoisonPill);
    await s.settle();
    expect(() => c.tell({ type: "inc", by: 1 })).not.toThrow();
    expect(dead).toEqual([{ type: "inc", by: 1 }]);
    expect(s.system.stats.deadLetters).toBe(1);
  });

  it("PoisonPill stops after messages sent before it; later ones are dead letters", async () => {
    const s = simSystem();
    const seen: number[] = [];
    const ref = s.system.spawn(Behaviors.receiveMessage<number>((m) => void seen.push(m)));
    ref.tell(1);
    ref.tell(2);
    ref.tell(PoisonPill);
    ref.tell(3);
    await s.settle();
    expect(seen).toEqual([1, 2]);
    expect(s.system.stats.deadLetters).toBe(1);
  });

  it("child names are unique among live siblings, and reusable after stop", async () => {
    const s = simSystem();
    const a = s.system.spawn(Behaviors.ignore, "a");
    expect(() => s.system.spawn(Behaviors.ignore, "a")).toThrow(InvalidActorNameError);
    expect(() => s.system.spawn(Behaviors.ignore, "b/c")).toThrow(InvalidActorNameError);
    expect(() => s.system.spawn(Behaviors.ignore, "$x")).toThrow(InvalidActorNameError);
    s.system.stop(a);
    await s.settle();
    expect(() => s.system.spawn(Behaviors.ignore, "a")).not.toThrow();
  });

  it("parent stop stops children first (PostStop order child, then parent)", async () => {
    const s = simSystem();
    const order: string[] = [];
    const node = (name: string, depth: number): ReturnType<typeof Behaviors.setup<never>> =>
      Behaviors.setup<never>((ctx) => {
        if (depth > 0) {
          ctx.spawn(node(`${name}.0`, depth - 1), "c0");
          ctx.spawn(node(`${name}.1`, depth - 1), "c1");
        }
        return Behaviors.receive<never>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "PostStop") order.push(name);
          },
        );
      });
    const root = s.system.spawn(node("r", 2), "root");
    await s.settle();
    s.system.stop(root);
    await s.settle();
    expect(order).toHaveLength(7);
    expect(order.at(-1)).toBe("r");
    expect(order.indexOf("r.0")).toBeGreaterThan(order.indexOf("r.0.0"));
    expect(order.indexOf("r.0")).toBeGreaterThan(order.indexOf("r.0.1"));
  });

  it("unhandled messages are published, behavior unchanged", async () => {
    const s = simSystem();
    const un: unknown[] = [];
    s.system.eventStream.subscribe("UnhandledMessage", (e) => un.push(e.message));
    const ref = s.system.spawn(
      Behaviors.receiveMessage<string>((m) => (m === "x" ? Behaviors.unhandled : undefined)),
    );
    ref.tell("x");
    ref.tell("y");
    await s.settle();
    expect(un).toEqual(["x"]);
  });

  it("event stream delivers typed user events to functions and actors; dispose unsubscribes", async () => {
    const s = simSystem();
    const got: number[] = [];
    const actorGot: string[] = [];
    const sub = s.system.eventStream.subscribe("Tick", (e) =>
      got.push((e as unknown as { n: number }).n),
    );
    const ref = s.system.spawn(
      Behaviors.receiveMessage<{ type: "Tick" }>((e) => void actorGot.push(e.type)),
    );
    s.system.eventStream.subscribe("Tick", ref);
    s.system.eventStream.publish({ type: "Tick", n: 1 });
    sub.dispose();
    s.system.eventStream.publish({ type: "Tick", n: 2 });
    await s.settle();
    expect(got).toEqual([1]);
    expect(actorGot).toEqual(["Tick", "Tick"]);
  });

  it("pipeToSelf and scheduleOnce deliver to the actor", async () => {
    const s = simSystem();
    const seen: string[] = [];
    s.system.spawn(
      Behaviors.setup<string>((ctx: ActorContext<string>) => {
        ctx.pipeToSelf(Promise.resolve(41), (r) => (r.ok ? `ok:${r.value + 1}` : "err"));
        ctx.pipeToSelf(Promise.reject(new Error("boom")), (r) =>
          r.ok ? "ok" : `err:${(r.error as Error).message}`,
        );
        ctx.scheduleOnce(500, ctx.self, "later");
        return Behaviors.receiveMessage((m) => void seen.push(m));
      }),
    );
    await s.settle(1000);
    expect(seen).toEqual(["ok:42", "err:boom", "later"]);
  });
});
