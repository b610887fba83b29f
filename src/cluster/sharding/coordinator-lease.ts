/**
 * The lease of a type's coordinator singleton when the type has shard leases
 * (docs/sharding.md, "Leases and fencing"): a `Lease` on the same LeaseStore, named
 * `coordinatorLeaseName(type)`, timed exactly like a shard's lease by the same machine
 * (core/shard/shard-lease-machine.ts): renewals every `renewIntervalMs`, and `onLost`
 * at the deadline (the send time of the last successful request + ttl * (1 -
 * clockRateBound) - safetyMarginMs), before the store can let anyone else acquire it.
 *
 * `acquire` is ONE attempt, as the Lease port asks: it resolves true once the store
 * granted it (renewals then run until `release` or the loss), false when the store
 * refused it or could not be reached (the singleton manager retries on its own timer).
 */
import type { Disposable } from "../../base/disposable.js";
import {
  type ShardLeaseInput,
  ShardLeaseMachine,
  type ShardLeaseOutput,
  type ShardLeaseSettings,
} from "../../core/shard/shard-lease-machine.js";
import type { Clock } from "../../ports/clock.js";
import type { Lease, LeaseStore } from "../../ports/lease.js";
import type { Scheduler } from "../../ports/scheduler.js";

/**
 * The coordinator's lease name. Shard leases are `<type>/<shardId>`; this one has no
 * slash after the type, so it never equals a shard's.
 */
export function coordinatorLeaseName(typeName: string): string {
  return `${typeName}.coordinator`;
}

/** A Lease on a LeaseStore, timed by the shard lease machine (see the module comment). */
export class CoordinatorLease implements Lease {
  private machine: ShardLeaseMachine | undefined;
  private readonly timers = new Map<string, Disposable>();
  private pending: ((held: boolean) => void) | undefined;
  private onLost: ((reason: unknown) => void) | undefined;

  constructor(
    private readonly store: LeaseStore,
    readonly name: string,
    readonly owner: string,
    private readonly settings: ShardLeaseSettings,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
  ) {}

  acquire(onLost?: (reason: unknown) => void): Promise<boolean> {
    this.onLost = onLost;
    if (this.machine?.phase === "held") return Promise.resolve(true);
    this.reset();
    const m = new ShardLeaseMachine(this.settings);
    this.machine = m;
    return new Promise<boolean>((resolve) => {
      this.pending = resolve;
      this.feed(m, { type: "start" });
    });
  }

  async release(): Promise<boolean> {
    const m = this.machine;
    if (m === undefined) return false;
    const held = m.phase === "held";
    this.feed(m, { type: "release" });
    this.reset();
    return held;
  }

  checkLease(): boolean {
    const deadline = this.machine?.deadlineMs;
    return deadline !== undefined && this.clock.now() < deadline;
  }

  fencingToken(): number | undefined {
    return this.checkLease() ? this.machine?.token : undefined;
  }

  /** Forget the current attempt or holding: timers cancelled, a pending acquire answered. */
  private reset(): void {
    for (const t of this.timers.values()) t.dispose();
    this.timers.clear();
    this.machine = undefined;
    this.settle(false);
  }

  private settle(held: boolean): void {
    const resolve = this.pending;
    this.pending = undefined;
    resolve?.(held);
  }

  private feed(m: ShardLeaseMachine, input: ShardLeaseInput): void {
    if (this.machine !== m) return; // a stale answer or timer
    const before = m.phase;
    for (const o of m.handle(input, this.clock.now())) this.perform(m, o);
    // one attempt only: still acquiring after an answer means refused or unreachable
    if (input.type === "acquire-result" && before === "acquiring" && m.phase === "acquiring")
      this.reset();
  }

  private perform(m: ShardLeaseMachine, o: ShardLeaseOutput): void {
    switch (o.type) {
      case "acquire":
        this.store.acquireLease(this.name, this.owner, this.settings.ttlMs).then(
          (token) => this.feed(m, { type: "acquire-result", sentAtMs: o.sentAtMs, token }),
          (error: unknown) =>
            this.feed(m, {
              type: "acquire-result",
              sentAtMs: o.sentAtMs,
              token: undefined,
              error: String(error),
            }),
        );
        return;
      case "granted":
        this.settle(true);
        return;
      case "lost": {
        const onLost = this.onLost;
        this.reset();
        onLost?.(o.reason);
        return;
      }
      case "release":
        this.store.releaseLease(this.name, this.owner).catch(() => false);
        return;
      case "start-timer": {
        this.timers.get(o.key)?.dispose();
        this.timers.set(
          o.key,
          this.scheduler.schedule(o.delayMs, () => {
            this.timers.delete(o.key);
            this.feed(m, { type: "timer", key: o.key });
          }),
        );
        return;
      }
      case "cancel-timer":
        this.timers.get(o.key)?.dispose();
        this.timers.delete(o.key);
        return;
      case "log":
        return; // the singleton manager logs refusals and losses
    }
  }
}
