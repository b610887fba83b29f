/**
 * The determinism requirement of docs/architecture.md, "The determinism boundary", on the actor core: a workload of 200 actors
 * exchanging thousands of messages with random delays, timers and async handlers gives
 * the same trace hash for the same seed and a different delivery order for another seed.
 */
import { describe, expect, it } from "vitest";
import { type ActorRef, ActorSystem, Behaviors } from "../../src/actor/index.js";
import { SimWorld } from "../../src/runtime/sim/index.js";

type Msg =
  | { type: "hop"; ttl: number; id: number }
  | { type: "tick" }
  | { type: "peers"; peers: ActorRef<Msg>[] };

async function run(seed: number): Promise<{ hash: string; order: string; delivered: number }> {
  const world = new SimWorld({ seed });
  const rt = world.createRuntime("n1", { clockDriftPpm: 50 });
  const system = ActorSystem.create({ name: "det", runtime: rt });
  const order: number[] = [];
  let delivered = 0;
  const worker = (index: number) =>
    Behaviors.setup<Msg>((ctx) => {
      let peers: ActorRef<Msg>[] = [];
      ctx.timers.startTimerAtFixedRate("tick", { type: "tick" }, 50 + index);
      return Behaviors.receive<Msg>(async (c, m) => {
        switch (m.type) {
          case "peers":
            peers = m.peers;
            return;
          case "tick":
            world.record("n1", "tick", index);
            return;
          case "hop": {
            delivered++;
            order.push(m.id);
            world.record("n1", "hop", `${index}:${m.id}:${m.ttl}`);
            if (m.id % 3 === 0) await Promise.resolve();
            if (m.ttl > 0) {
              const next = peers[rt.random.nextInt(peers.length)] as ActorRef<Msg>;
              c.scheduleOnce(rt.random.nextInt(20), next, {
                type: "hop",
                ttl: m.ttl - 1,
                id: m.id,
              });
            }
            return;
          }
        }
      });
    });
  const refs = Array.from({ length: 200 }, (_, i) => system.spawn(worker(i), `w${i}`));
  for (const r of refs) r.tell({ type: "peers", peers: refs });
  for (let id = 0; id < 400; id++) refs[id % refs.length]?.tell({ type: "hop", ttl: 10, id });
  await world.runUntil(() => delivered === 400 * 11, 60_000);
  const done = system.terminate();
  await world.runUntilIdle(1000);
  await done;
  return { hash: world.traceHash(), order: order.join(","), delivered };
}

describe("actor workload determinism", () => {
  it("same seed -> identical trace hash; other seed -> different order", async () => {
    const a = await run(42);
    const b = await run(42);
    const c = await run(43);
    expect(a.delivered).toBe(4400);
    expect(b.hash).toBe(a.hash);
    expect(b.order).toBe(a.order);
    expect(c.delivered).toBe(4400);
    expect(c.hash).not.toBe(a.hash);
    expect(c.order).not.toBe(a.order);
  });
});
