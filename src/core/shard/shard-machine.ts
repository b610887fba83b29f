/**
 * The shard as a sans-IO machine: the lifecycle of the entities inside one shard.
 * `handle(input, nowMs)` returns outputs as plain data; the driver (an actor in cluster/)
 * creates and stops the real entity actors, runs the timers and the remember store, and
 * performs the outputs in order. Time is an input, timers are outputs.
 *
 * Invariants:
 * - One incarnation per entity: `start-entity-actor` is emitted only for an entity whose
 *   previous incarnation (if any) has been reported terminated.
 * - No message is lost silently: every `deliver` ends as `send-to-entity`, in a
 *   `return-to-region`, or as `buffer-overflow`; per entity, sends keep delivery order.
 *   Messages wait in a per-entity buffer while the entity starts, passivates, waits for
 *   the store or backs off; a terminated entity with waiting messages gets a new
 *   incarnation. All buffers together hold at most bufferSizeMax messages.
 * - Remember entities: persist before acting. A new entity starts only after its
 *   "started" write is acknowledged; an entity counts as remembered only then. A
 *   remembered entity that stops without passivating is restarted after
 *   entityRestartBackoffMs (or at its next message). Automatic passivation (idle, limit)
 *   is off; Passivate stops the entity for good and forgets it.
 * - Hand-off: every entity gets the stop message; buffered and late messages go back to
 *   the region; `shard-stopped` only once every entity has terminated (or was
 *   force-stopped after handOffTimeoutMs) and no remember write is outstanding.
 */
import { assert, assertNever, fail } from "../../base/assert.js";
import type { EntityId, ShardId } from "../sharding/shard-id.js";
import { RememberWriter } from "./remember-writer.js";
import {
  idlePassivationEnabled,
  idleSweepIntervalMs,
  resolveShardSettings,
  type ShardSettings,
} from "./shard-settings.js";
import {
  ENTITY_RESTART_TIMER_PREFIX,
  EntityState,
  entityRestartTimer,
  isLive,
  type ReturnedMessage,
  type ShardInput,
  type ShardLogLevel,
  type ShardOutput,
  ShardPhase,
  type ShardStats,
  ShardTimer,
  type StopReason,
} from "./shard-types.js";

/** Configuration of one shard machine. */
export interface ShardMachineConfig {
  readonly shardId: ShardId;
  readonly settings?: Partial<ShardSettings>;
  /**
   * Shard leases (docs/sharding.md, "Leases and fencing"): start no entity before
   * `lease-granted`; messages wait in the recovering buffer meanwhile.
   */
  readonly leaseRequired?: boolean;
}

/** The buffer of every entity that holds no message (shared, so an idle entity has none). */
const NO_MESSAGES = Object.freeze([]) as unknown as never[];

interface EntityRecord<M> {
  readonly id: EntityId;
  state: EntityState;
  /** Messages for the next incarnation, oldest first; NO_MESSAGES when empty (always while active). */
  buffer: M[];
  /** Last start or message through the shard (idle passivation). */
  lastActivityMs: number;
  /** Why it was asked to stop (while passivating). */
  stopReason: StopReason | undefined;
  /** StartEntity arrived while it was stopping: start again even with no message. */
  startRequested: boolean;
  /** An actor incarnation exists (from start-entity-actor to its termination). */
  hasActor: boolean;
  /** Neighbours in the recency list (starting and active entities only). */
  older: EntityRecord<M> | undefined;
  newer: EntityRecord<M> | undefined;
}

/** A message (or StartEntity) that arrived while the shard was recovering. */
type RecoveringEntry<M> =
  | { readonly entityId: EntityId; readonly start: false; readonly message: M }
  | { readonly entityId: EntityId; readonly start: true };

/** The entity lifecycle of one shard (see the module comment). */
export class ShardMachine<M> {
  readonly shardId: ShardId;
  private readonly settings: Readonly<ShardSettings>;
  private current: ShardPhase;
  private readonly entities = new Map<EntityId, EntityRecord<M>>();
  /**
   * Starting and active entities, least recently used first: a doubly linked list
   * through their records (moving one to the end on every message costs no hashing).
   */
  private readonly recency = new RecencyList<M>();
  private readonly remembered = new Set<EntityId>();
  private readonly timers = new Set<string>();
  private readonly writer: RememberWriter;
  private recoveryQueue: EntityId[] = [];
  private recoveryNext = 0;
  private recovering: RecoveringEntry<M>[] = [];
  private returned: ReturnedMessage<M>[] = [];
  private activeLimit = Number.POSITIVE_INFINITY;
  private buffered = 0;
  private overflows = 0;
  private overflowing = false;
  private autoPassivationOffLogged = false;
  private nowMs = 0;
  private out: ShardOutput<M>[] = [];
  private awaitingLease: boolean;

  constructor(config: ShardMachineConfig) {
    this.shardId = config.shardId;
    this.settings = resolveShardSettings(config.settings);
    this.writer = new RememberWriter(this.settings.maxUpdatesPerWrite);
    this.awaitingLease = config.leaseRequired === true;
    this.current =
      this.settings.rememberEntities || this.awaitingLease
        ? ShardPhase.Recovering
        : ShardPhase.Running;
  }

  /** True until `lease-granted` when the shard needs a lease. */
  get waitingForLease(): boolean {
    return this.awaitingLease;
  }

  /** The current phase. */
  get phase(): ShardPhase {
    return this.current;
  }

  /** Messages held in the shard's buffers now (ShardStats.bufferedMessages, without the scan). */
  get bufferedMessages(): number {
    return this.buffered;
  }

  /** Counters for metrics and tests. */
  get stats(): ShardStats {
    let live = 0;
    for (const rec of this.entities.values()) if (isLive(rec.state)) live++;
    return {
      liveEntities: live,
      activeEntities: this.recency.size,
      bufferedMessages: this.buffered,
      overflowCount: this.overflows,
      activeLimit: this.activeLimit,
    };
  }

  /** What the shard knows of one entity (undefined: nothing, it is not running). */
  entityState(entityId: EntityId): EntityState | undefined {
    return this.entities.get(entityId)?.state;
  }

  /** Every entity the shard tracks, in any state, sorted. */
  entityIds(): EntityId[] {
    return [...this.entities.keys()].sort();
  }

  /** Entities that have an actor (starting, active, passivating), sorted. */
  liveEntityIds(): EntityId[] {
    return [...this.entities]
      .filter(([, r]) => isLive(r.state))
      .map(([id]) => id)
      .sort();
  }

  /** Entities whose "started" write is acknowledged (and no "stopped" since), sorted. */
  rememberedEntityIds(): EntityId[] {
    return [...this.remembered].sort();
  }

  /** Timers the driver should be running, sorted. */
  runningTimers(): string[] {
    return [...this.timers].sort();
  }

  /**
   * The delivery decision's direct branch, the one the machine takes itself for every
   * `deliver` and a driver may take without `handle`: when the shard runs and `entityId`
   * is active, records the delivery at `nowMs` (the entity's activity for idle and limit
   * passivation) and returns true — the message goes straight to the entity (the one
   * output `handle(deliver)` emits then). Else it changes nothing and returns false: the
   * message waits, starts the entity, or is handed back (feed `deliver`). The lockstep
   * property in test/core/shard/shard-properties.test.ts checks that both ways agree.
   */
  deliverToActive(entityId: EntityId, nowMs: number): boolean {
    this.nowMs = nowMs;
    return this.takesDirectly(entityId);
  }

  /** See `deliverToActive` (at the current `nowMs`). */
  private takesDirectly(id: EntityId): boolean {
    if (this.current !== ShardPhase.Running) return false;
    const rec = this.entities.get(id);
    if (rec === undefined || rec.state !== EntityState.Active) return false;
    this.touch(rec);
    return true;
  }

  /** Feeds one input at time `nowMs`; returns the outputs to perform, in order. */
  handle(input: ShardInput<M>, nowMs: number): ShardOutput<M>[] {
    this.nowMs = nowMs;
    this.out = [];
    if (this.current === ShardPhase.Stopped) this.onInputWhenStopped(input);
    else this.dispatch(input);
    this.flushWrites();
    this.maybeCompleteHandOff();
    const out = this.out;
    this.out = [];
    return out;
  }

  private dispatch(input: ShardInput<M>): void {
    switch (input.type) {
      case "deliver":
        this.onDeliver(input.entityId, input.message);
        return;
      case "start-entity":
        this.onStartEntity(input.entityId);
        return;
      case "entity-started":
        this.onEntityStarted(input.entityId);
        return;
      case "entity-terminated":
        this.onEntityTerminated(input.entityId, input.passivated, input.failed);
        return;
      case "passivate":
        this.onPassivate(input.entityId, input.stopMessage);
        return;
      case "timer":
        this.onTimer(input.key);
        return;
      case "hand-off":
        this.onHandOff(input.stopMessage);
        return;
      case "remember-store-ack":
        this.onStoreAck(input.batchId);
        return;
      case "remember-store-failed":
        this.onStoreFailed(input.batchId);
        return;
      case "recovered-entities":
        this.onRecovered(input.entityIds);
        return;
      case "set-active-limit":
        this.onSetActiveLimit(input.limit);
        return;
      case "shutdown":
        this.onShutdown();
        return;
      case "lease-granted":
        this.onLeaseGranted();
        return;
      case "lease-lost":
        this.onShutdown();
        this.emit({ type: "shard-stopped" });
        return;
      default:
        assertNever(input, "shard input");
    }
  }

  // ---- messages ------------------------------------------------------------------

  private onDeliver(id: EntityId, message: M): void {
    if (this.takesDirectly(id)) {
      this.emit({ type: "send-to-entity", entityId: id, message });
      return;
    }
    if (this.current === ShardPhase.Recovering) {
      if (this.reserve(id, message)) this.recovering.push({ entityId: id, start: false, message });
      return;
    }
    if (this.current === ShardPhase.HandingOff) {
      if (this.reserve(id, message)) this.returned.push({ entityId: id, message });
      return;
    }
    const rec = this.entities.get(id);
    if (rec === undefined) {
      if (this.reserve(id, message)) this.createEntity(id, [message]);
      return;
    }
    switch (rec.state) {
      case EntityState.Starting:
        this.touch(rec);
        if (this.reserve(id, message)) this.hold(rec, message);
        return;
      case EntityState.Backoff:
        if (this.reserve(id, message)) this.hold(rec, message);
        this.restartNow(id, rec);
        return;
      default:
        if (this.reserve(id, message)) this.hold(rec, message);
    }
  }

  private onStartEntity(id: EntityId): void {
    if (this.current === ShardPhase.Recovering) {
      if (this.buffered >= this.settings.bufferSizeMax) {
        this.log("warn", `start-entity ${id} dropped: shard buffer full`);
        return;
      }
      this.buffered++;
      this.recovering.push({ entityId: id, start: true });
      return;
    }
    if (this.current === ShardPhase.HandingOff) {
      this.log("debug", `start-entity ${id} ignored: shard is handing off`);
      return;
    }
    const rec = this.entities.get(id);
    if (rec === undefined) {
      this.createEntity(id);
      return;
    }
    if (rec.state === EntityState.Backoff) {
      this.restartNow(id, rec);
      return;
    }
    if (rec.state === EntityState.Passivating || rec.state === EntityState.RememberingStop)
      rec.startRequested = true;
  }

  /** Takes a buffer slot for `message`, or reports it as overflow and returns false. */
  private reserve(id: EntityId, message: M): boolean {
    if (this.buffered < this.settings.bufferSizeMax) {
      this.buffered++;
      return true;
    }
    this.overflows++;
    if (!this.overflowing)
      this.log("warn", `shard buffer full (bufferSizeMax=${this.settings.bufferSizeMax})`);
    this.overflowing = true;
    this.emit({ type: "buffer-overflow", entityId: id, message });
    return false;
  }

  private release(n: number): void {
    this.buffered -= n;
    assert(this.buffered >= 0, "shard buffer count below zero");
    if (this.buffered < this.settings.bufferSizeMax) this.overflowing = false;
  }

  private hold(rec: EntityRecord<M>, message: M): void {
    if (rec.buffer === NO_MESSAGES) rec.buffer = [message];
    else rec.buffer.push(message);
  }

  private flushBuffer(id: EntityId, rec: EntityRecord<M>): void {
    for (const message of rec.buffer) this.emit({ type: "send-to-entity", entityId: id, message });
    this.release(rec.buffer.length);
    rec.buffer = NO_MESSAGES;
  }

  private returnBuffer(id: EntityId, rec: EntityRecord<M>): void {
    for (const message of rec.buffer) this.returned.push({ entityId: id, message });
    rec.buffer = NO_MESSAGES;
  }

  private emitReturned(): void {
    if (this.returned.length === 0) return;
    this.emit({ type: "return-to-region", messages: this.returned });
    this.release(this.returned.length);
    this.returned = [];
  }

  // ---- entity lifecycle ----------------------------------------------------------

  /** A new entity: remembered first when remembering, else started at once. */
  private createEntity(id: EntityId, buffer: M[] = NO_MESSAGES): void {
    const rec: EntityRecord<M> = {
      id,
      state: EntityState.RememberingStart,
      buffer,
      lastActivityMs: this.nowMs,
      stopReason: undefined,
      startRequested: false,
      hasActor: false,
      older: undefined,
      newer: undefined,
    };
    this.entities.set(id, rec);
    if (this.settings.rememberEntities && !this.remembered.has(id))
      this.writer.enqueue(id, "started");
    else this.startIncarnation(id, rec);
  }

  private startIncarnation(id: EntityId, rec: EntityRecord<M>): void {
    if (rec.hasActor) fail(`entity "${id}" started while an incarnation is live`);
    rec.hasActor = true;
    rec.state = EntityState.Starting;
    rec.stopReason = undefined;
    rec.startRequested = false;
    rec.lastActivityMs = this.nowMs;
    this.recency.add(rec);
    this.emit({ type: "start-entity-actor", entityId: id });
    if (this.settings.rememberEntities && this.settings.passivateIdleAfterMs > 0)
      this.logAutoPassivationOff(`idle after ${this.settings.passivateIdleAfterMs} ms`);
    this.armIdleSweep();
    this.maybeEvict();
  }

  private restartNow(id: EntityId, rec: EntityRecord<M>): void {
    this.cancelTimer(entityRestartTimer(id));
    this.startIncarnation(id, rec);
  }

  private touch(rec: EntityRecord<M>): void {
    rec.lastActivityMs = this.nowMs;
    this.recency.moveToEnd(rec);
  }

  private onEntityStarted(id: EntityId): void {
    const rec = this.entities.get(id);
    if (rec?.state !== EntityState.Starting) {
      this.log("debug", `entity-started ${id} ignored: entity is ${rec?.state ?? "absent"}`);
      return;
    }
    this.becomeActive(id, rec);
  }

  private becomeActive(id: EntityId, rec: EntityRecord<M>): void {
    rec.state = EntityState.Active;
    this.flushBuffer(id, rec);
    // Entities still starting cannot be evicted; the limit is enforced once they run.
    this.maybeEvict();
  }

  private onPassivate(id: EntityId, stopMessage: M | undefined): void {
    const rec = this.entities.get(id);
    if (this.current !== ShardPhase.Running || rec === undefined) {
      this.log("debug", `passivate ${id} ignored (${this.current})`);
      return;
    }
    if (rec.state === EntityState.Starting) this.becomeActive(id, rec);
    if (rec.state !== EntityState.Active) {
      this.log("debug", `passivate ${id} ignored: entity is ${rec.state}`);
      return;
    }
    this.beginStop(id, rec, "passivate", stopMessage);
  }

  private beginStop(
    id: EntityId,
    rec: EntityRecord<M>,
    reason: StopReason,
    stopMessage: M | undefined,
  ): void {
    rec.state = EntityState.Passivating;
    rec.stopReason = reason;
    this.recency.delete(rec);
    this.emit({ type: "stop-entity-actor", entityId: id, stopMessage, reason });
  }

  private onEntityTerminated(id: EntityId, passivated: boolean, failed: boolean): void {
    const rec = this.entities.get(id);
    if (rec === undefined || !isLive(rec.state)) {
      this.log("debug", `termination of ${id} ignored: no live incarnation`);
      return;
    }
    rec.hasActor = false;
    this.recency.delete(rec);
    const deliberate = rec.state === EntityState.Passivating || passivated;
    if (failed) this.log("warn", `entity ${id} failed and was stopped`);
    if (this.current === ShardPhase.HandingOff) {
      this.terminatedInHandOff(id, rec);
      return;
    }
    if (deliberate) this.afterPassivation(id, rec);
    else this.afterUnexpectedStop(id, rec);
  }

  private afterPassivation(id: EntityId, rec: EntityRecord<M>): void {
    if (rec.buffer.length > 0 || rec.startRequested) {
      this.startIncarnation(id, rec);
      return;
    }
    if (this.settings.rememberEntities && this.remembered.has(id)) {
      rec.state = EntityState.RememberingStop;
      rec.stopReason = undefined;
      this.writer.enqueue(id, "stopped");
      return;
    }
    this.entities.delete(id);
  }

  /** Stopped or crashed without being asked: restart later if remembered or awaited. */
  private afterUnexpectedStop(id: EntityId, rec: EntityRecord<M>): void {
    const remembered = this.settings.rememberEntities && this.remembered.has(id);
    if (!remembered && rec.buffer.length === 0) {
      this.log("debug", `entity ${id} stopped; its next message starts it again`);
      this.entities.delete(id);
      return;
    }
    rec.state = EntityState.Backoff;
    const backoff = this.settings.entityRestartBackoffMs;
    this.log("info", `entity ${id} stopped without passivating; restart in ${backoff} ms`);
    this.armTimer(entityRestartTimer(id), backoff);
  }

  // ---- automatic passivation -----------------------------------------------------

  private armIdleSweep(): void {
    if (!idlePassivationEnabled(this.settings) || this.current !== ShardPhase.Running) return;
    if (this.recency.size === 0 || this.timers.has(ShardTimer.IdleSweep)) return;
    this.armTimer(ShardTimer.IdleSweep, idleSweepIntervalMs(this.settings));
  }

  private onIdleSweep(): void {
    const idleAfter = this.settings.passivateIdleAfterMs;
    for (let rec = this.recency.oldest, next: typeof rec; rec !== undefined; rec = next) {
      next = rec.newer; // beginStop unlinks rec
      if (rec.state === EntityState.Active && this.nowMs - rec.lastActivityMs >= idleAfter)
        this.beginStop(rec.id, rec, "idle", undefined);
    }
    this.armIdleSweep();
  }

  private onSetActiveLimit(limit: number): void {
    if (!(limit === Number.POSITIVE_INFINITY || (Number.isInteger(limit) && limit >= 1)))
      fail(`active-entity limit must be an integer >= 1 or Infinity, got ${limit}`);
    this.activeLimit = limit;
    if (this.current === ShardPhase.Running) this.maybeEvict();
  }

  /** Over the limit: passivate active entities, least recently used first. */
  private maybeEvict(): void {
    if (this.recency.size <= this.activeLimit) return;
    if (this.settings.rememberEntities) {
      this.logAutoPassivationOff(`active-entity limit ${this.activeLimit}`);
      return;
    }
    for (let rec = this.recency.oldest, next: typeof rec; rec !== undefined; rec = next) {
      if (this.recency.size <= this.activeLimit) return;
      next = rec.newer; // beginStop unlinks rec
      if (rec.state === EntityState.Active) this.beginStop(rec.id, rec, "limit", undefined);
    }
  }

  private logAutoPassivationOff(what: string): void {
    if (this.autoPassivationOffLogged) return;
    this.autoPassivationOffLogged = true;
    this.log(
      "info",
      `automatic passivation (${what}) is off: remember-entities keeps entities running until they passivate`,
    );
  }

  // ---- timers --------------------------------------------------------------------

  private armTimer(key: string, delayMs: number): void {
    if (this.timers.has(key)) fail(`timer ${key} already running`);
    this.timers.add(key);
    this.emit({ type: "start-timer", key, delayMs });
  }

  private cancelTimer(key: string): void {
    if (this.timers.delete(key)) this.emit({ type: "cancel-timer", key });
  }

  private onTimer(key: string): void {
    if (!this.timers.delete(key)) {
      this.log("debug", `timer ${key} ignored: not running`);
      return;
    }
    switch (key) {
      case ShardTimer.IdleSweep:
        this.onIdleSweep();
        return;
      case ShardTimer.EntityRecovery:
        this.recoverNextBatch();
        return;
      case ShardTimer.RememberRetry:
        return; // flushWrites, after every input, rewrites the requeued batch
      case ShardTimer.HandOffTimeout:
        this.onHandOffTimeout();
        return;
    }
    if (!key.startsWith(ENTITY_RESTART_TIMER_PREFIX)) fail(`unknown shard timer ${key}`);
    const id = key.slice(ENTITY_RESTART_TIMER_PREFIX.length);
    const rec = this.entities.get(id);
    if (rec?.state === EntityState.Backoff) this.startIncarnation(id, rec);
  }

  // ---- remember entities ---------------------------------------------------------

  private onRecovered(ids: readonly EntityId[]): void {
    if (!this.settings.rememberEntities) {
      this.log("warn", "recovered-entities ignored: remember-entities is off");
      return;
    }
    if (this.current !== ShardPhase.Recovering || this.awaitingLease) {
      this.log("debug", `recovered-entities ignored (${this.current})`);
      return;
    }
    const unique = [...new Set(ids)];
    for (const id of unique) this.remembered.add(id);
    this.current = ShardPhase.Running;
    this.log("info", `recovered ${unique.length} remembered entities`);
    if (this.settings.entityRecoveryStrategy === "all") {
      for (const id of unique) this.startRemembered(id);
    } else {
      this.recoveryQueue = unique;
      this.recoveryNext = 0;
      this.recoverNextBatch();
    }
    this.replayRecovering();
  }

  /** Feeds what waited while recovering again, in arrival order (the shard now runs). */
  private replayRecovering(): void {
    const waiting = this.recovering;
    this.recovering = [];
    this.release(waiting.length);
    for (const e of waiting)
      if (e.start) this.onStartEntity(e.entityId);
      else this.onDeliver(e.entityId, e.message);
  }

  private onLeaseGranted(): void {
    if (!this.awaitingLease || this.current !== ShardPhase.Recovering) {
      this.log("debug", `lease-granted ignored (${this.current})`);
      return;
    }
    this.awaitingLease = false;
    this.log("debug", "shard lease granted");
    if (this.settings.rememberEntities) return; // recovered-entities comes next
    this.current = ShardPhase.Running;
    this.replayRecovering();
  }

  /** "constant" strategy: start the next batch, then wait for the next tick. */
  private recoverNextBatch(): void {
    if (this.current !== ShardPhase.Running) return;
    const n = this.settings.entityRecoveryConstantRateNumberOfEntities;
    let started = 0;
    while (started < n && this.recoveryNext < this.recoveryQueue.length) {
      const id = this.recoveryQueue[this.recoveryNext++] as EntityId;
      if (this.startRemembered(id)) started++;
    }
    if (this.recoveryNext < this.recoveryQueue.length)
      this.armTimer(ShardTimer.EntityRecovery, this.settings.entityRecoveryConstantRateFrequencyMs);
    else this.recoveryQueue = [];
  }

  /** Starts a remembered entity unless it already started (e.g. by a message). */
  private startRemembered(id: EntityId): boolean {
    if (this.entities.has(id) || !this.remembered.has(id)) return false;
    this.createEntity(id);
    return true;
  }

  private flushWrites(): void {
    if (!this.settings.rememberEntities || this.timers.has(ShardTimer.RememberRetry)) return;
    if (this.current !== ShardPhase.Running && this.current !== ShardPhase.HandingOff) return;
    const w = this.writer.next();
    if (w !== undefined) this.emit({ type: "write-remember", batchId: w.batchId, batch: w.batch });
  }

  private onStoreAck(batchId: number): void {
    const batch = this.writer.ack(batchId);
    if (batch === undefined) {
      this.log("debug", `ack of write #${batchId} ignored`);
      return;
    }
    const running = this.current === ShardPhase.Running;
    for (const id of batch.started) {
      this.remembered.add(id);
      const rec = this.entities.get(id);
      if (rec?.state !== EntityState.RememberingStart) continue;
      if (running) this.startIncarnation(id, rec);
      else this.entities.delete(id);
    }
    for (const id of batch.stopped) {
      this.remembered.delete(id);
      const rec = this.entities.get(id);
      if (rec?.state !== EntityState.RememberingStop) continue;
      if (running && (rec.buffer.length > 0 || rec.startRequested)) {
        rec.state = EntityState.RememberingStart;
        rec.startRequested = false;
        this.writer.enqueue(id, "started");
      } else this.entities.delete(id);
    }
  }

  private onStoreFailed(batchId: number): void {
    const handingOff = this.current === ShardPhase.HandingOff;
    const batch = this.writer.fail(batchId, !handingOff);
    if (batch === undefined) {
      this.log("debug", `failure of write #${batchId} ignored`);
      return;
    }
    const ids = [...batch.started, ...batch.stopped];
    if (!handingOff) {
      const backoff = this.settings.rememberWriteRetryBackoffMs;
      this.log(
        "warn",
        `remember write #${batchId} failed (${ids.length} ids); retry in ${backoff} ms`,
      );
      this.armTimer(ShardTimer.RememberRetry, backoff);
      return;
    }
    this.log("warn", `remember write #${batchId} failed during hand-off; not retried`);
    for (const id of ids) {
      const rec = this.entities.get(id);
      if (rec !== undefined && !isLive(rec.state)) this.entities.delete(id);
    }
  }

  // ---- hand-off and shutdown -----------------------------------------------------

  private onHandOff(stopMessage: M | undefined): void {
    if (this.current === ShardPhase.HandingOff) {
      this.log("debug", "hand-off ignored: already handing off");
      return;
    }
    this.current = ShardPhase.HandingOff;
    this.cancelTimer(ShardTimer.IdleSweep);
    this.cancelTimer(ShardTimer.EntityRecovery);
    this.cancelTimer(ShardTimer.RememberRetry);
    this.recoveryQueue = [];
    this.returnRecovering();
    let stopping = 0;
    for (const [id, rec] of this.entities) {
      this.returnBuffer(id, rec);
      rec.startRequested = false;
      if (rec.state === EntityState.Starting || rec.state === EntityState.Active) {
        this.beginStop(id, rec, "hand-off", stopMessage);
        stopping++;
      } else if (rec.state === EntityState.Backoff) {
        this.cancelTimer(entityRestartTimer(id));
        this.entities.delete(id);
      }
    }
    this.log("info", `hand-off: stopping ${stopping} entities`);
    this.flushWrites();
    if (!this.handOffDone())
      this.armTimer(ShardTimer.HandOffTimeout, this.settings.handOffTimeoutMs);
  }

  /** Messages that waited for the shard's recovery go back; StartEntity requests lapse. */
  private returnRecovering(): void {
    for (const e of this.recovering)
      if (e.start) this.release(1);
      else this.returned.push({ entityId: e.entityId, message: e.message });
    this.recovering = [];
  }

  private terminatedInHandOff(id: EntityId, rec: EntityRecord<M>): void {
    const passivatedBefore = rec.stopReason !== undefined && rec.stopReason !== "hand-off";
    if (passivatedBefore && this.settings.rememberEntities && this.remembered.has(id)) {
      rec.state = EntityState.RememberingStop;
      this.writer.enqueue(id, "stopped");
    } else this.entities.delete(id);
  }

  private onHandOffTimeout(): void {
    const live = this.liveEntityIds();
    this.log(
      "warn",
      `hand-off timed out after ${this.settings.handOffTimeoutMs} ms: force-stopping ${live.length} entities`,
    );
    for (const id of live) this.emit({ type: "force-stop-entity-actor", entityId: id });
    if (!this.writer.idle) this.log("warn", "hand-off timed out: remember writes abandoned");
    this.writer.abandon();
    this.entities.clear();
    this.recency.clear();
    // maybeCompleteHandOff, after this input, emits the held messages and shard-stopped.
  }

  private handOffDone(): boolean {
    return this.entities.size === 0 && this.writer.idle;
  }

  private maybeCompleteHandOff(): void {
    if (this.current !== ShardPhase.HandingOff || !this.handOffDone()) return;
    this.cancelTimer(ShardTimer.HandOffTimeout);
    this.emitReturned();
    this.current = ShardPhase.Stopped;
    this.emit({ type: "shard-stopped" });
  }

  private onShutdown(): void {
    for (const key of this.timers) this.emit({ type: "cancel-timer", key });
    this.timers.clear();
    this.returnRecovering();
    for (const [id, rec] of this.entities) {
      if (isLive(rec.state)) this.emit({ type: "force-stop-entity-actor", entityId: id });
      this.returnBuffer(id, rec);
    }
    this.entities.clear();
    this.recency.clear();
    this.writer.abandon();
    this.recoveryQueue = [];
    this.emitReturned();
    this.current = ShardPhase.Stopped;
    this.log("info", "shard shut down");
  }

  private onInputWhenStopped(input: ShardInput<M>): void {
    if (input.type === "deliver")
      this.emit({
        type: "return-to-region",
        messages: [{ entityId: input.entityId, message: input.message }],
      });
    else if (input.type === "hand-off") this.emit({ type: "shard-stopped" });
  }

  // ---- output --------------------------------------------------------------------

  private emit(output: ShardOutput<M>): void {
    this.out.push(output);
  }

  private log(level: ShardLogLevel, text: string): void {
    this.emit({ type: "log", level, text });
  }
}

/** The shard's recency order: an intrusive doubly linked list of entity records. */
class RecencyList<M> {
  /** Least recently used. */
  oldest: EntityRecord<M> | undefined;
  private newest: EntityRecord<M> | undefined;
  size = 0;

  private has(rec: EntityRecord<M>): boolean {
    return rec.older !== undefined || this.oldest === rec;
  }

  /** Appends `rec` as the newest, unless it is listed already (like Set.add). */
  add(rec: EntityRecord<M>): void {
    if (!this.has(rec)) this.append(rec);
  }

  /** Makes `rec` the newest (like Set delete + add). */
  moveToEnd(rec: EntityRecord<M>): void {
    if (this.newest === rec) return;
    this.delete(rec);
    this.append(rec);
  }

  delete(rec: EntityRecord<M>): void {
    if (!this.has(rec)) return;
    const { older, newer } = rec;
    if (older !== undefined) older.newer = newer;
    else this.oldest = newer;
    if (newer !== undefined) newer.older = older;
    else this.newest = older;
    rec.older = undefined;
    rec.newer = undefined;
    this.size--;
  }

  clear(): void {
    for (let rec = this.oldest; rec !== undefined; ) {
      const next: EntityRecord<M> | undefined = rec.newer;
      rec.older = undefined;
      rec.newer = undefined;
      rec = next;
    }
    this.oldest = undefined;
    this.newest = undefined;
    this.size = 0;
  }

  private append(rec: EntityRecord<M>): void {
    rec.older = this.newest;
    rec.newer = undefined;
    if (this.newest !== undefined) this.newest.newer = rec;
    else this.oldest = rec;
    this.newest = rec;
    this.size++;
  }
}
