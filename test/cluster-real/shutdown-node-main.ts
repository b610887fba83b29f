/**
 * A cluster member as a child process, for test/cluster-real/shutdown.test.ts (driven
 * through the JSON-lines harness in test/support/child-process.ts).
 *
 * argv[2] is a JSON ShutdownNodeConfig. The node starts remoting on 127.0.0.1:<port>,
 * joins the cluster through `seedNodes`, wires a CoordinatedShutdown to the Cluster and
 * the ActorSystem (installClusterShutdown) and to SIGTERM/SIGINT (installSignalHandlers:
 * the process exits 0 once the shutdown is over). It prints:
 * - `{"event":"ready","hostPort":...}` once remoting listens;
 * - `{"event":"member","type":<cluster event>,"node":"host:port","status":...}` for every
 *   member event it sees (initial state included);
 * - `{"event":"phase","phase":...}` when a shutdown phase runs (a marker task per phase);
 * - `{"event":"shutdown-done","reason":...}` after the last phase, just before exiting.
 * Commands (one JSON line each, with `id`): `state` -> members with their status.
 * Logs go to stderr. The node exits when stdin closes (the test runner is gone).
 */

import { createInterface } from "node:readline";
import { ActorSystem } from "../../src/actor/index.js";
import { Cluster } from "../../src/cluster/membership/cluster.js";
import { Remoting } from "../../src/cluster/remoting/index.js";
import { CoordinatedShutdown, installClusterShutdown } from "../../src/cluster/shutdown/index.js";
import type { LogLevel } from "../../src/ports/logger.js";
import {
  createNodeRuntime,
  installSignalHandlers,
  nodeCrypto,
  TcpTransport,
} from "../../src/runtime/node/index.js";
import { FAST_CLUSTER_SETTINGS } from "./fast-settings.js";

/** Configuration of one child node (argv[2], JSON). */
export interface ShutdownNodeConfig {
  readonly port: number;
  readonly seedNodes: readonly string[];
  readonly logLevel?: LogLevel;
}

const config = JSON.parse(process.argv[2] ?? "{}") as ShutdownNodeConfig;

function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

const runtime = createNodeRuntime({ logLevel: config.logLevel ?? "info" });
const system = ActorSystem.create({ name: "sk", runtime });
const remoting = await Remoting.start(system, {
  transport: new TcpTransport({ logger: runtime.logger.child({ component: "transport" }) }),
  crypto: nodeCrypto,
  settings: { host: "127.0.0.1", port: config.port },
});
const cluster = Cluster.start(system, remoting, {
  seedNodes: config.seedNodes,
  settings: FAST_CLUSTER_SETTINGS,
  // The coordinated shutdown reacts to removal (installClusterShutdown); the default
  // handler would terminate the actor system at once, skipping the phases.
  onSelfRemoved: () => {},
});

const shutdown = new CoordinatedShutdown({ runtime });
installClusterShutdown(shutdown, cluster, system);
for (const phase of shutdown.phaseNames)
  shutdown.addTask(phase, "test-marker", () => emit({ event: "phase", phase }));

cluster.subscribe(
  (e) => {
    if ("member" in e)
      emit({
        event: "member",
        type: e.type,
        node: `${e.member.uniqueAddress.address.host}:${e.member.uniqueAddress.address.port}`,
        status: e.member.status,
      });
  },
  { initialState: true },
);

installSignalHandlers(
  async (reason) => {
    const done = await shutdown.run(reason);
    await remoting.shutdown();
    emit({ event: "shutdown-done", reason: done });
    return done;
  },
  { logger: runtime.logger },
);

createInterface({ input: process.stdin })
  .on("line", (line) => {
    const c = JSON.parse(line) as { cmd: string; id: number };
    if (c.cmd === "state")
      emit({
        event: "reply",
        id: c.id,
        ok: true,
        members: cluster.state.members.map((m) => ({
          node: `${m.uniqueAddress.address.host}:${m.uniqueAddress.address.port}`,
          status: m.status,
        })),
      });
    else emit({ event: "reply", id: c.id, ok: false, error: `unknown command ${c.cmd}` });
  })
  .on("close", () => process.exit(0));

emit({ event: "ready", hostPort: remoting.node.hostPort, pid: process.pid });
