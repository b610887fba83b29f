/**
 * A cluster member running a cluster singleton, as a child process, for
 * test/cluster-real/singleton.test.ts (driven through the JSON-lines harness in
 * test/support/child-process.ts).
 *
 * argv[2] is a JSON SingletonNodeConfig. The node is a real `ClusterNode` (TCP on
 * 127.0.0.1:<port>, FAST timings from fast-settings.ts, SIGTERM/SIGINT run the
 * coordinated shutdown and exit 0) with `ClusterSingleton.init` of the singleton "probe"
 * (stop message `{type:"stop"}`). Every line carries `t` (epoch ms, the shared clock of
 * the processes on this machine). It prints:
 * - `{"event":"ready","hostPort":...,"pid":...}` once the node has started;
 * - `{"event":"instance-started","node":<host:port>}` when the singleton instance starts
 *   here, `{"event":"instance-stopped","node":...}` on its PostStop;
 * - `{"event":"member","type":...,"member":<host:port>,"status":...}` for member events;
 * - `{"event":"shutdown-done","reason":...}` after `shutdown`, just before exiting 0;
 * - `{"event":"dead-letter","q":...,"recipient":...,"reason":...}` for every `where`
 *   question (or its answer) that became a dead letter here: delivery is at most once,
 *   and this is how the test tells a question lost at a stopping instance (documented,
 *   docs/singleton.md "The proxy") from one lost silently.
 *
 * Commands (one JSON line each, with `id`; one `{"event":"reply","id":...}` line each):
 * - `state` -> `{ members: [{ hostPort, status, upNumber }], convergence }`;
 * - `where {q, timeoutMs}` -> `{ node }`: asks the singleton, through this node's proxy,
 *   which node it runs on; `q` names the question in dead-letter lines (ok: false with
 *   the error after timeoutMs);
 * - `shutdown` -> replies at once, then `node.shutdown("user")`, then exits 0;
 * - `exit` -> terminates the actor system and exits 0.
 * The node also exits when stdin closes (the test runner is gone). Logs go to stderr.
 */
import { type ActorRef, ask, Behaviors } from "../../src/actor/index.js";
import { ClusterNode } from "../../src/api/index.js";
import { ClusterSingleton } from "../../src/cluster/singleton/index.js";
import { type Command, exitAfter, serveCommands } from "./child-io.js";
import {
  FAST_CLUSTER_SETTINGS,
  FAST_FAILURE_DETECTOR,
  SBR_STABLE_AFTER_MS,
} from "./fast-settings.js";

/** Configuration of one child node (argv[2], JSON). */
export interface SingletonNodeConfig {
  readonly port: number;
  /** Seed nodes as "host:port". */
  readonly seedNodes: readonly string[];
}

/** Messages of the singleton "probe". */
export type ProbeMsg =
  | { readonly type: "where"; readonly q: string; readonly replyTo: ActorRef<string> }
  | StopMsg;
type StopMsg = { readonly type: "stop" };

const config = JSON.parse(process.argv[2] ?? "{}") as SingletonNodeConfig;
const selfHostPort = `127.0.0.1:${config.port}`;

function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...event, t: Date.now() })}\n`);
}

const node = await ClusterNode.start({
  systemName: "sk",
  host: "127.0.0.1",
  port: config.port,
  seedNodes: config.seedNodes,
  settings: FAST_CLUSTER_SETTINGS,
  failureDetector: FAST_FAILURE_DETECTOR,
  downing: { stableAfterMs: SBR_STABLE_AFTER_MS },
  shutdown: { phases: { "cluster-exiting": { timeoutMs: 5_000 } } },
});

node.cluster.subscribe(
  (e) => {
    if ("member" in e)
      emit({
        event: "member",
        type: e.type,
        member: `${e.member.uniqueAddress.address.host}:${e.member.uniqueAddress.address.port}`,
        status: e.member.status,
      });
  },
  { initialState: true },
);

node.system.eventStream.subscribe("DeadLetter", (d) => {
  const m = d.message as { type?: unknown; q?: unknown } | null;
  if (typeof m === "object" && m !== null && m.type === "where")
    emit({ event: "dead-letter", q: m.q, recipient: d.recipient, reason: d.reason });
});

const probe = Behaviors.setup<ProbeMsg>(() => {
  emit({ event: "instance-started", node: selfHostPort });
  return Behaviors.receive<ProbeMsg>(
    (_ctx, m) => {
      if (m.type === "where") m.replyTo.tell(selfHostPort);
      else return Behaviors.stopped;
      return undefined;
    },
    (_ctx, signal) => {
      if (signal.type === "PostStop") emit({ event: "instance-stopped", node: selfHostPort });
      return undefined;
    },
  );
});

const proxy = ClusterSingleton.init<ProbeMsg>(node, {
  name: "probe",
  behavior: probe,
  stopMessage: { type: "stop" },
});

async function handle(c: Command): Promise<Record<string, unknown>> {
  switch (c.cmd) {
    case "state": {
      const s = node.cluster.state;
      return {
        members: s.members.map((m) => ({
          hostPort: `${m.uniqueAddress.address.host}:${m.uniqueAddress.address.port}`,
          status: m.status,
          upNumber: m.upNumber,
        })),
        convergence: s.convergence,
      };
    }
    case "where": {
      const sentAt = Date.now();
      const answer = await ask(
        proxy,
        (replyTo: ActorRef<string>) => ({ type: "where" as const, q: String(c.q), replyTo }),
        { timeoutMs: Number(c.timeoutMs ?? 5_000) },
      );
      return { node: answer, sentAt };
    }
    case "shutdown":
      exitAfter(async () => {
        const reason = await node.shutdown("user");
        emit({ event: "shutdown-done", reason });
      });
      return {};
    case "exit":
      exitAfter(() => node.system.terminate());
      return {};
    default:
      throw new Error(`unknown command ${c.cmd}`);
  }
}

serveCommands(handle, () => process.exit(0));

emit({ event: "ready", hostPort: selfHostPort, address: node.address, pid: process.pid });
