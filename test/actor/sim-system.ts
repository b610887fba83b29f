/** Test helper: an ActorSystem on a simulated node of a seeded SimWorld. */
import { ActorSystem } from "../../src/actor/index.js";
import type { ActorSettings } from "../../src/actor/settings.js";
import { SimWorld, type SimWorldOptions } from "../../src/runtime/sim/index.js";

export interface SimSystem {
  world: SimWorld;
  system: ActorSystem;
  /** Runs until the predicate holds; fails the test (with the seed) if it never does. */
  until(predicate: () => boolean, limitMs?: number): Promise<void>;
  /** Lets all currently due work run (virtual time advances by `ms`). */
  settle(ms?: number): Promise<void>;
}

export function simSystem(
  seed = 1,
  settings?: Partial<ActorSettings>,
  name = "test",
  worldOptions: Omit<SimWorldOptions, "seed"> = {},
): SimSystem {
  const world = new SimWorld({ ...worldOptions, seed });
  const system = ActorSystem.create({ name, runtime: world.createRuntime("n1"), settings });
  return {
    world,
    system,
    async until(predicate, limitMs = 60_000) {
      const ok = await world.runUntil(predicate, limitMs);
      if (!ok)
        throw new Error(`[sim ${world.describe()}] condition not reached within ${limitMs} ms`);
    },
    async settle(ms = 0) {
      await world.advance(ms);
    },
  };
}
