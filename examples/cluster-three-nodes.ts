/**
 * Three cluster members in one process, talking over real TCP on 127.0.0.1: they join
 * through seed nodes, agree on the members and the leader, then one leaves gracefully.
 * `npx tsx examples/cluster-three-nodes.ts [--base-port 25520]`
 */
import { ActorSystem } from "../src/index.js";
import { Cluster, Remoting } from "../src/internal.js";
import { createNodeRuntime, TcpTransport } from "../src/runtime/node/index.js";

const i = process.argv.indexOf("--base-port");
const basePort = i >= 0 ? Number(process.argv[i + 1]) : 25520;
const ports = [basePort, basePort + 1, basePort + 2];
const seedNodes = ports.map((p) => `127.0.0.1:${p}`);
const fast = {
  periodicTasksInitialDelayMs: 0,
  gossipIntervalMs: 200,
  leaderActionsIntervalMs: 200,
  unreachableNodesReaperIntervalMs: 200,
  heartbeatIntervalMs: 200,
  seedNodeTimeoutMs: 1_000,
};

const nodes = await Promise.all(
  ports.map(async (port) => {
    const system = ActorSystem.create({
      name: "demo",
      runtime: createNodeRuntime({ logLevel: "warn" }),
    });
    const remoting = await Remoting.start(system, {
      transport: new TcpTransport(),
      settings: { host: "127.0.0.1", port },
    });
    const cluster = Cluster.start(system, remoting, { seedNodes, settings: fast });
    cluster.subscribe((e) => {
      if ("member" in e) console.log(`[${port}] ${e.type} ${e.member.uniqueAddress.address.port}`);
    });
    return { port, system, cluster };
  }),
);

const allUp = () =>
  nodes.every((n) => {
    const s = n.cluster.state;
    return s.members.length === 3 && s.members.every((m) => m.status === "up") && s.convergence;
  });
while (!allUp()) await new Promise((r) => setTimeout(r, 50));
console.log(`all three Up; leader ${nodes[0]?.cluster.state.leader?.address.port} on every node`);

const leaving = nodes[2];
if (leaving === undefined) throw new Error("unreachable");
leaving.cluster.leave(`127.0.0.1:${leaving.port}`);
await leaving.system.whenTerminated;
while (!nodes.slice(0, 2).every((n) => n.cluster.state.members.length === 2))
  await new Promise((r) => setTimeout(r, 50));
console.log(
  `node ${leaving.port} left; members now ${nodes[0]?.cluster.state.members.map((m) => m.uniqueAddress.address.port).join(", ")}`,
);
await Promise.all(nodes.map((n) => n.system.terminate()));
