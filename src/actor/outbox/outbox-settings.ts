/**
 * Settings of the at-least-once delivery outbox: redelivery timing and the bounds on
 * unconfirmed messages. Validated like every settings object (ConfigError names the
 * key, the value and the allowed range; unknown keys are refused).
 */
import { ConfigError } from "../../base/errors.js";
import { int, ms, num, type RulesOf, resolveSettings } from "../../base/settings.js";

export interface OutboxSettings {
  /** Wait after the first delivery attempt before the first redelivery, in ms. */
  readonly redeliverIntervalMs: number;
  /** Each further redelivery waits this many times longer than the one before. */
  readonly redeliverBackoffFactor: number;
  /** Longest wait between two attempts of one message, in ms (>= redeliverIntervalMs). */
  readonly redeliverBackoffMaxMs: number;
  /**
   * Most redeliveries per tick. When a tick hits it, the next tick comes no sooner than
   * `redeliverIntervalMs` later, so a backlog (e.g. after recovery) drains at most at
   * this many messages per interval.
   */
  readonly redeliveryBurstMax: number;
  /**
   * A message still unconfirmed after this many attempts is reported once (per
   * incarnation) with a warning log and an `OutboxUnconfirmedWarning` on the event
   * stream. `Infinity` disables the warning.
   */
  readonly warnAfterAttempts: number;
  /** Most messages sent and not yet confirmed; a `send` beyond is rejected (not persisted). */
  readonly unconfirmedMax: number;
}

export const defaultOutboxSettings: OutboxSettings = Object.freeze({
  redeliverIntervalMs: 5_000,
  redeliverBackoffFactor: 2,
  redeliverBackoffMaxMs: 60_000,
  redeliveryBurstMax: 1_000,
  warnAfterAttempts: 5,
  unconfirmedMax: 10_000,
});

const TIMER_MS_MAX = 2 ** 31 - 1;

const rules: RulesOf<OutboxSettings> = {
  redeliverIntervalMs: ms(1, TIMER_MS_MAX),
  redeliverBackoffFactor: num(1, 100),
  redeliverBackoffMaxMs: ms(1, TIMER_MS_MAX),
  redeliveryBurstMax: int(1, 1_000_000),
  warnAfterAttempts: int(1, Number.POSITIVE_INFINITY),
  unconfirmedMax: int(1, 10_000_000),
};

/** Validates overrides and returns complete settings. */
export function outboxSettings(overrides?: Partial<OutboxSettings>): Readonly<OutboxSettings> {
  const s = resolveSettings("outbox.", defaultOutboxSettings, rules, overrides);
  if (s.redeliverBackoffMaxMs < s.redeliverIntervalMs)
    throw new ConfigError(
      "outbox.redeliverBackoffMaxMs",
      s.redeliverBackoffMaxMs,
      `a duration >= outbox.redeliverIntervalMs (${s.redeliverIntervalMs})`,
    );
  return s;
}
