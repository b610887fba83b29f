/**
 * Running a simulation so that its failure names its seed (docs/architecture.md, "The
 * determinism boundary"): a failing seed is the whole reproduction, so it must appear in
 * every failure message.
 */
import { ShardkitError } from "../../base/errors.js";
import { SimWorld, type SimWorldOptions } from "./sim-world.js";

/** A simulation failed; the message starts with `[sim seed=<n>] `, `cause` is the original. */
export class SimFailure extends ShardkitError {
  readonly seed: number;
  /** World time at which the failure surfaced. */
  readonly timeMs: number;

  constructor(seed: number, timeMs: number, cause: unknown) {
    super("SIM_FAILED", `[sim seed=${seed}] ${messageOf(cause)} (at t=${timeMs})`, {
      seed,
      timeMs,
    });
    this.cause = cause;
    this.seed = seed;
    this.timeMs = timeMs;
  }
}

/** Runs `fn` in a fresh world with `seed`; any failure is rethrown as a SimFailure. */
export async function withSeed<T>(
  seed: number,
  fn: (world: SimWorld) => Promise<T>,
  options: Omit<SimWorldOptions, "seed"> = {},
): Promise<T> {
  const world = new SimWorld({ ...options, seed });
  try {
    return await fn(world);
  } catch (error) {
    throw new SimFailure(seed, world.now, error);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
