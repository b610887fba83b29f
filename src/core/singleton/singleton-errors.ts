/**
 * Typed errors of the singleton manager (docs/architecture.md, house rule 3: branch on `code`).
 */
import { ShardkitError } from "../../base/errors.js";

/** What a stuck manager was waiting for. */
export type SingletonStuckPhase = "hand-over" | "take-over";

/**
 * The manager retried the hand-over (as new oldest: HandOverToMe) or the take-over (as
 * old oldest: TakeOverFromMe) more than the allowed number of times without an answer.
 * The manager stays safe (it does not start an instance) and keeps retrying; the driver
 * logs this at error level and may escalate (e.g. leave or restart the node).
 */
export class SingletonManagerStuckError extends ShardkitError {
  readonly phase: SingletonStuckPhase;
  /** The peers (UniqueAddress strings) that did not answer. */
  readonly waitingFor: readonly string[];
  readonly retries: number;

  constructor(
    singletonSelf: string,
    phase: SingletonStuckPhase,
    waitingFor: readonly string[],
    retries: number,
  ) {
    super(
      "SINGLETON_MANAGER_STUCK",
      `singleton manager on ${singletonSelf} is stuck in ${phase}: no answer from ${
        waitingFor.length === 0 ? "(nobody)" : waitingFor.join(", ")
      } after ${retries} retries`,
      { self: singletonSelf, phase, waitingFor, retries },
    );
    this.phase = phase;
    this.waitingFor = waitingFor;
    this.retries = retries;
  }
}
