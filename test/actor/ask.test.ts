import { describe, expect, it } from "vitest";
import { type ActorRef, AskRejectedError, ask, Behaviors } from "../../src/actor/index.js";
import { AbortError, AskTimeoutError, SystemTerminatedError } from "../../src/base/errors.js";
import { simSystem } from "./sim-system.js";

type Echo = { text: string; replyTo: ActorRef<string> };
const echo = Behaviors.receiveMessage<Echo>((m) => m.replyTo.tell(m.text.toUpperCase()));
const silent = Behaviors.ignore;

describe("ask", () => {
  it("resolves with the reply", async () => {
    const s = simSystem();
    const ref = s.system.spawn(echo);
    const p = ask(ref, (replyTo: ActorRef<string>) => ({ text: "hi", replyTo }), {
      timeoutMs: 1000,
    });
    await s.settle();
    await expect(p).resolves.toBe("HI");
    expect(s.system.stats.pendingAsks).toBe(0);
  });

  it("rejects with AskTimeoutError after timeoutMs of virtual time, not before", async () => {
    const s = simSystem();
    const ref = s.system.spawn<Echo>(silent);
    let outcome: unknown = "pending";
    const p = ask(ref, (replyTo: ActorRef<string>) => ({ text: "x", replyTo }), {
      timeoutMs: 3000,
    });
    p.then(
      (v) => (outcome = v),
      (e) => (outcome = e),
    );
    await s.settle(2999);
    expect(outcome).toBe("pending");
    await s.settle(1);
    expect(outcome).toBeInstanceOf(AskTimeoutError);
    expect((outcome as AskTimeoutError).code).toBe("ASK_TIMEOUT");
    expect(s.system.stats.pendingAsks).toBe(0);
  });

  it("a late reply after timeout goes to dead letters", async () => {
    const s = simSystem();
    const delayed = Behaviors.receive<Echo>((ctx, m) => {
      ctx.scheduleOnce(5000, m.replyTo, "late");
    });
    const ref = s.system.spawn(delayed);
    const p = ask(ref, (replyTo: ActorRef<string>) => ({ text: "x", replyTo }), {
      timeoutMs: 1000,
    });
    p.catch(() => {});
    await s.settle(6000);
    await expect(p).rejects.toBeInstanceOf(AskTimeoutError);
    expect(s.system.stats.deadLetters).toBe(1);
  });

  it("asks with different timeouts expire independently and in deadline order", async () => {
    const s = simSystem();
    const ref = s.system.spawn<Echo>(silent);
    const order: number[] = [];
    for (const t of [500, 100, 300, 100]) {
      ask(ref, (replyTo: ActorRef<string>) => ({ text: "x", replyTo }), { timeoutMs: t }).catch(
        () => order.push(t),
      );
    }
    await s.settle(1000);
    expect(order).toEqual([100, 100, 300, 500]);
  });

  it("rejects with AbortError when the signal aborts; nothing is sent if already aborted", async () => {
    const s = simSystem();
    const received: string[] = [];
    const ref = s.system.spawn(Behaviors.receiveMessage<Echo>((m) => void received.push(m.text)));
    const ac = new AbortController();
    const p = ask(ref, (replyTo: ActorRef<string>) => ({ text: "a", replyTo }), {
      timeoutMs: 10_000,
      signal: ac.signal,
    });
    await s.settle(10);
    ac.abort("user cancelled");
    await expect(p).rejects.toBeInstanceOf(AbortError);
    const p2 = ask(ref, (replyTo: ActorRef<string>) => ({ text: "b", replyTo }), {
      signal: ac.signal,
    });
    await expect(p2).rejects.toBeInstanceOf(AbortError);
    await s.settle();
    expect(received).toEqual(["a"]);
    expect(s.system.stats.pendingAsks).toBe(0);
  });

  it("bounds pending asks with askPendingMax", async () => {
    const s = simSystem(1, { askPendingMax: 2 });
    const ref = s.system.spawn<Echo>(silent);
    const mk = (replyTo: ActorRef<string>) => ({ text: "x", replyTo });
    const a = ask(ref, mk, { timeoutMs: 100 });
    const b = ask(ref, mk, { timeoutMs: 100 });
    await expect(ask(ref, mk, { timeoutMs: 100 })).rejects.toBeInstanceOf(AskRejectedError);
    a.catch(() => {});
    b.catch(() => {});
    await s.settle(200);
    expect(s.system.stats.pendingAsks).toBe(0);
  });

  it("termination rejects pending asks", async () => {
    const s = simSystem();
    const ref = s.system.spawn<Echo>(silent);
    const p = ask(ref, (replyTo: ActorRef<string>) => ({ text: "x", replyTo }), {
      timeoutMs: 60_000,
    });
    const rejected = expect(p).rejects.toBeInstanceOf(SystemTerminatedError);
    const done = s.system.terminate();
    await s.settle();
    await done;
    await rejected;
  });
});
