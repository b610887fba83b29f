/**
 * shardkit logging through pino (docs/observability.md, "Logs"): a one-member cluster
 * whose log lines go to pino as JSON, each with the member's address.
 * Run: `npx tsx examples/pino-logging.ts [port]` (test/examples/pino-logging.test.ts runs it).
 */
import { pino } from "pino";
import { ClusterNode } from "../src/index.js";
import { createNodeRuntime, pinoLogger } from "../src/runtime/node/index.js";

/** A runtime whose logger is `pino` (level from SHARDKIT_LOG_LEVEL, default info). */
export function pinoRuntime(destination?: NodeJS.WritableStream) {
  const log = pino(
    { level: process.env.SHARDKIT_LOG_LEVEL ?? "info", base: { app: "pino-example" } },
    destination ?? process.stdout,
  );
  return createNodeRuntime({ logger: pinoLogger(log) });
}

/** Starts one member logging through pino; resolves once it is Up. */
export async function startWithPino(port: number, destination?: NodeJS.WritableStream) {
  const node = await ClusterNode.start({
    systemName: "pino-example",
    port,
    // port 0 (any free port): join itself once the port is known
    ...(port === 0 ? {} : { seedNodes: [`127.0.0.1:${port}`] }),
    settings: { periodicTasksInitialDelayMs: 0, seedNodeTimeoutMs: 500 },
    runtime: pinoRuntime(destination),
    handleSignals: false,
  });
  if (port === 0) node.cluster.join(node.address.slice(node.address.indexOf("@") + 1));
  while (node.cluster.selfMember?.status !== "up") await new Promise((r) => setTimeout(r, 20));
  return node;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const node = await startWithPino(Number(process.argv[2] ?? 2552));
  node.system.log.info("example member is up", { example: "pino" });
  await node.shutdown();
}
