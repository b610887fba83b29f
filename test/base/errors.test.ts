/**
 * Typed errors (docs/architecture.md, house rule 3): every error shardkit throws is a
 * ShardkitError subclass whose `code` is one of `ShardkitErrorCode`. The source scans
 * keep it that way (no bare Error/TypeError, no ShardkitError without a subclass, no
 * code missing from or stale in the union); the rest checks the conversions one by one.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ActorSystem } from "../../src/actor/actor-system.js";
import { ask } from "../../src/actor/ask.js";
import { Behaviors } from "../../src/actor/behavior.js";
import { Effect } from "../../src/actor/event-sourced/effect.js";
import { InvalidEffectError } from "../../src/actor/event-sourced/errors.js";
import { EntityTypeKey } from "../../src/api/cluster-sharding.js";
import {
  ConfigError,
  InvalidActorRefError,
  InvalidAddressError,
  ShardkitError,
} from "../../src/base/errors.js";
import { InvalidAddressError as MembershipInvalidAddressError } from "../../src/core/membership/address.js";
import { MemoryLeaseStore } from "../../src/persistence/memory/memory-lease.js";
import { LeaseUnavailableError } from "../../src/ports/lease.js";
import { SimWorld } from "../../src/runtime/sim/index.js";
import { SimStepsExceededError } from "../../src/runtime/sim/sim-errors.js";

const SRC = resolve(import.meta.dirname, "../../src");

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") ? [p] : [];
  });
}

function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
}

const sources = walk(SRC).map((file) => ({
  rel: relative(SRC, file),
  text: stripComments(readFileSync(file, "utf8")),
}));

/** The codes listed in the ShardkitErrorCode union. */
function unionCodes(): string[] {
  const text = readFileSync(join(SRC, "base/errors.ts"), "utf8");
  const union = /export type ShardkitErrorCode =([\s\S]*?);/.exec(text)?.[1] ?? "";
  return [...union.matchAll(/\|\s*"([A-Z_]+)"/g)].map((m) => m[1] as string);
}

describe("typed errors", () => {
  it("src/ throws no bare Error, TypeError or RangeError, and no plain ShardkitError", () => {
    const bare = /new (?:Error|TypeError|RangeError|ShardkitError)\(/;
    const found = sources.flatMap(({ rel, text }) =>
      text
        .split("\n")
        .flatMap((line, i) => (bare.test(line) ? [`${rel}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it("the code union lists every code a subclass passes, and nothing else", () => {
    const codes = unionCodes();
    expect(codes.length).toBeGreaterThan(30);
    expect(new Set(codes).size).toBe(codes.length);
    const used = new Set<string>();
    for (const { rel, text } of sources) {
      if (rel === "base/errors.ts") {
        // the union itself does not count; the classes defined below it do
        const classes = text.slice(text.indexOf("export abstract class ShardkitError"));
        for (const m of classes.matchAll(/super\(\s*"([A-Z_]+)"/g)) used.add(m[1] as string);
        continue;
      }
      for (const m of text.matchAll(/super\(\s*"([A-Z_]+)"/g)) used.add(m[1] as string);
    }
    expect([...used].filter((c) => !codes.includes(c))).toEqual([]);
    expect(codes.filter((c) => !used.has(c))).toEqual([]);
  });

  it("EntityTypeKey rejects a bad name with a ConfigError naming the key", () => {
    let error: unknown;
    try {
      EntityTypeKey("bad name!");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({
      code: "CONFIG_INVALID",
      key: "EntityTypeKey name",
      value: "bad name!",
    });
    expect(EntityTypeKey("Cart.v2").name).toBe("Cart.v2");
  });

  it("ask: a foreign ref and a bad timeout reject with typed errors", async () => {
    const world = new SimWorld({ seed: 1 });
    const system = ActorSystem.create({ name: "t", runtime: world.createRuntime("n1") });
    const foreign = { tell: () => undefined } as never;
    const r1 = ask(foreign, () => "x");
    await expect(r1).rejects.toBeInstanceOf(InvalidActorRefError);
    await expect(r1).rejects.toMatchObject({ code: "INVALID_ACTOR_REF" });
    const echo = system.spawn(Behaviors.ignore, "echo");
    await expect(ask(echo, () => "x", { timeoutMs: 0 })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      key: "timeoutMs",
      value: 0,
    });
    const done = system.terminate();
    await world.runUntil(() => system.isTerminated, 10_000);
    await done;
  });

  it("adding a side effect to a stash effect throws InvalidEffectError", () => {
    expect(() => Effect.stash().thenStop()).toThrow(InvalidEffectError);
    try {
      Effect.unhandled().thenStop();
    } catch (e) {
      expect((e as ShardkitError).code).toBe("EFFECT_INVALID");
    }
    expect.assertions(2);
  });

  it("an unreachable memory lease store fails with LeaseUnavailableError", () => {
    const world = new SimWorld({ seed: 1 });
    const store = new MemoryLeaseStore(world.createRuntime("n1").clock);
    store.blackhole("a");
    expect(() => store.tryAcquire("l", "a", 1_000)).toThrow(LeaseUnavailableError);
    store.heal("a");
    expect(store.tryAcquire("l", "a", 1_000)).toBe(true);
  });

  it("address errors are one class with one code, wherever they are imported from", () => {
    expect(MembershipInvalidAddressError).toBe(InvalidAddressError);
    const e = new InvalidAddressError("x", "why");
    expect(e).toBeInstanceOf(ShardkitError);
    expect(e.code).toBe("INVALID_ADDRESS");
  });

  it("a simulator run over its step budget fails with SimStepsExceededError", async () => {
    const world = new SimWorld({ seed: 1, stepsPerRunMax: 10 });
    const scheduler = world.createRuntime("n1").scheduler;
    const spin = (): void => scheduler.defer(spin);
    spin();
    await expect(world.advance(1)).rejects.toBeInstanceOf(SimStepsExceededError);
  });
});
