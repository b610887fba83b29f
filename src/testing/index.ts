/**
 * `shardkit/testing`: deterministic testing helpers. Run actor systems (and later whole
 * clusters) inside the simulator: virtual time, seeded randomness, replayable traces.
 */
import { ActorSystem } from "../actor/actor-system.js";
import type { ActorSettings } from "../actor/settings.js";
import { type SimNodeOptions, SimWorld, type SimWorldOptions } from "../runtime/sim/index.js";

export { SimFailure, SimWorld, type SimWorldOptions, withSeed } from "../runtime/sim/index.js";
export {
  ShardingOracle,
  ShardingOracleError,
  type ShardingOracleOptions,
  type ShardingViolation,
} from "./sharding-oracle.js";

/** An ActorSystem on a new simulated node of `world`. */
export function simActorSystem(
  world: SimWorld,
  options: {
    name: string;
    node?: string;
    nodeOptions?: SimNodeOptions;
    settings?: Partial<ActorSettings>;
  },
): ActorSystem {
  return ActorSystem.create({
    name: options.name,
    runtime: world.createRuntime(options.node ?? options.name, options.nodeOptions),
    settings: options.settings,
  });
}

/** A new world with `seed` (see docs/simulator.md). */
export function simWorld(options: SimWorldOptions): SimWorld {
  return new SimWorld(options);
}
