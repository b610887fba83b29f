/**
 * Distributed Data benchmarks (`npm run bench -- ddata`, docs/distributed-data.md):
 * - ddata.update.local.throughput: PNCounter increments through Replicator.update with
 *   local consistency on one simulated node (the replicator's own cost: machine, delta
 *   bookkeeping, promise), updates per second of wall time, with up to 1 000 updates
 *   outstanding (callers that fire many more at once without awaiting mostly measure the
 *   garbage collector holding their promises);
 * - ddata.convergence.<N>.ms, N = 5, 25, 100: virtual time from one update on one replica
 *   until all N replicator machines hold it (default settings: deltas every 200 ms, gossip
 *   every 2 s; 1-5 ms simulated latency; test/ddata/machine-net.ts). The update lands just
 *   after a delta tick, so the figure includes a whole deltaPropagationIntervalMs;
 * - ddata.write.majority.p50.us / p99.us: a majority write (ORSet add) among 3 real
 *   processes on this machine, as seen by the writing process;
 * - ddata.delta.bytesPerUpdate vs ddata.fullState.bytes: serialized size of the delta of one
 *   ORSet add against the serialized full state of a 10 000-element ORSet.
 */
import { ddataKey, ORSet, PNCounter, type Replicator } from "../src/api/ddata.js";
import { createDDataSerializer } from "../src/core/ddata/index.js";
import {
  type ClusterNode,
  command,
  freePorts,
  seedNodesOf,
  startChildMember,
  waitAllUp,
} from "../test/cluster-real/cluster-node.js";
import { DDataSim } from "../test/ddata/ddata-sim.js";
import { MachineNet } from "../test/ddata/machine-net.js";
import { killAll } from "../test/support/child-process.js";
import { type BenchGroup, median, percentile } from "./harness.js";

async function localThroughput(): Promise<number> {
  const sim = new DDataSim(1, 1);
  await sim.start();
  const r: Replicator = sim.rep("n1");
  const key = ddataKey<PNCounter>("c");
  const n = 300_000;
  const outstanding = 1_000;
  const runOnce = async () => {
    const t0 = performance.now();
    for (let sent = 0; sent < n; sent += outstanding) {
      const ps: Promise<void>[] = [];
      for (let i = 0; i < outstanding; i++)
        ps.push(r.update(key, PNCounter.empty, (c) => c.increment(r.selfNode, 1)));
      await Promise.all(ps);
    }
    return (n / (performance.now() - t0)) * 1_000;
  };
  await runOnce();
  const runs = [await runOnce(), await runOnce(), await runOnce()];
  return median(runs);
}

async function convergence(size: number): Promise<number> {
  const results: number[] = [];
  for (const seed of [1, 2, 3]) {
    const net = new MachineNet(seed, false, {});
    const names = Array.from({ length: size }, (_, i) => `m${i + 1}`);
    for (const x of names) net.start(x);
    await net.run(1_000);
    const t0 = net.now;
    const id = net.idOf("m1");
    void net.request("m1", (req) => ({
      type: "update",
      req,
      key: "k",
      initial: ORSet.empty<string>(),
      modify: (s) => (s as ORSet<string>).add(id, "x"),
      consistency: { level: "local" },
    }));
    const seen = () =>
      [...net.machines.values()].every(
        (m) => (m.envelope("k")?.data as ORSet<string> | undefined)?.has("x") === true,
      );
    // Steps of 5 ms of virtual time: the figure's resolution.
    while (!seen() && net.now - t0 < 30_000) await net.run(5);
    results.push(net.now - t0);
  }
  return median(results);
}

async function majorityWrites(): Promise<{ p50: number; p99: number; n: number }> {
  const ports = (await freePorts(3)).sort((a, b) => a - b);
  const seedNodes = seedNodesOf(ports);
  try {
    const nodes: ClusterNode[] = await Promise.all(
      ["A", "B", "C"].map((name, i) =>
        startChildMember("test/cluster-real/ddata-node-main.ts", name, {
          port: ports[i],
          seedNodes,
        }),
      ),
    );
    await waitAllUp(nodes, nodes, 30_000);
    const a = nodes[0] as ClusterNode;
    const us: number[] = [];
    for (let i = 0; i < 50; i++) await command(a, "write-majority", { element: `warm${i}` });
    try {
      for (let i = 0; i < 300; i++)
        us.push(Number((await command(a, "write-majority", { element: `e${i}` })).us));
    } catch (e) {
      // A heavily loaded box can make the failure detector drop a member: keep what was measured.
      process.stderr.write(
        `ddata bench: majority writes stopped after ${us.length}: ${String(e)}\n`,
      );
    }
    return { p50: percentile(us, 50), p99: percentile(us, 99), n: us.length };
  } finally {
    await killAll();
  }
}

function deltaBytes(): { delta: number; full: number } {
  const ser = createDDataSerializer();
  let s = ORSet.empty<string>();
  const nodes = ["a", "b", "c"];
  for (let i = 0; i < 10_000; i++) s = s.add(nodes[i % 3] as string, `entity-${i}`).resetDelta();
  const full = ser.toBinary(s).length;
  const sizes: number[] = [];
  for (let i = 0; i < 100; i++) {
    s = s.add("a", `new-${i}`);
    sizes.push(ser.toBinary(s.delta as ORSet<string>).length);
    s = s.resetDelta();
  }
  return { delta: median(sizes), full };
}

export const ddataGroup: BenchGroup = {
  name: "ddata",
  description:
    "Distributed Data: local update throughput, convergence, majority writes, delta size",
  async run(report) {
    report({
      metric: "ddata.update.local.throughput",
      value: await localThroughput(),
      unit: "updates/s",
      note: "target >= 500 k/s",
    });
    for (const n of [5, 25, 100])
      report({
        metric: `ddata.convergence.${n}.ms`,
        value: await convergence(n),
        unit: "ms (virtual)",
        note: "median of 3 seeds",
      });
    const w = await majorityWrites();
    report({
      metric: "ddata.write.majority.p50.us",
      value: w.p50,
      unit: "us",
      note: "3 real processes",
    });
    report({ metric: "ddata.write.majority.p99.us", value: w.p99, unit: "us" });
    const d = deltaBytes();
    report({
      metric: "ddata.delta.bytesPerUpdate",
      value: d.delta,
      unit: "bytes",
      note: "ORSet add, 10 000 elements",
    });
    report({
      metric: "ddata.fullState.bytes",
      value: d.full,
      unit: "bytes",
      note: "the same ORSet in full",
    });
  },
};
