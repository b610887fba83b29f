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
 * - `block {ms}` -> replies, then blocks its own event loop for ms (a long GC, a
 *   synchronous burst);
 * - `burn {ms, dutyPct}` -> keeps the CPU busy dutyPct % of every 100 ms for ms (load);
 * - `usage` -> `{ cpuUserMs, cpuSystemMs, rssBytes, heapUsedBytes, uptimeMs }`;
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
  /** "default": shardkit's default timings instead of the fast ones below. */
  readonly profile?: "fast" | "default";
  /** Overrides on top of FAST_CLUSTER_SETTINGS (or the defaults). */
  readonly settings?: ClusterOptions["settings"];
  /** Overrides on top of FAST_FAILURE_DETECTOR. */
  readonly failureDetector?: ClusterOptions["failureDetector"];
  /** Overrides of the downing settings (default: stableAfterMs SBR_STABLE_AFTER_MS). */
  readonly downing?: ClusterOptions["downing"];
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

const defaults = config.profile === "default";
const cluster = Cluster.start(system, remoting, {
  seedNodes: config.seedNodes,
  settings: { ...(defaults ? {} : FAST_CLUSTER_SETTINGS), ...config.settings },
  failureDetector: { ...(defaults ? {} : FAST_FAILURE_DETECTOR), ...config.failureDetector },
  downing: { ...(defaults ? {} : { stableAfterMs: SBR_STABLE_AFTER_MS }), ...config.downing },
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
    case "block": {
      const ms = Number(c.ms);
      setTimeout(() => {
        const until = Date.now() + ms;
        while (Date.now() < until) {
          // a blocked event loop
        }
      }, 10);
      return {};
    }
    case "burn": {
      const end = Date.now() + Number(c.ms);
      const busyMs = Number(c.dutyPct);
      const timer = setInterval(() => {
        const until = Date.now() + busyMs;
        while (Date.now() < until) {
          // load
        }
        if (Date.now() > end) clearInterval(timer);
      }, 100);
      return {};
    }
    case "usage": {
      const cpu = process.cpuUsage();
      const mem = process.memoryUsage();
      return {
        cpuUserMs: cpu.user / 1000,
        cpuSystemMs: cpu.system / 1000,
        rssBytes: mem.rss,
        heapUsedBytes: mem.heapUsed,
        uptimeMs: process.uptime() * 1000,
      };
    }
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
