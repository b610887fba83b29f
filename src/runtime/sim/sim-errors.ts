/**
 * Typed errors of the simulator: a run that cannot reach its goal fails with a code and
 * the seed, so a test can tell a livelock from an assertion (docs/simulator.md).
 */
import { ShardkitError } from "../../base/errors.js";

/** One step/runUntil/advance call ran `stepsPerRunMax` events without reaching its goal. */
export class SimStepsExceededError extends ShardkitError {
  constructor(message: string, fields: { seed: number; timeMs: number; stepsPerRunMax: number }) {
    super("SIM_STEPS_EXCEEDED", message, fields);
  }
}
