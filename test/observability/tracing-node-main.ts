/**
 * One member of the real-process tracing test (./tracing-real.test.ts), as a child
 * process: the in-memory OpenTelemetry tracer (test/support/otel-memory.ts) registered
 * globally, a ClusterNode with `tracing: { enabled: true }`, and the entity type "Relay"
 * (hosted by members with the role "worker"; the client has none, so its region is a
 * proxy). A Relay entity answers `ping` with `pong:<id>`, and `relay` by asking another
 * entity and answering with its reply.
 *
 * argv[2] is a JSON TracingNodeConfig. JSON lines on stdout; commands on stdin
 * (`{ id, cmd, ... }`, answered by `{"event":"reply","id":...,"ok":true,...}`):
 * - `regions` -> `{ regions }` registered at the coordinator;
 * - `ping {entityId}` -> `{ reply }` (no span active: untraced);
 * - `home {entityId}` -> `{ region }` where the entity lives;
 * - `traced-relay {front, back}` -> `{ reply, traceId }`: inside a root span "client",
 *   asks `front` to relay to `back`;
 * - `spans` -> `{ spans }`: every span this process finished (and forgets them).
 * Prints `{"event":"up"}` once the member is Up. Exits when stdin closes.
 */
import { createInterface } from "node:readline";
import { trace } from "@opentelemetry/api";
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/index.js";
import { FAST_CLUSTER_SETTINGS, FAST_SHARDING_SETTINGS } from "../cluster-real/fast-settings.js";
import { installMemoryTracing } from "../support/otel-memory.js";

export interface TracingNodeConfig {
  readonly port: number;
  readonly seedNodes: readonly string[];
  readonly worker: boolean;
}

type Msg =
  | { type: "ping"; replyTo: ActorRef<string> }
  | { type: "relay"; to: string; replyTo: ActorRef<string> };
const Relay = EntityTypeKey<Msg>("Relay");
const ASK_TIMEOUT_MS = 10_000;

const config = JSON.parse(process.argv[2] ?? "{}") as TracingNodeConfig;
const { exporter } = installMemoryTracing();

function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

const node = await ClusterNode.start({
  systemName: "tracing",
  host: "127.0.0.1",
  port: config.port,
  seedNodes: config.seedNodes,
  roles: config.worker ? ["worker"] : [],
  settings: FAST_CLUSTER_SETTINGS,
  handleSignals: false,
  tracing: { enabled: true },
});
const sharding = ClusterSharding.get(node);
sharding.init({
  typeKey: Relay,
  role: "worker",
  numberOfShards: 20,
  settings: FAST_SHARDING_SETTINGS,
  createBehavior: ({ entityId }) =>
    Behaviors.receiveMessage<Msg>((m) => {
      if (m.type === "ping") m.replyTo.tell(`pong:${entityId}`);
      else
        void ask(m.to).then(
          (r) => m.replyTo.tell(`relayed:${r}`),
          (e: unknown) => m.replyTo.tell(`failed:${String(e)}`),
        );
    }),
});

function ask(entityId: string): Promise<string> {
  return sharding
    .entityRefFor(Relay, entityId)
    .ask((replyTo: ActorRef<string>) => ({ type: "ping", replyTo }), { timeoutMs: ASK_TIMEOUT_MS });
}

node.cluster.registerOnMemberUp(() => emit({ event: "up" }));

async function handle(c: Record<string, unknown>): Promise<Record<string, unknown>> {
  switch (c.cmd) {
    case "regions":
      return { regions: await sharding.getCurrentRegions(Relay) };
    case "ping":
      return { reply: await ask(String(c.entityId)) };
    case "home":
      return {
        region: (await sharding.getEntityLocation(Relay, String(c.entityId))).region ?? null,
      };
    case "traced-relay":
      return await trace.getTracer("test").startActiveSpan("client", async (span) => {
        try {
          const reply = await sharding
            .entityRefFor(Relay, String(c.front))
            .ask((replyTo: ActorRef<string>) => ({ type: "relay", to: String(c.back), replyTo }), {
              timeoutMs: ASK_TIMEOUT_MS,
            });
          return { reply, traceId: span.spanContext().traceId };
        } finally {
          span.end();
        }
      });
    case "spans": {
      const spans = [...exporter.spans];
      exporter.reset();
      return { spans };
    }
    default:
      throw new Error(`unknown command ${String(c.cmd)}`);
  }
}

createInterface({ input: process.stdin })
  .on("line", (line) => {
    const c = JSON.parse(line) as Record<string, unknown>;
    handle(c).then(
      (r) => emit({ event: "reply", id: c.id, ok: true, ...r }),
      (e: unknown) => emit({ event: "reply", id: c.id, ok: false, error: String(e) }),
    );
  })
  .on("close", () => {
    process.exit(0);
  });
