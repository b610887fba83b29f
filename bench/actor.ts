/**
 * Actor core benchmarks (real runtime, one process):
 * - actor.tell.throughput: messages/s delivered across 10 000 actors;
 * - actor.ask.throughput: ask round trips/s with 1 000 outstanding;
 * - actor.idle.bytes: heap per idle (started, empty) actor, user state excluded;
 * - actor.spawnstop.1m.ms: spawn and then stop 1 000 000 actors.
 */
import { type ActorRef, ActorSystem, ask, Behaviors } from "../src/actor/index.js";
import { createNodeRuntime } from "../src/runtime/node/index.js";
import { type BenchGroup, gc, hasGc, median, repeat } from "./harness.js";

const tick = () => new Promise<void>((r) => setImmediate(r));

function newSystem(name: string): ActorSystem {
  return ActorSystem.create({ name, runtime: createNodeRuntime({ logLevel: "warn" }) });
}

async function tellThroughput(): Promise<number> {
  const system = newSystem("bench-tell");
  const actors = 10_000;
  let processed = 0;
  const counter = Behaviors.receiveMessage<number>(() => {
    processed++;
  });
  const refs: ActorRef<number>[] = [];
  for (let i = 0; i < actors; i++) refs.push(system.spawn(counter));
  await tick();
  const total = 5_000_000;
  const batch = 100_000;
  const t0 = performance.now();
  for (let sent = 0; sent < total; sent += batch) {
    for (let i = 0; i < batch; i++) (refs[(sent + i) % actors] as ActorRef<number>).tell(i);
    while (processed < sent + batch) await tick();
  }
  const ms = performance.now() - t0;
  await system.terminate();
  return (total / ms) * 1000;
}

type Ping = { n: number; replyTo: ActorRef<number> };

async function askThroughput(): Promise<number> {
  const system = newSystem("bench-ask");
  const echoes = Array.from({ length: 100 }, () =>
    system.spawn(Behaviors.receiveMessage<Ping>((m) => m.replyTo.tell(m.n))),
  );
  const outstanding = 1_000;
  const total = 1_000_000;
  let started = 0;
  const t0 = performance.now();
  const worker = async (w: number) => {
    const target = echoes[w % echoes.length] as ActorRef<Ping>;
    while (started < total) {
      started++;
      await ask(target, (replyTo: ActorRef<number>) => ({ n: started, replyTo }), {
        timeoutMs: 10_000,
      });
    }
  };
  await Promise.all(Array.from({ length: outstanding }, (_, w) => worker(w)));
  const ms = performance.now() - t0;
  await system.terminate();
  return (total / ms) * 1000;
}

async function idleBytes(): Promise<number> {
  const system = newSystem("bench-idle");
  const n = 200_000;
  const shared = Behaviors.receiveMessage<number>(() => undefined);
  const refs: ActorRef<number>[] = new Array(n);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) refs[i] = system.spawn(shared);
  await tick();
  await tick();
  gc();
  const after = process.memoryUsage().heapUsed;
  // the refs array itself is the benchmark's, not the actor's: 8 bytes per slot
  const perActor = (after - before) / n - 8;
  await system.terminate();
  return perActor;
}

async function spawnStop1m(): Promise<number> {
  const system = newSystem("bench-spawn");
  const n = 1_000_000;
  const shared = Behaviors.ignore;
  const t0 = performance.now();
  const refs: ActorRef<never>[] = new Array(n);
  for (let i = 0; i < n; i++) refs[i] = system.spawn<never>(shared);
  await tick();
  for (let i = 0; i < n; i++) system.stop(refs[i] as ActorRef<never>);
  await system.terminate();
  return performance.now() - t0;
}

export const actorGroup: BenchGroup = {
  name: "actor",
  description: "actor core on the real runtime, one process",
  async run(report) {
    const tell = await repeat(5, 1, tellThroughput);
    report({
      metric: "actor.tell.throughput",
      value: median(tell),
      unit: "msg/s",
      note: "10 000 actors, 5 M msgs",
    });
    const askRuns = await repeat(5, 1, askThroughput);
    report({
      metric: "actor.ask.throughput",
      value: median(askRuns),
      unit: "ops/s",
      note: "1 000 outstanding",
    });
    const idle = await repeat(3, 1, idleBytes);
    report({
      metric: "actor.idle.bytes",
      value: median(idle),
      unit: "bytes",
      note: hasGc() ? "200 000 actors, heapUsed delta" : "run with --expose-gc for exact figures",
    });
    const spawn = await repeat(3, 0, spawnStop1m);
    report({
      metric: "actor.spawnstop.1m.ms",
      value: median(spawn),
      unit: "ms",
      note: "spawn 1 M, stop 1 M",
    });
  },
};
