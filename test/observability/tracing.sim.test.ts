/**
 * Tracing (docs/observability.md, "Tracing") on simulated clusters, with an in-memory
 * OpenTelemetry tracer (test/support/otel-memory.ts): span names, kinds, attributes and
 * parent links of an ask on the local path and across a remote hop; a handler's nested
 * send and journal write are children of its span; no span at all without an active
 * one; and, byte for byte, the same traffic with tracing enabled but no active span as
 * with tracing off.
 */
import { SpanKind, trace } from "@opentelemetry/api";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type ActorRef,
  Behaviors,
  Effect,
  type EventCodec,
  EventSourcedBehavior,
} from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { loadTracing, type TracingOptions } from "../../src/api/otel-tracing.js";
import { SpanNames } from "../../src/cluster/sharding/traced-message.js";
import { traceJournal } from "../../src/observability/index.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import type { Connection, Transport } from "../../src/ports/transport.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { FAST } from "../cluster/sim-cluster.js";
import {
  connectedTraceProblem,
  type FinishedSpan,
  installMemoryTracing,
  type MemorySpanExporter,
} from "../support/otel-memory.js";

type Msg =
  | { type: "ping"; replyTo: ActorRef<string> }
  | { type: "relay"; to: string; replyTo: ActorRef<string> }
  | { type: "write"; replyTo: ActorRef<string> };
const Key = EntityTypeKey<Msg>("Traced");
type LedgerMsg = { type: "add"; amount: number; replyTo: ActorRef<number> };
const Ledger = EntityTypeKey<LedgerMsg>("Ledger");
const Eff = Effect.of<number, number>();
const Quiet = EntityTypeKey<Msg>("Quiet");
const numberCodec: EventCodec<number> = {
  encode: (n) => ({ serializerId: 7, bytes: new TextEncoder().encode(String(n)) }),
  decode: (_id, bytes) => Number(new TextDecoder().decode(bytes)),
};
const ASK_TIMEOUT_MS = 10_000;

let exporter: MemorySpanExporter;
let uninstall: () => void;
// the first dynamic import of @opentelemetry/api takes real time: done once up front
beforeAll(async () => {
  expect(await loadTracing({ enabled: true })).toBeDefined();
});
beforeEach(() => {
  ({ exporter, uninstall } = installMemoryTracing());
});
afterEach(() => uninstall());

/** Counts the bytes every connection of `t` sends. */
function counting(t: Transport, sent: { bytes: number }): Transport {
  const wrap = (c: Connection): Connection =>
    new Proxy(c, {
      get(target, key) {
        if (key === "send")
          return (bytes: Uint8Array) => {
            sent.bytes += bytes.length;
            return target.send(bytes);
          };
        const v = Reflect.get(target, key) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  return {
    ...(t.protection === undefined ? {} : { protection: t.protection }),
    listen: (address, onConnection) => t.listen(address, (c) => onConnection(wrap(c))),
    connect: async (address, options) => wrap(await t.connect(address, options)),
    close: () => t.close(),
  };
}

interface SimClusterRun {
  readonly world: SimWorld;
  readonly nodes: Map<string, ClusterNode>;
  readonly sent: { bytes: number };
  readonly journal: MemoryJournal;
}

async function startCluster(
  names: readonly string[],
  tracing: TracingOptions | undefined,
  seed = 7,
): Promise<SimClusterRun> {
  const world = new SimWorld({ seed });
  const network = new SimNetwork(world);
  const seeds = names.map((n) => `${n}:2552`);
  const nodes = new Map<string, ClusterNode>();
  const sent = { bytes: 0 };
  const journal = new MemoryJournal();
  const starting = names.map((name) =>
    ClusterNode.start({
      systemName: "trace",
      host: name,
      port: 2552,
      seedNodes: seeds,
      settings: FAST,
      runtime: world.createRuntime(name),
      transport: counting(network.transportFor(name), sent),
      ...(tracing === undefined ? {} : { tracing }),
    }).then((n) => {
      const sharding = ClusterSharding.get(n);
      const traced = traceJournal(journal, n, "test");
      let seqNr = 0;
      sharding.init({
        typeKey: Key,
        numberOfShards: 8,
        createBehavior: ({ entityId }) =>
          Behaviors.receiveMessage<Msg>((m) => {
            if (m.type === "ping") m.replyTo.tell(`pong:${entityId}`);
            else if (m.type === "write")
              void traced
                .append(entityId, ++seqNr, [
                  { serializerId: 1, bytes: new Uint8Array(1), timestampMs: 0 },
                ])
                .then(() => m.replyTo.tell("written"));
            else
              void sharding
                .entityRefFor(Key, m.to)
                .ask((replyTo: ActorRef<string>) => ({ type: "ping", replyTo }), {
                  timeoutMs: ASK_TIMEOUT_MS,
                })
                .then((r) => m.replyTo.tell(`relayed:${r}`));
          }),
      });
      sharding.init({
        typeKey: Ledger,
        numberOfShards: 8,
        createBehavior: ({ entityId }) =>
          EventSourcedBehavior.create<LedgerMsg, number, number>({
            persistenceId: `Ledger|${entityId}`,
            emptyState: 0,
            journal: traced,
            eventCodec: numberCodec,
            commandHandler: (_s, m) => Eff.persist(m.amount).thenReply(m.replyTo, (s) => s),
            eventHandler: (s, e) => s + e,
          }),
      });
      sharding.init({
        typeKey: Quiet,
        tracing: false,
        createBehavior: () =>
          Behaviors.receiveMessage<Msg>((m) => {
            m.replyTo.tell("quiet");
          }),
      });
      nodes.set(name, n);
    }),
  );
  // ClusterNode.start loads @opentelemetry/api with a dynamic import (real event-loop
  // turns): every node is started before virtual time runs, so that runs with and
  // without tracing see the same virtual history
  let started = false;
  void Promise.all(starting).then(() => {
    started = true;
  });
  for (let i = 0; i < 400 && !started; i++) await new Promise((r) => setTimeout(r, 5));
  expect(started).toBe(true);
  const up = () =>
    nodes.size === names.length &&
    [...nodes.values()].every(
      (n) =>
        n.cluster.state.members.length === names.length &&
        n.cluster.state.members.every((m) => m.status === "up"),
    );
  expect(await world.runUntil(up, 30_000)).toBe(true);
  return { world, nodes, sent, journal };
}

async function askIn<R>(run: SimClusterRun, p: () => Promise<R>): Promise<R> {
  let result: { r: R } | undefined;
  let failure: unknown;
  p().then(
    (r) => {
      result = { r };
    },
    (e: unknown) => {
      failure = e ?? new Error("rejected");
    },
  );
  expect(
    await run.world.runUntil(() => result !== undefined || failure !== undefined, 30_000),
  ).toBe(true);
  if (failure !== undefined) throw failure;
  return (result as { r: R }).r;
}

const tracer = () => trace.getTracer("test");

/** Asks `entityId` on `node` inside a root span named "client"; resolves with the reply. */
function tracedAsk(
  run: SimClusterRun,
  node: string,
  entityId: string,
  make: (r: ActorRef<string>) => Msg,
) {
  const sharding = ClusterSharding.get(run.nodes.get(node) as ClusterNode);
  return askIn(run, () =>
    tracer().startActiveSpan("client", (span) =>
      sharding
        .entityRefFor(Key, entityId)
        .ask(make, { timeoutMs: ASK_TIMEOUT_MS })
        .finally(() => span.end()),
    ),
  );
}

function plainAsk(run: SimClusterRun, node: string, entityId: string) {
  const sharding = ClusterSharding.get(run.nodes.get(node) as ClusterNode);
  return askIn(run, () =>
    sharding
      .entityRefFor(Key, entityId)
      .ask((replyTo: ActorRef<string>) => ({ type: "ping", replyTo }), {
        timeoutMs: ASK_TIMEOUT_MS,
      }),
  );
}

/** The only span named `name`. */
function one(spans: readonly FinishedSpan[], name: string): FinishedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    `spans named ${name}`,
  ).toEqual([name]);
  return found[0] as FinishedSpan;
}

function expectChild(child: FinishedSpan, parent: FinishedSpan): void {
  expect(child.traceId).toBe(parent.traceId);
  expect(child.parentSpanId, `${child.name} is a child of ${parent.name}`).toBe(parent.spanId);
}

/** Where `entityId` lives, as a node name. */
async function homeOf(run: SimClusterRun, entityId: string): Promise<string> {
  const a = run.nodes.values().next().value as ClusterNode;
  const loc = await askIn(run, () => ClusterSharding.get(a).getEntityLocation(Key, entityId));
  const node = [...run.nodes.keys()].find((n) => loc.region?.includes(`@${n}:2552`) === true);
  expect(node, `home of ${entityId}`).toBeDefined();
  return node as string;
}

/** An entity id living on `node` (after pinging candidates so their shards are allocated). */
async function entityOn(run: SimClusterRun, node: string, from: string): Promise<string> {
  // every region registered first, so that shards are allocated to each
  const sharding = ClusterSharding.get(run.nodes.get(from) as ClusterNode);
  for (let i = 0; i < 50; i++) {
    const regions = await askIn(run, () => sharding.getCurrentRegions(Key));
    if (regions.length === run.nodes.size) break;
    await run.world.advance(200);
  }
  for (let i = 0; i < 40; i++) {
    const id = `e${i}`;
    await plainAsk(run, from, id);
    if ((await homeOf(run, id)) === node) return id;
  }
  throw new Error(`no entity on ${node}`);
}

describe("tracing settings", () => {
  it("refuses a malformed tracing option with a ConfigError naming the key", async () => {
    const base = { systemName: "trace", port: 0 } as const;
    for (const [tracing, key] of [
      [{ enabled: "yes" }, "tracing.enabled"],
      [{ enabled: true, tracerName: "" }, "tracing.tracerName"],
      [true, "tracing"],
    ] as const)
      await expect(
        ClusterNode.start({ ...base, tracing: tracing as unknown as TracingOptions }),
      ).rejects.toMatchObject({ code: "CONFIG_INVALID", key });
  });
});

describe("tracing (simulated cluster)", () => {
  it("one node: ask -> region -> shard -> handler, each span the parent of the next", {
    timeout: 60_000,
  }, async () => {
    const run = await startCluster(["a"], { enabled: true });
    expect(await tracedAsk(run, "a", "cart-1", (replyTo) => ({ type: "ping", replyTo }))).toBe(
      "pong:cart-1",
    );
    const spans = exporter.spans;
    expect(connectedTraceProblem(spans)).toBeUndefined();
    const client = one(spans, "client");
    const ask = one(spans, SpanNames.ASK);
    const region = one(spans, SpanNames.REGION);
    const shard = one(spans, SpanNames.SHARD);
    const handle = one(spans, SpanNames.HANDLE);
    expectChild(ask, client);
    expectChild(region, ask);
    expectChild(shard, region);
    expectChild(handle, shard);
    expect(spans.some((s) => s.name === SpanNames.FORWARD)).toBe(false);
    expect(ask.kind).toBe(SpanKind.CLIENT);
    expect(region.kind).toBe(SpanKind.INTERNAL);
    expect(handle.kind).toBe(SpanKind.CONSUMER);
    expect(ask.tracerName).toBe("shardkit");
    for (const s of [ask, region, shard, handle]) {
      expect(s.attributes["shardkit.entity.type"]).toBe("Traced");
      expect(s.attributes["shardkit.entity.id"]).toBe("cart-1");
      expect(typeof s.attributes["shardkit.shard.id"]).toBe("string");
    }
    // the first message to a shard waits for its allocation in the region's buffer
    expect(region.attributes["shardkit.region.route"]).toBe("buffer");
    expect(shard.attributes["shardkit.shard.delivery"]).toBe("start");
    expect(region.attributes["shardkit.member"]).toMatch(/trace@a:2552#/);

    // once the shard and the entity run: the fast paths
    exporter.reset();
    await tracedAsk(run, "a", "cart-1", (replyTo) => ({ type: "ping", replyTo }));
    expect(one(exporter.spans, SpanNames.REGION).attributes["shardkit.region.route"]).toBe("local");
    expect(one(exporter.spans, SpanNames.SHARD).attributes["shardkit.shard.delivery"]).toBe(
      "active",
    );
  });

  it("a handler's nested ask and journal write are children of its span", {
    timeout: 60_000,
  }, async () => {
    const run = await startCluster(["a"], { enabled: true });
    await plainAsk(run, "a", "front");
    await plainAsk(run, "a", "back");
    expect(exporter.spans).toEqual([]);
    expect(
      await tracedAsk(run, "a", "front", (replyTo) => ({ type: "relay", to: "back", replyTo })),
    ).toBe("relayed:pong:back");
    const spans = exporter.spans;
    expect(connectedTraceProblem(spans)).toBeUndefined();
    const handles = spans.filter((s) => s.name === SpanNames.HANDLE);
    const asks = spans.filter((s) => s.name === SpanNames.ASK);
    const front = handles.find(
      (s) => s.attributes["shardkit.entity.id"] === "front",
    ) as FinishedSpan;
    const back = handles.find((s) => s.attributes["shardkit.entity.id"] === "back") as FinishedSpan;
    const nested = asks.find((s) => s.attributes["shardkit.entity.id"] === "back") as FinishedSpan;
    expectChild(nested, front);
    expect(back.traceId).toBe(front.traceId);

    exporter.reset();
    expect(await tracedAsk(run, "a", "front", (replyTo) => ({ type: "write", replyTo }))).toBe(
      "written",
    );
    const append = one(exporter.spans, SpanNames.JOURNAL_APPEND);
    expectChild(append, one(exporter.spans, SpanNames.HANDLE));
    expect(append.kind).toBe(SpanKind.CLIENT);
    expect(append.attributes).toMatchObject({
      "shardkit.journal.name": "test",
      "shardkit.persistence.id": "front",
      "shardkit.journal.events": 1,
      "shardkit.journal.first_seq_nr": 1,
    });
    // outside a span, a write is not traced
    exporter.reset();
    await plainAsk(run, "a", "front");
    const written = await askIn(run, () =>
      ClusterSharding.get(run.nodes.get("a") as ClusterNode)
        .entityRefFor(Key, "front")
        .ask((replyTo: ActorRef<string>) => ({ type: "write", replyTo }), {
          timeoutMs: ASK_TIMEOUT_MS,
        }),
    );
    expect(written).toBe("written");
    expect(exporter.spans).toEqual([]);
  });

  it("an event-sourced entity: the append of a command stashed during recovery is traced", {
    timeout: 60_000,
  }, async () => {
    const run = await startCluster(["a"], { enabled: true });
    const sharding = ClusterSharding.get(run.nodes.get("a") as ClusterNode);
    const add = (amount: number) =>
      askIn(run, () =>
        tracer().startActiveSpan("client", (span) =>
          sharding
            .entityRefFor(Ledger, "l-1")
            .ask((replyTo: ActorRef<number>) => ({ type: "add", amount, replyTo }), {
              timeoutMs: ASK_TIMEOUT_MS,
            })
            .finally(() => span.end()),
        ),
      );
    // the first command arrives while the entity recovers: stashed, then handled
    expect(await add(5)).toBe(5);
    let spans = exporter.spans;
    expect(connectedTraceProblem(spans)).toBeUndefined();
    let append = one(spans, SpanNames.JOURNAL_APPEND);
    const handles = spans.filter((s) => s.name === SpanNames.HANDLE);
    expect(handles.length).toBeGreaterThanOrEqual(2); // stashed, then handled again
    expect(handles.map((h) => h.spanId)).toContain(append.parentSpanId);
    expect(append.attributes["shardkit.persistence.id"]).toBe("Ledger|l-1");
    exporter.reset();
    expect(await add(2)).toBe(7);
    spans = exporter.spans;
    append = one(spans, SpanNames.JOURNAL_APPEND);
    expectChild(append, one(spans, SpanNames.HANDLE));
    expect(append.attributes["shardkit.journal.first_seq_nr"]).toBe(2);
  });

  it("across members: the forward's W3C context continues the trace on the owner", {
    timeout: 90_000,
  }, async () => {
    const run = await startCluster(["a", "b"], { enabled: true });
    const id = await entityOn(run, "b", "a");
    exporter.reset();
    expect(await tracedAsk(run, "a", id, (replyTo) => ({ type: "ping", replyTo }))).toBe(
      `pong:${id}`,
    );
    const spans = exporter.spans;
    expect(connectedTraceProblem(spans)).toBeUndefined();
    const ask = one(spans, SpanNames.ASK);
    const regions = spans.filter((s) => s.name === SpanNames.REGION);
    expect(regions).toHaveLength(2);
    const onA = regions.find((s) => s.parentSpanId === ask.spanId) as FinishedSpan;
    expect(onA.attributes["shardkit.region.route"]).toBe("forward");
    const forward = one(spans, SpanNames.FORWARD);
    expectChild(forward, onA);
    expect(forward.kind).toBe(SpanKind.PRODUCER);
    expect(forward.attributes["shardkit.region.target"]).toMatch(/trace@b:2552/);
    const onB = regions.find((s) => s !== onA) as FinishedSpan;
    expectChild(onB, forward);
    expect(onB.parentIsRemote).toBe(true);
    expect(onB.kind).toBe(SpanKind.CONSUMER);
    expect(onB.attributes["shardkit.member"]).toMatch(/trace@b:2552#/);
    expectChild(one(spans, SpanNames.SHARD), onB);
    expectChild(one(spans, SpanNames.HANDLE), one(spans, SpanNames.SHARD));
  });

  it("no span without an active one; a node without tracing makes none", {
    timeout: 60_000,
  }, async () => {
    const on = await startCluster(["a"], { enabled: true });
    await plainAsk(on, "a", "x");
    await plainAsk(on, "a", "x");
    expect(exporter.spans).toEqual([]);
    // a type with `tracing: false` makes none on a tracing node
    const quiet = await askIn(on, () =>
      tracer().startActiveSpan("client", (span) =>
        ClusterSharding.get(on.nodes.get("a") as ClusterNode)
          .entityRefFor(Quiet, "q")
          .ask((replyTo: ActorRef<string>) => ({ type: "ping", replyTo }), {
            timeoutMs: ASK_TIMEOUT_MS,
          })
          .finally(() => span.end()),
      ),
    );
    expect(quiet).toBe("quiet");
    expect(exporter.spans.map((s) => s.name)).toEqual(["client"]);
    exporter.reset();
    const off = await startCluster(["a"], undefined);
    await tracedAsk(off, "a", "x", (replyTo) => ({ type: "ping", replyTo }));
    expect(exporter.spans.map((s) => s.name)).toEqual(["client"]);
  });

  it("tracing enabled without an active span sends exactly the bytes of tracing off", {
    timeout: 120_000,
  }, async () => {
    const bytesOf = async (tracing: TracingOptions | undefined, traced: boolean) => {
      const run = await startCluster(["a", "b"], tracing, 3);
      const id = await entityOn(run, "b", "a");
      const before = run.sent.bytes;
      for (let i = 0; i < 5; i++)
        if (traced) await tracedAsk(run, "a", id, (replyTo) => ({ type: "ping", replyTo }));
        else await plainAsk(run, "a", id);
      const bytes = run.sent.bytes - before;
      for (const n of run.nodes.values()) void n.system.terminate();
      await run.world.advance(1_000);
      return bytes;
    };
    const off = await bytesOf(undefined, false);
    const onNoSpan = await bytesOf({ enabled: true }, false);
    const onSpan = await bytesOf({ enabled: true }, true);
    expect(off).toBeGreaterThan(0);
    expect(onNoSpan).toBe(off);
    // a traced forward carries the traceparent (55 characters) and the object form
    expect(onSpan).toBeGreaterThan(off + 5 * 55);
  });
});
