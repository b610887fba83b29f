/**
 * Tracing across real processes (docs/observability.md, "Tracing"): three members on
 * 127.0.0.1 (./tracing-node-main.ts), each with `tracing: { enabled: true }` and an
 * in-memory OpenTelemetry tracer whose finished spans it hands back on request. A client
 * member (proxy only) asks entity `front` (on member A) to relay to entity `back` (on
 * member B), inside a root span. The spans of the three processes form one trace: one
 * trace id, one root ("client"), every other span's parent among them, and the two
 * remote hops (client -> A, A -> B) are linked through the forward spans.
 */
import { describe, expect, it } from "vitest";
import { freePorts } from "../cluster-real/cluster-node.js";
import { type Child, request, spawnNode, waitFor } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import { connectedTraceProblem, type FinishedSpan } from "../support/otel-memory.js";
import type { TracingNodeConfig } from "./tracing-node-main.js";

installChildTeardown("perFile");

const START_TIMEOUT_MS = 40_000;
const COMMAND_TIMEOUT_MS = 20_000;
/** Candidate entity ids tried to find one living on each host. */
const CANDIDATES = 60;

function start(name: string, port: number, seeds: readonly string[], worker: boolean): Child {
  const config: TracingNodeConfig = { port, seedNodes: seeds, worker };
  return spawnNode("test/observability/tracing-node-main.ts", [JSON.stringify(config)], {
    name,
    env: { SHARDKIT_LOG_LEVEL: "warn" },
  });
}

const cmd = (c: Child, command: Record<string, unknown>) => request(c, command, COMMAND_TIMEOUT_MS);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function spansOf(c: Child): Promise<FinishedSpan[]> {
  return (await cmd(c, { cmd: "spans" })).spans as FinishedSpan[];
}

describe("tracing across 3 real processes", () => {
  it("one ask, client proxy -> entity on A -> entity on B, is one connected trace", {
    timeout: 120_000,
  }, async () => {
    const [pa, pb, pc] = (await freePorts(3)) as [number, number, number];
    const seeds = [`127.0.0.1:${pa}`, `127.0.0.1:${pb}`];
    const a = start("A", pa, seeds, true);
    const b = start("B", pb, seeds, true);
    const client = start("client", pc, seeds, false);
    await Promise.all(
      [a, b, client].map((c) => waitFor(c, (e) => e.event === "up", START_TIMEOUT_MS, "Up")),
    );
    const t0 = Date.now();
    while (((await cmd(client, { cmd: "regions" })).regions as string[]).length < 2) {
      if (Date.now() - t0 > START_TIMEOUT_MS) throw new Error("regions of A and B not registered");
      await sleep(200);
    }
    // an entity on A and one on B (untraced pings allocate their shards)
    let front: string | undefined;
    let back: string | undefined;
    for (let i = 0; i < CANDIDATES && (front === undefined || back === undefined); i++) {
      const id = `r${i}`;
      expect((await cmd(client, { cmd: "ping", entityId: id })).reply).toBe(`pong:${id}`);
      const region = String((await cmd(client, { cmd: "home", entityId: id })).region);
      if (region.includes(`:${pa}`)) front ??= id;
      else if (region.includes(`:${pb}`)) back ??= id;
    }
    expect(front, "an entity on A").toBeDefined();
    expect(back, "an entity on B").toBeDefined();
    // untraced traffic made no spans anywhere
    for (const c of [a, b, client]) expect(await spansOf(c)).toEqual([]);

    const answer = await cmd(client, { cmd: "traced-relay", front, back });
    expect(answer.reply).toBe(`relayed:pong:${back}`);
    const [onA, onB, onClient] = await Promise.all([a, b, client].map(spansOf));
    const all = [...(onA ?? []), ...(onB ?? []), ...(onClient ?? [])];
    expect(connectedTraceProblem(all)).toBeUndefined();
    expect(all.every((s) => s.traceId === answer.traceId)).toBe(true);
    const names = (spans: readonly FinishedSpan[] | undefined) =>
      (spans ?? []).map((s) => s.name).sort();
    expect(names(onClient)).toEqual([
      "client",
      "shardkit.entity.ask",
      "shardkit.region.forward",
      "shardkit.region.route",
    ]);
    expect(names(onA)).toEqual([
      "shardkit.entity.ask",
      "shardkit.entity.handle",
      "shardkit.region.forward",
      "shardkit.region.route",
      "shardkit.region.route",
      "shardkit.shard.deliver",
    ]);
    expect(names(onB)).toEqual([
      "shardkit.entity.handle",
      "shardkit.region.route",
      "shardkit.shard.deliver",
    ]);
    // the remote hops: each receiving region's span is a child of the sender's forward
    const forwardOf = (spans: readonly FinishedSpan[] | undefined) =>
      (spans ?? []).find((s) => s.name === "shardkit.region.forward") as FinishedSpan;
    const receivedFrom = (spans: readonly FinishedSpan[] | undefined) =>
      (spans ?? []).filter((s) => s.name === "shardkit.region.route" && s.parentIsRemote);
    expect(receivedFrom(onA).map((s) => s.parentSpanId)).toEqual([forwardOf(onClient).spanId]);
    expect(receivedFrom(onB).map((s) => s.parentSpanId)).toEqual([forwardOf(onA).spanId]);
    // A's nested ask is a child of front's handler span
    const frontHandle = (onA ?? []).find(
      (s) => s.name === "shardkit.entity.handle",
    ) as FinishedSpan;
    const nestedAsk = (onA ?? []).find((s) => s.name === "shardkit.entity.ask") as FinishedSpan;
    expect(nestedAsk.parentSpanId).toBe(frontHandle.spanId);
    expect(nestedAsk.attributes["shardkit.entity.id"]).toBe(back);
  });
});
