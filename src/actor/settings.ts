/**
 * ActorSettings: every bound and timeout of the actor core, with defaults and
 * validation (ConfigError names the key, the value and the allowed range).
 */
import { int, ms, type RulesOf, resolveSettings } from "../base/settings.js";

export interface ActorSettings {
  /** Messages one actor may process per dispatcher visit before others get a turn. */
  readonly dispatcherThroughput: number;
  /** Messages processed per event-loop turn before yielding to IO (a macrotask turn). */
  readonly dispatcherTurnMessagesMax: number;
  /** Default mailbox bound per actor; Infinity = unbounded (the default). */
  readonly mailboxCapacityMax: number;
  /** Default stash bound per actor. */
  readonly stashCapacityMax: number;
  /** Default ask timeout when a call gives none, in ms. */
  readonly askTimeoutMs: number;
  /** Bound on asks awaiting a reply; beyond it ask rejects with AskRejectedError. */
  readonly askPendingMax: number;
  /** Dead letters logged per interval; the rest are counted and summarised. */
  readonly deadLetterLogBurstMax: number;
  readonly deadLetterLogIntervalMs: number;
  /** Failure logs per interval (the failures themselves are always handled). */
  readonly failureLogBurstMax: number;
  readonly failureLogIntervalMs: number;
}

export const defaultActorSettings: ActorSettings = Object.freeze({
  dispatcherThroughput: 64,
  dispatcherTurnMessagesMax: 16_384,
  mailboxCapacityMax: Number.POSITIVE_INFINITY,
  stashCapacityMax: 10_000,
  askTimeoutMs: 5_000,
  askPendingMax: 1_000_000,
  deadLetterLogBurstMax: 10,
  deadLetterLogIntervalMs: 10_000,
  failureLogBurstMax: 20,
  failureLogIntervalMs: 10_000,
});

const rules: RulesOf<ActorSettings> = {
  dispatcherThroughput: int(1, 1_000_000),
  dispatcherTurnMessagesMax: int(1, 100_000_000),
  mailboxCapacityMax: int(1, Number.POSITIVE_INFINITY),
  stashCapacityMax: int(1, 100_000_000),
  askTimeoutMs: ms(1, 2 ** 31 - 1),
  askPendingMax: int(1, 100_000_000),
  deadLetterLogBurstMax: int(0, 1_000_000),
  deadLetterLogIntervalMs: ms(1),
  failureLogBurstMax: int(0, 1_000_000),
  failureLogIntervalMs: ms(1),
};

/** Validates overrides and returns complete settings. */
export function actorSettings(overrides?: Partial<ActorSettings>): Readonly<ActorSettings> {
  return resolveSettings("actor.", defaultActorSettings, rules, overrides);
}
