/**
 * Distributed Data: three cluster members in one process share a PNCounter and an ORSet
 * without any database. Each member increments the counter and adds itself to the set with
 * `majority` writes; a `majority` read on any member then sees every write.
 * `npx tsx examples/ddata-counter.ts [--base-port 25620]`
 */

import { ddataKey, MAJORITY, ORSet, PNCounter, Replicator } from "../src/api/ddata.js";
import { ClusterNode } from "../src/api/index.js";

const i = process.argv.indexOf("--base-port");
const basePort = i >= 0 ? Number(process.argv[i + 1]) : 25620;
const ports = [basePort, basePort + 1, basePort + 2];
const seedNodes = ports.map((p) => `127.0.0.1:${p}`);
const fast = {
  gossipIntervalMs: 200,
  leaderActionsIntervalMs: 200,
  heartbeatIntervalMs: 200,
  seedNodeTimeoutMs: 1_000,
};

const nodes = await Promise.all(
  ports.map((port) =>
    ClusterNode.start({
      systemName: "demo",
      host: "127.0.0.1",
      port,
      seedNodes,
      settings: fast,
      handleSignals: false,
    }),
  ),
);
await new Promise<void>((ok) => {
  const check = setInterval(() => {
    if (nodes.every((n) => n.cluster.state.members.filter((m) => m.status === "up").length === 3)) {
      clearInterval(check);
      ok();
    }
  }, 100);
});

const visits = ddataKey<PNCounter>("visits");
const visitors = ddataKey<ORSet<string>>("visitors");
const replicators = nodes.map((n) => Replicator.start(n));

await Promise.all(
  replicators.map(async (r, k) => {
    await r.update(visits, PNCounter.empty, (c) => c.increment(r.selfNode, k + 1), MAJORITY);
    await r.update(
      visitors,
      ORSet.empty<string>(),
      (s) => s.add(r.selfNode, `node-${k}`),
      MAJORITY,
    );
  }),
);
for (const [k, r] of replicators.entries()) {
  const count = (await r.get(visits, MAJORITY))?.value;
  const who = [...((await r.get(visitors, MAJORITY))?.elements ?? [])].sort();
  console.log(`node-${k} reads visits=${count} visitors=${who.join(",")}`);
}
await Promise.all(nodes.map((n) => n.shutdown()));
process.exit(0);
