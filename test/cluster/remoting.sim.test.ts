/**
 * Remoting in the simulator: tell/ask, ordering, exactly-once system messages and remote
 * death watch under latency, jitter, loss (connection resets), partitions and restarts.
 * Every scenario runs over several seeds; a failure names its seed.
 */
import { describe, expect, it } from "vitest";
import { type ActorRef, ask, Behaviors } from "../../src/actor/index.js";
import { simSeeds } from "../support/sim-seeds.js";
import { SimCluster } from "./sim-remoting.js";

const SEEDS = simSeeds([1, 2, 3, 4, 5]);

type Ping = { n: number; replyTo: ActorRef<number> };
const echo = Behaviors.receiveMessage<Ping>((m) => m.replyTo.tell(m.n + 1));

/** An actor that only watches `ref` (a watch is a system message to its node). */
const watcherOf = (ref: ActorRef<Ping>) =>
  Behaviors.setup<never>((ctx) => {
    ctx.watch(ref as never);
    return Behaviors.receive<never>(
      () => undefined,
      () => undefined,
    );
  });

describe.each(SEEDS)("remoting in the simulator (seed %i)", (seed) => {
  it("ask and tell between two nodes, refs inside messages resolve on arrival", async () => {
    const c = new SimCluster(seed);
    c.network.configureLink("a", "b", { latencyMs: 5, jitterMs: 3 });
    c.network.configureLink("b", "a", { latencyMs: 5, jitterMs: 3 });
    const a = await c.node("a");
    const b = await c.node("b");
    b.system.spawn(echo, "echo");
    const ref = a.remoting.actorRefFor<Ping>(b.remoting.address, "/user/echo");
    let answer: number | undefined;
    ask(ref, (replyTo: ActorRef<number>) => ({ n: 41, replyTo }), { timeoutMs: 5_000 }).then(
      (v) => {
        answer = v;
      },
    );
    await c.until(() => answer !== undefined, 5_000);
    expect(answer).toBe(42);
    // a ref travelling inside a message is usable on the other side
    const got: number[] = [];
    const sink = a.system.spawn(
      Behaviors.receiveMessage<number>((n) => void got.push(n)),
      "sink",
    );
    ref.tell({ n: 1, replyTo: sink });
    await c.until(() => got.length === 1, 5_000);
    expect(got).toEqual([2]);
  });

  it("per-pair order holds under connection resets (delivered messages never reorder)", async () => {
    const c = new SimCluster(seed);
    c.network.configureLink("a", "b", { latencyMs: 2, jitterMs: 2, lossProbability: 0.002 });
    const a = await c.node("a", { reconnectBackoffMinMs: 10, reconnectBackoffMaxMs: 50 });
    const b = await c.node("b");
    const seen: number[] = [];
    b.system.spawn(
      Behaviors.receiveMessage<number>((n) => void seen.push(n)),
      "sink",
    );
    const sink = a.remoting.actorRefFor<number>(b.remoting.address, "/user/sink");
    const total = 3_000;
    for (let i = 0; i < total; i++) {
      sink.tell(i);
      if (i % 100 === 99) await c.world.advance(5);
    }
    await c.world.advance(2_000);
    for (let i = 1; i < seen.length; i++)
      expect(seen[i] as number).toBeGreaterThan(seen[i - 1] as number);
    expect(seen.length).toBeGreaterThan(total / 2);
    expect(seen.length).toBeLessThanOrEqual(total);
  });

  it("system messages are delivered exactly once under loss: one Terminated per watched actor", async () => {
    const c = new SimCluster(seed);
    for (const [x, y] of [
      ["a", "b"],
      ["b", "a"],
    ] as const)
      c.network.configureLink(x, y, { latencyMs: 3, jitterMs: 2, lossProbability: 0.15 });
    const settings = {
      reconnectBackoffMinMs: 10,
      reconnectBackoffMaxMs: 100,
      systemMessageResendIntervalMs: 200,
    };
    const a = await c.node("a", settings);
    const b = await c.node("b", settings);
    const n = 40;
    for (let i = 0; i < n; i++)
      b.system.spawn(
        Behaviors.receiveMessage<string>(() => Behaviors.stopped),
        `v${i}`,
      );
    const terminated = new Map<string, number>();
    a.system.spawn(
      Behaviors.setup<string>((ctx) => {
        for (let i = 0; i < n; i++)
          ctx.watch(a.remoting.actorRefFor<string>(b.remoting.address, `/user/v${i}`) as never);
        return Behaviors.receive<string>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "Terminated")
              terminated.set(sig.ref.path.name, (terminated.get(sig.ref.path.name) ?? 0) + 1);
          },
        );
      }),
      "watcher",
    );
    // all watches must have arrived before the victims stop
    await c.until(() => b.remoting.stats.systemMessagesIn >= n, 30_000);
    // acks b -> a held for a while: a resends on the same connection, b sees duplicates
    c.network.partition(["b"], ["a"], { oneWay: true });
    a.remoting.actorRefFor<string>(b.remoting.address, "/user/v0").tell("ping");
    await c.world.advance(1_000);
    c.network.heal();
    // "stop" is a user message (at most once): repeat it until every victim stopped
    for (let round = 0; round < 100 && terminated.size < n; round++) {
      for (let i = 0; i < n; i++)
        if (!terminated.has(`v${i}`))
          a.remoting.actorRefFor<string>(b.remoting.address, `/user/v${i}`).tell("stop");
      await c.world.advance(500);
    }
    await c.until(() => terminated.size === n, 60_000);
    await c.world.advance(5_000);
    expect([...terminated.values()].every((count) => count === 1)).toBe(true);
    expect(b.remoting.stats.systemMessagesIn).toBe(n);
    expect(a.remoting.stats.systemMessagesIn).toBe(n);
  });

  it("a partitioned watched node: the watcher gets Terminated, the incarnation is quarantined for good", async () => {
    const c = new SimCluster(seed);
    const fast = { watchHeartbeatIntervalMs: 200, watchAcceptableHeartbeatPauseMs: 1_000 };
    const a = await c.node("a", fast);
    const b = await c.node("b", fast);
    b.system.spawn(echo, "echo");
    let terminatedAt = -1;
    a.system.spawn(
      Behaviors.setup<string>((ctx) => {
        ctx.watch(a.remoting.actorRefFor<string>(b.remoting.address, "/user/echo") as never);
        return Behaviors.receive<string>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "Terminated") terminatedAt = c.world.now;
          },
        );
      }),
    );
    await c.world.advance(2_000);
    expect(terminatedAt).toBe(-1);
    const cutAt = c.world.now;
    c.network.partition(["a"], ["b"]);
    await c.until(() => terminatedAt >= 0, 20_000);
    expect(terminatedAt - cutAt).toBeLessThan(10_000);
    expect(a.remoting.stats.quarantines).toBe(1);
    c.network.heal();
    // the quarantined incarnation can never talk to a again: its handshakes are refused,
    // and b learns who refused it (its cluster may act on it: quarantined-by)
    const refusedBy: string[] = [];
    b.remoting.onAssociationEvent((e) => {
      if (e.type === "quarantined-by") refusedBy.push(`${e.hostPort} ${e.host}:${e.port}#${e.uid}`);
    });
    const sink: number[] = [];
    a.system.spawn(
      Behaviors.receiveMessage<number>((x) => void sink.push(x)),
      "sink",
    );
    b.remoting.actorRefFor<number>(a.remoting.address, "/user/sink").tell(7);
    await c.world.advance(5_000);
    expect(sink).toEqual([]);
    expect(a.remoting.stats.handshakeRejectsSent).toBeGreaterThan(0);
    expect(refusedBy.length).toBeGreaterThan(0);
    expect(new Set(refusedBy)).toEqual(new Set([`a:2552 a:2552#${a.remoting.localUid}`]));
  });

  it("a crashed and restarted peer (same address, new uid) is a new incarnation", async () => {
    const c = new SimCluster(seed);
    const fast = {
      watchHeartbeatIntervalMs: 200,
      watchAcceptableHeartbeatPauseMs: 1_000,
      reconnectBackoffMaxMs: 200,
    };
    const a = await c.node("a", fast);
    const b1 = await c.node("b", fast);
    b1.system.spawn(echo, "echo");
    let terminated = 0;
    a.system.spawn(
      Behaviors.setup<string>((ctx) => {
        ctx.watch(a.remoting.actorRefFor<string>(b1.remoting.address, "/user/echo") as never);
        return Behaviors.receive<string>(
          () => undefined,
          (_c, sig) => {
            if (sig.type === "Terminated") terminated++;
          },
        );
      }),
    );
    await c.world.advance(1_000);
    c.crash(b1);
    const b2 = await c.node("b", fast);
    expect(b2.remoting.localUid).not.toBe(b1.remoting.localUid);
    b2.system.spawn(echo, "echo");
    await c.until(() => terminated === 1, 20_000);
    let answer: number | undefined;
    const ref = a.remoting.actorRefFor<Ping>(b2.remoting.address, "/user/echo");
    const tryAsk = (): Promise<void> =>
      ask(ref, (replyTo: ActorRef<number>) => ({ n: 1, replyTo }), { timeoutMs: 1_000 }).then(
        (v) => {
          answer = v;
        },
        () => tryAsk(),
      );
    tryAsk();
    await c.until(() => answer !== undefined, 20_000);
    expect(answer).toBe(2);
    expect(terminated).toBe(1);
  });

  it("gives up on unacknowledged system messages: quarantine after giveUpSystemMessageAfterMs", async () => {
    const c = new SimCluster(seed);
    const a = await c.node("a", {
      giveUpSystemMessageAfterMs: 3_000,
      systemMessageResendIntervalMs: 500,
      watchAcceptableHeartbeatPauseMs: 60_000,
    });
    const b = await c.node("b");
    b.system.spawn(echo, "echo");
    const ref = a.remoting.actorRefFor<Ping>(b.remoting.address, "/user/echo");
    let ok = false;
    ask(ref, (replyTo: ActorRef<number>) => ({ n: 1, replyTo }), { timeoutMs: 2_000 }).then(() => {
      ok = true;
    });
    await c.until(() => ok, 5_000);
    c.network.partition(["b"], ["a"], { oneWay: true }); // b -> a blocked: acks never arrive
    a.system.spawn(watcherOf(ref));
    await c.until(() => a.remoting.stats.quarantines === 1, 30_000);
  });
});

describe("remoting timers (simulator)", () => {
  it("an association keeps a resend timer only while a system message is unacknowledged", async () => {
    const c = new SimCluster(1);
    const a = await c.node("a", { systemMessageResendIntervalMs: 500 });
    const peers = [await c.node("b"), await c.node("c"), await c.node("d")];
    for (const p of peers) p.system.spawn(echo, "echo");
    const askEcho = async (p: (typeof peers)[number]) => {
      let answer: number | undefined;
      const ref = a.remoting.actorRefFor<Ping>(p.remoting.address, "/user/echo");
      void ask(ref, (replyTo: ActorRef<number>) => ({ n: 1, replyTo }), {
        timeoutMs: 2_000,
      }).then((n) => {
        answer = n;
      });
      await c.until(() => answer !== undefined, 5_000);
    };
    await askEcho(peers[0] as (typeof peers)[number]);
    await c.world.advance(3_000);
    const withOnePeer = a.runtime.scheduler.liveTimers;
    await askEcho(peers[1] as (typeof peers)[number]);
    await askEcho(peers[2] as (typeof peers)[number]);
    await c.world.advance(3_000);
    // three active associations, user messages only: no more timers than with one
    expect(a.runtime.scheduler.liveTimers).toBe(withOnePeer);
    // a watch is a system message: its association resends until the ack, then stops
    const ref = a.remoting.actorRefFor<Ping>(
      (peers[1] as (typeof peers)[number]).remoting.address,
      "/user/echo",
    );
    a.system.spawn(watcherOf(ref));
    await c.world.advance(100);
    expect(a.runtime.scheduler.liveTimers).toBeGreaterThan(withOnePeer);
    await c.world.advance(3_000);
    expect(a.remoting.stats.quarantines).toBe(0);
    expect(a.runtime.scheduler.liveTimers).toBe(withOnePeer);
  });
});

describe("remoting handshake refusals (simulator)", () => {
  it("a different system name is refused and logged on both sides", async () => {
    const c = new SimCluster(7);
    const a = await c.node("a", {}, "sk");
    const b = await c.node("b", {}, "other");
    b.system.spawn(echo, "echo");
    const ref = a.remoting.actorRefFor<Ping>("sk@b:2552", "/user/echo");
    let failed = false;
    ask(ref, (replyTo: ActorRef<number>) => ({ n: 1, replyTo }), { timeoutMs: 2_000 }).catch(() => {
      failed = true;
    });
    await c.until(() => failed, 5_000);
    expect(b.remoting.stats.handshakeRejectsSent).toBeGreaterThan(0);
    expect(a.remoting.stats.handshakeRejectsReceived).toBeGreaterThan(0);
  });

  it("a wrong secret is refused; the right one is accepted", async () => {
    const c = new SimCluster(8);
    const a = await c.node("a", { secret: "correct horse battery staple" });
    const b = await c.node("b", { secret: "correct horse battery staple" });
    const bad = await c.node("x", { secret: "wrong wrong wrong wrong wrong" });
    b.system.spawn(echo, "echo");
    let good: number | undefined;
    ask(
      a.remoting.actorRefFor<Ping>(b.remoting.address, "/user/echo"),
      (replyTo: ActorRef<number>) => ({ n: 1, replyTo }),
      {
        timeoutMs: 2_000,
      },
    ).then((v) => {
      good = v;
    });
    let refused = false;
    ask(
      bad.remoting.actorRefFor<Ping>(b.remoting.address, "/user/echo"),
      (replyTo: ActorRef<number>) => ({ n: 1, replyTo }),
      {
        timeoutMs: 2_000,
      },
    ).catch(() => {
      refused = true;
    });
    await c.until(() => good !== undefined && refused, 5_000);
    expect(good).toBe(2);
    // b proves first (its ACK); x cannot verify it, refuses and tells b why.
    expect(bad.remoting.stats.handshakeRejectsSent).toBeGreaterThan(0);
    await c.until(() => b.remoting.stats.handshakeRejectsReceived > 0, 5_000);
  });
});

describe("remoting send failures (simulator)", () => {
  it("an unserializable or oversized message fails at tell with a typed error routed to dead letters", async () => {
    const c = new SimCluster(9);
    const a = await c.node("a", { frameSizeMaxBytes: 4096 });
    const b = await c.node("b");
    const got: unknown[] = [];
    b.system.spawn(
      Behaviors.receiveMessage<unknown>((m) => void got.push(m)),
      "sink",
    );
    const dead: { reason: string; cause: unknown }[] = [];
    a.system.eventStream.subscribe("DeadLetter", (e) =>
      dead.push({ reason: e.reason, cause: e.cause }),
    );
    const sink = a.remoting.actorRefFor<unknown>(b.remoting.address, "/user/sink");
    expect(() => sink.tell({ callback: () => 1 })).not.toThrow();
    expect(() => sink.tell({ blob: new Uint8Array(10_000) })).not.toThrow();
    sink.tell({ ok: true });
    await c.until(() => got.length === 1, 5_000);
    expect(got).toEqual([{ ok: true }]);
    expect(dead.map((d) => d.reason)).toEqual(["send-failed", "send-failed"]);
    for (const d of dead) expect((d.cause as { code?: string }).code).toBe("REMOTE_SEND_FAILED");
    expect(String((dead[1]?.cause as Error | undefined)?.message)).toMatch(/frame|large|size/i);
  });
});

describe("remoting outbound bounds (simulator)", () => {
  it("a full outbound queue drops to dead letters, counted, and the rest flows after heal", async () => {
    const c = new SimCluster(11);
    const a = await c.node("a", { outboundQueueMax: 100, reconnectBackoffMaxMs: 200 });
    const b = await c.node("b");
    const got: number[] = [];
    b.system.spawn(
      Behaviors.receiveMessage<number>((n) => void got.push(n)),
      "sink",
    );
    const sink = a.remoting.actorRefFor<number>(b.remoting.address, "/user/sink");
    sink.tell(-1);
    await c.until(() => got.length === 1, 5_000);
    c.network.partition(["a"], ["b"]);
    await c.world.advance(6_000); // the connection is reset; a queues while reconnecting
    const dead: string[] = [];
    a.system.eventStream.subscribe("DeadLetter", (e) => dead.push(e.reason));
    for (let i = 0; i < 150; i++) sink.tell(i);
    expect(a.remoting.stats.outboundOverflow).toBe(50);
    expect(dead.filter((r) => r === "queue-overflow")).toHaveLength(50);
    c.network.heal();
    await c.until(() => got.length === 101, 30_000);
    expect(got.slice(1)).toEqual([...Array(100).keys()]);
  });
});
