/**
 * A cluster member with a Distributed Data replicator, as a child process (JSON lines, see
 * cluster-node-main.ts for the protocol). argv[2]: DDataNodeConfig. Commands:
 * - `state` (as cluster-node-main.ts);
 * - `load {count, intervalMs, prefix}`: starts `count` local updates, one every intervalMs,
 *   each adding `<prefix><i>` to the ORSet "set" and incrementing the PNCounter "counter";
 * - `load-status` -> `{ done, sum }` (updates made, total increments);
 * - `values` -> `{ set: sorted elements, counter }` (local replica);
 * - `write-majority {element}` -> `{ us }` (latency of one majority write, µs);
 * - `exit`.
 * A durable store that cannot be read makes the process print the error and exit 3.
 */
import { ActorSystem } from "../../src/actor/index.js";
import { ddataKey, MAJORITY, ORSet, PNCounter, Replicator } from "../../src/api/ddata.js";
import { Cluster } from "../../src/cluster/membership/index.js";
import { Remoting } from "../../src/cluster/remoting/index.js";
import { SqliteDDataStore } from "../../src/persistence/sqlite/index.js";
import { createNodeRuntime, nodeCrypto, TcpTransport } from "../../src/runtime/node/index.js";
import { type Command, clusterStateReply, emit, serveCommands } from "./child-io.js";
import {
  FAST_CLUSTER_SETTINGS,
  FAST_FAILURE_DETECTOR,
  SBR_STABLE_AFTER_MS,
} from "./fast-settings.js";

export interface DDataNodeConfig {
  readonly port?: number;
  readonly seedNodes: readonly string[];
  /** SQLite file for durable keys (all keys durable); none: no durable keys. */
  readonly durablePath?: string;
}

const config = JSON.parse(process.argv[2] ?? "{}") as DDataNodeConfig;
const runtime = createNodeRuntime({ logLevel: "warn" });
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
  settings: FAST_CLUSTER_SETTINGS,
  failureDetector: FAST_FAILURE_DETECTOR,
  downing: { stableAfterMs: SBR_STABLE_AFTER_MS },
  onSelfRemoved: () => setImmediate(() => void shutdown(0)),
});

let replicator: Replicator;
try {
  const durable =
    config.durablePath === undefined
      ? {}
      : { durableKeys: ["*"], durableStore: new SqliteDDataStore({ path: config.durablePath }) };
  replicator = Replicator.start(
    { system, remoting, cluster },
    {
      settings: { gossipIntervalMs: 300, deltaPropagationIntervalMs: 50, pruningIntervalMs: 1_000 },
      ...durable,
    },
  );
} catch (e) {
  process.stderr.write(`ddata start failed: ${(e as Error).message}\n`);
  emit({ event: "start-failed", error: (e as Error).message });
  await shutdown(3);
  throw e;
}

const SET = ddataKey<ORSet<string>>("set");
const COUNTER = ddataKey<PNCounter>("counter");
let done = 0;
let sum = 0;

async function handle(c: Command): Promise<Record<string, unknown>> {
  const r = replicator;
  switch (c.cmd) {
    case "state":
      return clusterStateReply(cluster);
    case "load": {
      const count = Number(c.count);
      const prefix = String(c.prefix);
      let i = 0;
      const timer = setInterval(() => {
        if (i >= count) {
          clearInterval(timer);
          return;
        }
        const n = 1 + (i % 3);
        void r.update(SET, ORSet.empty<string>(), (s) => s.add(r.selfNode, `${prefix}${i}`));
        void r.update(COUNTER, PNCounter.empty, (x) => x.increment(r.selfNode, n));
        done++;
        sum += n;
        i++;
      }, Number(c.intervalMs));
      return {};
    }
    case "load-status":
      return { done, sum };
    case "values": {
      const s = await r.get(SET);
      const x = await r.get(COUNTER);
      return { set: [...(s?.elements ?? [])].sort(), counter: x?.value ?? 0 };
    }
    case "write-majority": {
      const t0 = process.hrtime.bigint();
      await r.update(
        SET,
        ORSet.empty<string>(),
        (s) => s.add(r.selfNode, String(c.element)),
        MAJORITY,
        {
          timeoutMs: 3_000,
        },
      );
      return { us: Number(process.hrtime.bigint() - t0) / 1_000 };
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
