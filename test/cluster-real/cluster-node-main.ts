/**
 * A cluster member as a child process, driven by test/cluster-real/*.test.ts through the
 * JSON-lines harness (test/support/child-process.ts).
 *
 * argv[2] is a JSON ClusterNodeConfig. The node starts an ActorSystem, remoting on
 * 127.0.0.1 (port 0 unless given; seed nodes need fixed ports) and a Cluster with the
 * given seed nodes and FAST timings, then prints
 * `{"event":"ready","hostPort":...,"uid":...,"pid":...}`.
 *
 * Every cluster event becomes one `{"event":"cluster","type":...,"t":<epoch ms>,...}`
 * line: member events carry `member` (host:port) and `status` (plus `previousStatus` for
 * member-removed), leader changes carry `leader` (host:port or null).
 *
 * Commands (one JSON line each, with an `id`; exactly one `{"event":"reply",...}` line):
 * - `state` -> `{ self, members: [{ hostPort, status, upNumber }], unreachable, leader,
 *   convergence }`;
 * - `leave {address}` / `down {address}` (address = "host:port");
 * - `stats` -> `{ stats }` (remoting counters);
 * - `exit` -> terminates the system and exits 0.
 *
 * When this member is removed or downed (onSelfRemoved) it prints
 * `{"event":"self-removed","reason":...}`, terminates the system and exits with code 0.
 * It also exits when stdin closes (the test runner is gone). Logs go to stderr.
 */

import { ActorSystem } from "../../src/actor/index.js";
import { Cluster, type ClusterOptions } from "../../src/cluster/membership/index.js";
import { Remoting } from "../../src/cluster/remoting/index.js";
import type { LogLevel } from "../../src/ports/logger.js";
import { createNodeRuntime, nodeCrypto, TcpTransport } from "../../src/runtime/node/index.js";
import {
  type Command,
  clusterStateReply,
  emit,
  emitClusterEvents,
  serveCommands,
} from "./child-io.js";
import {
  FAST_CLUSTER_SETTINGS,
  FAST_FAILURE_DETECTOR,
  SBR_STABLE_AFTER_MS,
} from "./fast-settings.js";

/** Configuration of one child member (argv[2], JSON). */
export interface ClusterNodeConfig {
  /** Listening port; default 0 (any). */
  readonly port?: number;
  /** Seed nodes as "host:port". */
  readonly seedNodes: readonly string[];
  /** Overrides on top of FAST_CLUSTER_SETTINGS. */
  readonly settings?: ClusterOptions["settings"];
  readonly logLevel?: LogLevel;
}

const config = JSON.parse(process.argv[2] ?? "{}") as ClusterNodeConfig;

const runtime = createNodeRuntime({ logLevel: config.logLevel ?? "warn" });
const system = ActorSystem.create({ name: "sk", runtime });
const remoting = await Remoting.start(system, {
  transport: new TcpTransport({ logger: runtime.logger.child({ component: "transport" }) }),
  crypto: nodeCrypto,
  settings: { host: "127.0.0.1", port: config.port ?? 0 },
});

let stopping = false;
async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await system.terminate();
  await remoting.shutdown();
  process.exit(code);
}

const cluster = Cluster.start(system, remoting, {
  seedNodes: config.seedNodes,
  settings: { ...FAST_CLUSTER_SETTINGS, ...config.settings },
  failureDetector: FAST_FAILURE_DETECTOR,
  downing: { stableAfterMs: SBR_STABLE_AFTER_MS },
  onSelfRemoved: (reason) => {
    emit({ event: "self-removed", reason, t: Date.now() });
    setImmediate(() => void shutdown(0));
  },
});

emitClusterEvents(cluster);

async function handle(c: Command): Promise<Record<string, unknown>> {
  switch (c.cmd) {
    case "state":
      return clusterStateReply(cluster);
    case "leave":
      cluster.leave(String(c.address));
      return {};
    case "down":
      cluster.down(String(c.address));
      return {};
    case "stats":
      return { stats: { ...remoting.stats } };
    case "exit":
      setImmediate(() => void shutdown(0));
      return {};
    default:
      throw new Error(`unknown command ${c.cmd}`);
  }
}

serveCommands(handle, () => void shutdown(0));

emit({
  event: "ready",
  hostPort: `127.0.0.1:${remoting.node.port}`,
  port: remoting.node.port,
  uid: String(remoting.localUid),
  pid: process.pid,
});
