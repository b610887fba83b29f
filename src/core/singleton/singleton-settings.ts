/**
 * Settings of the cluster singleton manager and proxy (docs/architecture.md, house rule 2: every
 * interval and bound is a setting with its unit in the name, defaulted and validated
 * here, in one object per component).
 *
 * The manager retries HandOverToMe / TakeOverFromMe every handOverRetryIntervalMs. How
 * many retries it makes before reporting itself stuck is derived, not set directly:
 * at least minNumberOfHandOverRetries, and enough to outlast removalMarginMs (a peer that
 * is being removed must get the chance to disappear before the manager calls itself
 * stuck). The derived numbers are `maxHandOverRetries` and `maxTakeOverRetries` below.
 */
import { bool, int, ms, type RulesOf, resolveSettings } from "../../base/settings.js";

/** Settings of one singleton manager (durations in milliseconds). */
export interface SingletonManagerSettings {
  /** Interval between HandOverToMe (new oldest) and TakeOverFromMe (old oldest) retries. */
  readonly handOverRetryIntervalMs: number;
  /** Lower bound of the hand-over retries before the manager reports itself stuck. */
  readonly minNumberOfHandOverRetries: number;
  /**
   * A removed member still counts as possibly running the instance for this long after
   * its removal is seen (0 = trust removal at once). The cluster driver sets it to the
   * downing provider's margin so a downed node on the far side of a partition has
   * stopped its instance before the new one starts.
   */
  readonly removalMarginMs: number;
  /** With a lease: interval between attempts to acquire it after a refusal. */
  readonly leaseRetryIntervalMs: number;
  /**
   * With a lease only: an older member that is unreachable (or down) does not hold up
   * the take-over. The oldest REACHABLE eligible member acquires the lease and starts the
   * instance once the old holder's lease expired; it hands the instance back when an
   * older member is reachable again (docs/singleton.md, "Lease-guarded take-over").
   */
  readonly takeOverFromUnreachable: boolean;
}

/** Defaults of the singleton manager. */
export const DEFAULT_SINGLETON_MANAGER_SETTINGS: SingletonManagerSettings = Object.freeze({
  handOverRetryIntervalMs: 1_000,
  minNumberOfHandOverRetries: 15,
  removalMarginMs: 0,
  leaseRetryIntervalMs: 5_000,
  takeOverFromUnreachable: false,
});

const MANAGER_RULES: RulesOf<SingletonManagerSettings> = {
  handOverRetryIntervalMs: ms(1),
  minNumberOfHandOverRetries: int(1, 1_000_000),
  removalMarginMs: ms(0),
  leaseRetryIntervalMs: ms(1),
  takeOverFromUnreachable: bool(),
};

/** Defaults merged with `overrides`, validated; throws ConfigError naming a bad key. */
export function resolveSingletonManagerSettings(
  overrides?: Partial<SingletonManagerSettings>,
): Readonly<SingletonManagerSettings> {
  return resolveSettings(
    "singleton.",
    DEFAULT_SINGLETON_MANAGER_SETTINGS,
    MANAGER_RULES,
    overrides,
  );
}

/**
 * Hand-over retries (one per handOverRetryIntervalMs) the new oldest makes before it
 * reports itself stuck: max(minNumberOfHandOverRetries, removal margin in intervals + 3).
 */
export function maxHandOverRetries(s: SingletonManagerSettings): number {
  const marginRetries = Math.ceil(s.removalMarginMs / s.handOverRetryIntervalMs) + 3;
  return Math.max(s.minNumberOfHandOverRetries, marginRetries);
}

/**
 * Take-over retries the old oldest makes before it stops its instance on its own (when
 * it is exiting) or reports itself stuck: a few less than maxHandOverRetries, so that
 * the new oldest, which also retries, is normally the one that completes the exchange.
 */
export function maxTakeOverRetries(s: SingletonManagerSettings): number {
  return Math.max(1, maxHandOverRetries(s) - 3);
}

/** Settings of one singleton proxy. */
export interface SingletonProxySettings {
  /** While the instance is not located, identify it on the oldest member this often. */
  readonly singletonIdentificationIntervalMs: number;
  /**
   * Messages buffered while the instance is not located. When full, the OLDEST buffered
   * message is dropped to a dead letter (counted). 0 = no buffering: every message sent
   * while the instance is unknown is a dead letter.
   */
  readonly bufferSizeMax: number;
  /**
   * Look for the instance on the oldest eligible member that is reachable (for a
   * singleton whose managers use `takeOverFromUnreachable`).
   */
  readonly skipUnreachable: boolean;
}

/** Defaults of the singleton proxy. */
export const DEFAULT_SINGLETON_PROXY_SETTINGS: SingletonProxySettings = Object.freeze({
  singletonIdentificationIntervalMs: 1_000,
  bufferSizeMax: 1_000,
  skipUnreachable: false,
});

const PROXY_RULES: RulesOf<SingletonProxySettings> = {
  singletonIdentificationIntervalMs: ms(1),
  bufferSizeMax: int(0, 1_000_000),
  skipUnreachable: bool(),
};

/** Defaults merged with `overrides`, validated; throws ConfigError naming a bad key. */
export function resolveSingletonProxySettings(
  overrides?: Partial<SingletonProxySettings>,
): Readonly<SingletonProxySettings> {
  return resolveSettings(
    "singleton.proxy.",
    DEFAULT_SINGLETON_PROXY_SETTINGS,
    PROXY_RULES,
    overrides,
  );
}
