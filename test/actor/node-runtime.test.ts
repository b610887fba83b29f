/** Smoke tests of the actor core on the real runtime (real timers, setImmediate). */
import { afterEach, describe, expect, it } from "vitest";
import {
  type ActorRef,
  ActorSystem,
  AskTimeoutError,
  ask,
  Behaviors,
} from "../../src/actor/index.js";
import { createNodeRuntime, type NodeRuntime } from "../../src/runtime/node/index.js";

let runtime: NodeRuntime | undefined;
let system: ActorSystem | undefined;

function start(settings?: Parameters<typeof ActorSystem.create>[0]["settings"]): ActorSystem {
  runtime = createNodeRuntime({ logLevel: "off" });
  system = ActorSystem.create({ name: "real", runtime, settings });
  return system;
}

afterEach(async () => {
  await system?.terminate();
  expect(runtime?.scheduler.liveTimers ?? 0).toBe(0);
  system = undefined;
  runtime = undefined;
});

describe("actor core on the real runtime", () => {
  it("ask round trip and timeout", async () => {
    const sys = start();
    const echo = sys.spawn(
      Behaviors.receiveMessage<{ n: number; replyTo: ActorRef<number> }>((m) =>
        m.replyTo.tell(m.n * 2),
      ),
    );
    await expect(
      ask(echo, (replyTo: ActorRef<number>) => ({ n: 21, replyTo }), { timeoutMs: 1000 }),
    ).resolves.toBe(42);
    const silent = sys.spawn(Behaviors.ignore);
    const t0 = performance.now();
    await expect(ask(silent, () => "x", { timeoutMs: 50 })).rejects.toBeInstanceOf(AskTimeoutError);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
  });

  it("a flood of messages does not starve IO callbacks (dispatcher yields)", async () => {
    const sys = start({ dispatcherTurnMessagesMax: 1000 });
    let processed = 0;
    const total = 200_000;
    const sink = sys.spawn(Behaviors.receiveMessage<number>(() => void processed++));
    let ioRanAt = -1;
    setImmediate(() => {
      ioRanAt = processed;
    });
    for (let i = 0; i < total; i++) sink.tell(i);
    while (processed < total) await new Promise((r) => setImmediate(r));
    expect(ioRanAt).toBeGreaterThanOrEqual(0);
    expect(ioRanAt).toBeLessThan(total);
  });

  it("one busy actor cannot starve another (per-actor budget)", async () => {
    const sys = start({ dispatcherThroughput: 10 });
    const order: string[] = [];
    const busy = sys.spawn(Behaviors.receiveMessage<number>(() => void order.push("busy")));
    const other = sys.spawn(Behaviors.receiveMessage<number>(() => void order.push("other")));
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 1000; i++) busy.tell(i);
    other.tell(0);
    while (order.length < 1001) await new Promise((r) => setImmediate(r));
    expect(order.indexOf("other")).toBeLessThanOrEqual(10);
  });

  it("timers fire on real time and are cancelled at termination", async () => {
    const sys = start();
    const got: string[] = [];
    sys.spawn(
      Behaviors.setup<string>((ctx) => {
        ctx.timers.startTimerWithFixedDelay("t", "tick", 10);
        ctx.timers.startSingleTimer("never", "never", 60_000);
        return Behaviors.receiveMessage((m) => void got.push(m));
      }),
    );
    await new Promise((r) => setTimeout(r, 60));
    expect(got.length).toBeGreaterThanOrEqual(2);
    expect(got).not.toContain("never");
  });
});
