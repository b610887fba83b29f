import { describe, expect, it } from "vitest";
import {
  ActorSystem,
  actorSettings,
  defaultActorSettings,
  SupervisorStrategy,
} from "../../src/actor/index.js";
import { ConfigError } from "../../src/base/errors.js";
import { SimWorld } from "../../src/runtime/sim/index.js";

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

describe("actor settings", () => {
  it("defaults are complete and valid", () => {
    expect(actorSettings()).toEqual(defaultActorSettings);
  });

  it("names the key, the bad value and the allowed range", () => {
    const e = configError(() => actorSettings({ dispatcherThroughput: 0 }));
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.key).toBe("actor.dispatcherThroughput");
    expect(e.value).toBe(0);
    expect(e.message).toContain("actor.dispatcherThroughput=0");
    expect(e.message).toContain("[1, 1000000]");
  });

  it.each([
    ["askTimeoutMs", -5],
    ["askTimeoutMs", Number.NaN],
    ["mailboxCapacityMax", 1.5],
    ["stashCapacityMax", "10"],
    ["deadLetterLogIntervalMs", Number.POSITIVE_INFINITY],
  ])("rejects %s = %s", (key, value) => {
    const e = configError(() => actorSettings({ [key]: value } as never));
    expect(e.key).toBe(`actor.${key}`);
  });

  it("accepts Infinity for an unbounded mailbox", () => {
    expect(actorSettings({ mailboxCapacityMax: Number.POSITIVE_INFINITY }).mailboxCapacityMax).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it("rejects unknown keys (typos) with the list of known ones", () => {
    const e = configError(() => actorSettings({ askTimeoutMillis: 5 } as never));
    expect(e.key).toBe("actor.askTimeoutMillis");
    expect(e.allowed).toContain("askTimeoutMs");
  });

  it("ActorSystem.create validates its name and settings", () => {
    const world = new SimWorld({ seed: 1 });
    expect(
      configError(() => ActorSystem.create({ name: "bad name", runtime: world.createRuntime("a") }))
        .key,
    ).toBe("name");
    expect(
      configError(() =>
        ActorSystem.create({
          name: "ok",
          runtime: world.createRuntime("b"),
          settings: { askPendingMax: 0 },
        }),
      ).key,
    ).toBe("actor.askPendingMax");
  });

  it("supervisor strategies validate their options", () => {
    expect(configError(() => SupervisorStrategy.restart({ maxRestarts: -2 })).key).toBe(
      "maxRestarts",
    );
    expect(
      configError(() =>
        SupervisorStrategy.restartWithBackoff({
          minBackoffMs: 100,
          maxBackoffMs: 50,
          randomFactor: 0.2,
        }),
      ).key,
    ).toBe("maxBackoffMs");
    expect(
      configError(() =>
        SupervisorStrategy.restartWithBackoff({
          minBackoffMs: 1,
          maxBackoffMs: 5,
          randomFactor: 2,
        }),
      ).key,
    ).toBe("randomFactor");
  });
});
