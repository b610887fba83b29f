/**
 * Schemas at the edges (docs/evolution.md) with two real Standard Schema validators, zod
 * and valibot: the synchronous check, entity type keys whose messages are checked at the
 * call site, and event schemas checked on recovery.
 */
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ActorFailed } from "../../src/actor/event-stream.js";
import {
  type ActorRef,
  Behaviors,
  Effect,
  EventSourcedBehavior,
  EventValidationError,
  persistenceIdOf,
} from "../../src/actor/index.js";
import {
  AsyncSchemaError,
  ClusterSharding,
  EntityTypeKey,
  MessageValidationError,
  msgpackCodec,
  type Schema,
} from "../../src/api/index.js";
import { ConfigError } from "../../src/base/errors.js";
import { validateSync } from "../../src/base/schema.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { simSystem } from "../actor/sim-system.js";
import { type Counter, settle, simSharding, startCluster } from "../sharding/sim-sharding.js";

type Add = { type: "add"; n: number };

const validators: [string, Schema<Add>][] = [
  ["zod", z.object({ type: z.literal("add"), n: z.number().int() })],
  ["valibot", v.object({ type: v.literal("add"), n: v.pipe(v.number(), v.integer()) })],
];

describe.each(validators)("validateSync with %s", (_vendor, schema) => {
  it("passes a valid value and lists the issues of an invalid one with their paths", () => {
    expect(validateSync(schema, { type: "add", n: 2 }, "x")).toEqual({
      ok: true,
      value: { type: "add", n: 2 },
    });
    const bad = validateSync(schema, { type: "add", n: 1.5 }, "x");
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.issues.map((i) => i.path)).toEqual(["n"]);
  });
});

describe("validateSync", () => {
  it("refuses an asynchronous schema with a typed error", () => {
    const asyncSchema = z.string().refine(async () => true);
    expect(() => validateSync(asyncSchema, "a", "entity type T")).toThrow(AsyncSchemaError);
  });
});

describe("EntityTypeKey options", () => {
  it("refuses a schema that is not a Standard Schema, and a non-boolean validateLocal", () => {
    expect(() => EntityTypeKey("T", { schema: {} as Schema<unknown> })).toThrow(ConfigError);
    expect(() =>
      EntityTypeKey("T", {
        schema: validators[0]?.[1],
        validateLocal: "yes" as unknown as boolean,
      }),
    ).toThrow(ConfigError);
    expect(() => EntityTypeKey("bad name")).toThrow(ConfigError);
  });
});

const counterSchemas: [string, Schema<Counter>][] = [
  [
    "zod",
    z.union([
      z.object({ type: z.literal("add"), n: z.number().int().nonnegative() }),
      z.object({
        type: z.literal("get"),
        replyTo: z.custom<ActorRef<never>>((r) => r !== undefined),
      }),
      z.object({ type: z.literal("passivate") }),
    ]) as unknown as Schema<Counter>,
  ],
  [
    "valibot",
    v.variant("type", [
      v.object({ type: v.literal("add"), n: v.pipe(v.number(), v.integer(), v.minValue(0)) }),
      v.object({
        type: v.literal("get"),
        replyTo: v.custom<ActorRef<never>>((r) => r !== undefined),
      }),
      v.object({ type: v.literal("passivate") }),
    ]) as unknown as Schema<Counter>,
  ],
];

describe.each(counterSchemas)("an entity type with a %s schema", (_vendor, schema) => {
  it("checks tell and ask at the call site; nothing invalid reaches the entity", async () => {
    const { world, network, oracle } = simSharding(1);
    const Checked = EntityTypeKey<Counter>("Checked", { schema });
    const Unchecked = EntityTypeKey<Counter>("Unchecked", { schema, validateLocal: false });
    const [a] = await startCluster(world, network, oracle, ["a"], undefined, () => ({
      typeKey: Checked,
    }));
    if (a === undefined) throw new Error("no node");
    const { initCounter } = await import("../sharding/sim-sharding.js");
    initCounter(a, "a", oracle, { typeKey: Unchecked });
    const sharding = ClusterSharding.get(a);
    const ref = sharding.entityRefFor(Checked, "e1");
    ref.tell({ type: "add", n: 2 });
    let thrown: unknown;
    try {
      ref.tell({ type: "add", n: -1 });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(MessageValidationError);
    expect((thrown as MessageValidationError).typeName).toBe("Checked");
    expect((thrown as MessageValidationError).message).toMatch(/n:/);
    const rejected = await settle(
      world,
      ref
        .ask((_replyTo: ActorRef<unknown>) => ({ type: "add", n: 0.5 }) as Counter)
        .then(
          () => "resolved",
          (e: unknown) => e,
        ),
    );
    expect(rejected).toBeInstanceOf(MessageValidationError);
    const total = await settle(
      world,
      ref.ask((replyTo: ActorRef<{ node: string; total: number }>) => ({ type: "get", replyTo })),
    );
    expect(total.total).toBe(2);

    // validateLocal: false — the compiler's check only; the message goes through.
    const unchecked = sharding.entityRefFor(Unchecked, "e1");
    unchecked.tell({ type: "add", n: -1 });
    const t2 = await settle(
      world,
      unchecked.ask((replyTo: ActorRef<{ node: string; total: number }>) => ({
        type: "get",
        replyTo,
      })),
    );
    expect(t2.total).toBe(-1);
  });
});

type Ev = { type: "added"; n: number };
type St = { total: number };
const Eff = Effect.of<Ev, St>();

function account(journal: MemoryJournal, eventSchema?: Schema<Ev>) {
  return EventSourcedBehavior.create<{ n: number; replyTo: ActorRef<number> }, Ev, St>({
    persistenceId: persistenceIdOf("Account", "a1"),
    emptyState: { total: 0 },
    commandHandler: (_s, cmd) =>
      Eff.persist({ type: "added", n: cmd.n }).thenReply(cmd.replyTo, (s) => s.total),
    eventHandler: (s, e) => ({ total: s.total + e.n }),
    journal,
    eventCodec: msgpackCodec<Ev>(),
    eventSchema,
    backoff: { minBackoffMs: 100, maxBackoffMs: 1_000, randomFactor: 0 },
  });
}

describe.each([
  ["zod", z.object({ type: z.literal("added"), n: z.number().nonnegative() })],
  ["valibot", v.object({ type: v.literal("added"), n: v.pipe(v.number(), v.minValue(0)) })],
] as [string, Schema<Ev>][])("an event schema (%s)", (_vendor, eventSchema) => {
  it("is checked on recovery; a mismatch names the persistenceId and sequence number", async () => {
    const s = simSystem();
    const journal = new MemoryJournal();
    const got: number[] = [];
    const replies = s.system.spawn(Behaviors.receiveMessage<number>((n) => void got.push(n)));
    const first = s.system.spawn(account(journal), "first");
    first.tell({ n: 5, replyTo: replies });
    first.tell({ n: -3, replyTo: replies }); // written without a schema
    await s.settle(10);
    expect(got).toEqual([5, 2]);

    const failed: ActorFailed[] = [];
    s.system.eventStream.subscribe("ActorFailed", (e) => failed.push(e));
    s.system.spawn(account(journal, eventSchema), "second");
    await s.settle(10);
    const error = failed[0]?.error as { cause?: unknown } | undefined;
    const cause = error?.cause;
    expect(cause).toBeInstanceOf(EventValidationError);
    expect((cause as EventValidationError).persistenceId).toBe("Account|a1");
    expect((cause as EventValidationError).sequenceNr).toBe(2);
    expect((cause as EventValidationError).message).toContain("event 2 of Account|a1");
  });

  it("lets valid events through", async () => {
    const s = simSystem();
    const journal = new MemoryJournal();
    const got: number[] = [];
    const replies = s.system.spawn(Behaviors.receiveMessage<number>((n) => void got.push(n)));
    const first = s.system.spawn(account(journal), "first");
    first.tell({ n: 5, replyTo: replies });
    await s.settle(10);
    const second = s.system.spawn(account(journal, eventSchema), "second");
    second.tell({ n: 1, replyTo: replies });
    await s.settle(10);
    expect(got).toEqual([5, 6]);
  });
});

describe.each(counterSchemas)("messages from another member, %s schema", (_vendor, schema) => {
  it("are checked before they reach the entity: invalid ones become typed dead letters", async () => {
    const { world, network, oracle } = simSharding(3);
    // validateLocal: false so that b sends invalid messages at all; a checks what arrives.
    const Key = EntityTypeKey<Counter>("Remote", { schema, validateLocal: false });
    const [a, b] = await startCluster(world, network, oracle, ["a", "b"], undefined, () => ({
      typeKey: Key,
    }));
    if (a === undefined || b === undefined) throw new Error("no nodes");
    const dead: { reason: string; cause: unknown; on: string }[] = [];
    for (const [name, node] of [
      ["a", a],
      ["b", b],
    ] as const)
      node.system.eventStream.subscribe("DeadLetter", (d) => {
        if (d.reason === "invalid-message")
          dead.push({ reason: d.reason, cause: d.cause, on: name });
      });
    const sharding = ClusterSharding.get(b);
    const ids = Array.from({ length: 12 }, (_, i) => `e${i}`);
    for (const id of ids) sharding.entityRefFor(Key, id).tell({ type: "add", n: 1 });
    for (const id of ids) sharding.entityRefFor(Key, id).tell({ type: "add", n: -5 });
    const totals = new Map<string, { node: string; total: number }>();
    for (const id of ids)
      totals.set(
        id,
        await settle(
          world,
          sharding
            .entityRefFor(Key, id)
            .ask((replyTo: ActorRef<{ node: string; total: number }>) => ({
              type: "get",
              replyTo,
            })),
        ),
      );
    const onA = ids.filter((id) => totals.get(id)?.node === "a");
    expect(onA.length).toBeGreaterThan(0);
    // Entities on a (messages from b crossed the network): the invalid add never arrived.
    for (const id of onA) expect(totals.get(id)?.total).toBe(1);
    expect(dead.filter((d) => d.on === "a")).toHaveLength(onA.length);
    expect(dead[0]?.cause).toBeInstanceOf(MessageValidationError);
    // Entities on b got the local, unchecked message (validateLocal: false).
    for (const id of ids.filter((i) => !onA.includes(i))) expect(totals.get(id)?.total).toBe(-4);
  });
});
