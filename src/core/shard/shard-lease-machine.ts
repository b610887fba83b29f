/**
 * The shard lease as a sans-IO machine (docs/sharding.md, "Leases and fencing"): when a
 * shard may start entities, when it renews its lease `<type>/<shardId>`, and when it must
 * have stopped them. The driver (cluster/sharding/shard-actor.ts) performs `acquire` (one
 * acquire-or-renew request to the lease store, then advancing the journals' fence) and
 * feeds back `acquire-result` with the send time the output carried.
 *
 * The deadline: the store counts a holding's ttl from when it handles a request, which is
 * after the request was sent. So the holder counts from the send time of its last
 * successful request, on its own clock, and allows for that clock running slower than
 * the store's by at most `clockRateBound` (a fraction: 0.01 = 1 %):
 *
 *   deadline = sentAt(last successful acquire/renewal) + ttlMs * (1 - clockRateBound)
 *              - safetyMarginMs
 *
 * At the deadline the machine emits `lost`: the driver stops every entity at once
 * (`safetyMarginMs` is what stopping may take). Another owner can acquire only after the
 * store's expiry, later than the deadline whenever the clock-rate bound holds.
 *
 * Invariants:
 * - `granted` is emitted at most once, only after a successful acquisition whose
 *   deadline is still ahead; `lost` at most once, and never before `granted` ... except
 *   for a store that answers "held by another owner" (then nothing was granted: no
 *   output, the machine retries).
 * - At most one request is in flight; a request whose answer never comes is covered by
 *   the deadline timer.
 * - A renewal that returns another token than the holding's means the holding expired in
 *   the store meanwhile (someone may have held it since): `lost`.
 */
import { assertNever } from "../../base/assert.js";
import { ConfigError } from "../../base/errors.js";
import { ms, num, type RulesOf, resolveSettings } from "../../base/settings.js";

/** Timing of shard leases (durations in ms). */
export interface ShardLeaseSettings {
  /** How long the store keeps a holding after each acquire or renewal. */
  readonly ttlMs: number;
  /** The holder renews this often. */
  readonly renewIntervalMs: number;
  /** A failed acquisition (store down, lease held elsewhere) is retried after this. */
  readonly acquireRetryIntervalMs: number;
  /**
   * Bound on how much slower this node's clock may run than the lease store's, as a
   * fraction in [0, 0.5) (0.01: 1 %). The deadline shrinks the ttl by this fraction.
   */
  readonly clockRateBound: number;
  /** Time reserved for stopping the entities before the lease can expire in the store. */
  readonly safetyMarginMs: number;
}

/** Defaults: ttl 4 s, renewals every 1 s, deadline 3.46 s after the last renewal's send. */
export const DEFAULT_SHARD_LEASE_SETTINGS: ShardLeaseSettings = Object.freeze({
  ttlMs: 4_000,
  renewIntervalMs: 1_000,
  acquireRetryIntervalMs: 500,
  clockRateBound: 0.01,
  safetyMarginMs: 500,
});

const RULES: RulesOf<ShardLeaseSettings> = {
  ttlMs: ms(1),
  renewIntervalMs: ms(1),
  acquireRetryIntervalMs: ms(1),
  clockRateBound: num(0, 0.49),
  safetyMarginMs: ms(0),
};

/** How long after the send time of a successful request the holder may run entities. */
export function shardLeaseValidityMs(s: ShardLeaseSettings): number {
  return Math.floor(s.ttlMs * (1 - s.clockRateBound)) - s.safetyMarginMs;
}

/**
 * Defaults merged with `overrides`, validated.
 * @throws ConfigError naming the bad key (also when renewals could not keep the lease:
 *   renewIntervalMs must be below the validity ttl * (1 - clockRateBound) - safetyMarginMs).
 */
export function resolveShardLeaseSettings(
  overrides?: Partial<ShardLeaseSettings>,
): Readonly<ShardLeaseSettings> {
  const s = resolveSettings("sharding.lease.", DEFAULT_SHARD_LEASE_SETTINGS, RULES, overrides);
  const validity = shardLeaseValidityMs(s);
  if (validity <= 0)
    throw new ConfigError(
      "sharding.lease.safetyMarginMs",
      s.safetyMarginMs,
      `less than ttlMs * (1 - clockRateBound) = ${Math.floor(s.ttlMs * (1 - s.clockRateBound))}`,
    );
  if (s.renewIntervalMs >= validity)
    throw new ConfigError(
      "sharding.lease.renewIntervalMs",
      s.renewIntervalMs,
      `less than ttlMs * (1 - clockRateBound) - safetyMarginMs = ${validity}`,
    );
  return s;
}

/** Where the lease is. */
export type ShardLeasePhase = "idle" | "acquiring" | "held" | "lost" | "released";

/** Timer keys of the lease machine. */
export const ShardLeaseTimer = {
  AcquireRetry: "lease-acquire-retry",
  Renew: "lease-renew",
  Deadline: "lease-deadline",
} as const;

export type ShardLeaseInput =
  /** Begin acquiring (the shard was created). */
  | { readonly type: "start" }
  /**
   * The answer to `acquire(sentAtMs)`: the token (held), undefined with no error (held
   * by another owner), or `error` (the store could not be reached or failed).
   */
  | {
      readonly type: "acquire-result";
      readonly sentAtMs: number;
      readonly token: number | undefined;
      readonly error?: string;
    }
  | { readonly type: "timer"; readonly key: string }
  /** The shard stops for another reason (hand-off, shutdown): give the lease up. */
  | { readonly type: "release" };

export type ShardLeaseOutput =
  /** Send one acquire-or-renew request; feed `acquire-result` with this `sentAtMs`. */
  | { readonly type: "acquire"; readonly sentAtMs: number; readonly renewal: boolean }
  /** The lease is held with `token`: entities may start (they write with this token). */
  | { readonly type: "granted"; readonly token: number }
  /** Stop every entity now: the lease may be gone (or is about to be). */
  | { readonly type: "lost"; readonly reason: string }
  /** Release the lease in the store (best effort). */
  | { readonly type: "release" }
  | { readonly type: "start-timer"; readonly key: string; readonly delayMs: number }
  | { readonly type: "cancel-timer"; readonly key: string }
  | { readonly type: "log"; readonly level: "debug" | "info" | "warn"; readonly text: string };

/** The lease of one shard (see the module comment). */
export class ShardLeaseMachine {
  readonly settings: Readonly<ShardLeaseSettings>;
  private current: ShardLeasePhase = "idle";
  private heldToken: number | undefined;
  private lastSentAtMs = Number.NEGATIVE_INFINITY;
  private inFlight = false;
  private out: ShardLeaseOutput[] = [];
  private nowMs = 0;

  constructor(settings?: Partial<ShardLeaseSettings>) {
    this.settings = resolveShardLeaseSettings(settings);
  }

  get phase(): ShardLeasePhase {
    return this.current;
  }

  /** The token while held (undefined otherwise). */
  get token(): number | undefined {
    return this.current === "held" ? this.heldToken : undefined;
  }

  /** The local time by which entities must have stopped (while held). */
  get deadlineMs(): number | undefined {
    return this.current === "held" ? this.deadlineOf(this.lastSentAtMs) : undefined;
  }

  handle(input: ShardLeaseInput, nowMs: number): ShardLeaseOutput[] {
    this.nowMs = nowMs;
    this.out = [];
    switch (input.type) {
      case "start":
        if (this.current === "idle") {
          this.current = "acquiring";
          this.request(false);
        }
        break;
      case "acquire-result":
        this.onResult(input.sentAtMs, input.token, input.error);
        break;
      case "timer":
        this.onTimer(input.key);
        break;
      case "release":
        this.onRelease();
        break;
      default:
        assertNever(input, "shard lease input");
    }
    const out = this.out;
    this.out = [];
    return out;
  }

  private deadlineOf(sentAtMs: number): number {
    return sentAtMs + shardLeaseValidityMs(this.settings);
  }

  private request(renewal: boolean): void {
    this.inFlight = true;
    this.out.push({ type: "acquire", sentAtMs: this.nowMs, renewal });
  }

  private onResult(sentAtMs: number, token: number | undefined, error: string | undefined): void {
    this.inFlight = false;
    if (this.current === "acquiring") {
      if (token !== undefined && this.deadlineOf(sentAtMs) > this.nowMs) {
        this.current = "held";
        this.heldToken = token;
        this.lastSentAtMs = sentAtMs;
        this.cancel(ShardLeaseTimer.AcquireRetry);
        this.out.push({ type: "granted", token });
        this.armHeldTimers(this.settings.renewIntervalMs);
        return;
      }
      const why =
        token !== undefined
          ? "the answer came too late"
          : error === undefined
            ? "held by another owner"
            : `store unavailable: ${error}`;
      this.log(
        "debug",
        `lease not acquired (${why}); retry in ${this.settings.acquireRetryIntervalMs} ms`,
      );
      this.arm(ShardLeaseTimer.AcquireRetry, this.settings.acquireRetryIntervalMs);
      return;
    }
    if (this.current !== "held") return; // lost or released meanwhile: ignore
    if (error !== undefined) {
      const retry = Math.min(this.settings.renewIntervalMs, this.settings.acquireRetryIntervalMs);
      this.log("warn", `lease renewal failed (${error}); retry in ${retry} ms`);
      this.arm(ShardLeaseTimer.Renew, retry);
      return;
    }
    if (token === undefined) {
      this.lose("the lease is held by another owner");
      return;
    }
    if (token !== this.heldToken) {
      this.lose(`the lease expired in the store (token ${this.heldToken} became ${token})`);
      return;
    }
    if (sentAtMs > this.lastSentAtMs) this.lastSentAtMs = sentAtMs;
    this.armHeldTimers(this.settings.renewIntervalMs);
  }

  /** Re-arms the deadline (from the last successful send) and the next renewal. */
  private armHeldTimers(renewInMs: number): void {
    const left = this.deadlineOf(this.lastSentAtMs) - this.nowMs;
    if (left <= 0) {
      this.lose("the lease deadline passed");
      return;
    }
    this.arm(ShardLeaseTimer.Deadline, left);
    this.arm(ShardLeaseTimer.Renew, renewInMs);
  }

  private onTimer(key: string): void {
    switch (key) {
      case ShardLeaseTimer.AcquireRetry:
        if (this.current === "acquiring" && !this.inFlight) this.request(false);
        return;
      case ShardLeaseTimer.Renew:
        if (this.current === "held" && !this.inFlight) this.request(true);
        return;
      case ShardLeaseTimer.Deadline:
        if (this.current !== "held") return;
        if (this.deadlineOf(this.lastSentAtMs) <= this.nowMs)
          this.lose(
            `no successful renewal within ${shardLeaseValidityMs(this.settings)} ms (deadline)`,
          );
        else this.arm(ShardLeaseTimer.Deadline, this.deadlineOf(this.lastSentAtMs) - this.nowMs);
        return;
      default:
        this.log("debug", `unknown lease timer ${key} ignored`);
    }
  }

  private onRelease(): void {
    const wasHeld = this.current === "held";
    if (this.current === "lost" || this.current === "released") return;
    this.current = "released";
    this.cancelAll();
    // A request in flight may still grant the lease: release anyway (idempotent).
    if (wasHeld || this.inFlight) this.out.push({ type: "release" });
  }

  private lose(reason: string): void {
    this.current = "lost";
    this.cancelAll();
    this.log("warn", `shard lease lost: ${reason}; stopping the shard's entities`);
    this.out.push({ type: "lost", reason });
  }

  private cancelAll(): void {
    for (const key of Object.values(ShardLeaseTimer)) this.cancel(key);
  }

  private arm(key: string, delayMs: number): void {
    this.out.push({ type: "start-timer", key, delayMs: Math.max(0, delayMs) });
  }

  private cancel(key: string): void {
    this.out.push({ type: "cancel-timer", key });
  }

  private log(level: "debug" | "info" | "warn", text: string): void {
    this.out.push({ type: "log", level, text });
  }
}
