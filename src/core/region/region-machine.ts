/**
 * The shard region (and proxy) as a sans-IO machine (docs/sharding-region.md): it
 * routes each message to the region that hosts its shard, buffering while the home is
 * unknown or moving, and runs the local side of HostShard and hand-off. `handle(input,
 * nowMs)` returns outputs as plain data; the driver (an actor in cluster/) performs them
 * in order, runs the timers and the local shard actors. Time is an input, timers are
 * outputs.
 *
 * Routing (docs/sharding-region.md, "Routing"): a shard's home is asked of the coordinator once
 * (GetShardHome, again on each retry tick while unanswered); messages wait in a per-shard
 * buffer meanwhile. A home elsewhere gets them forwarded; a home here gets the local
 * shard started, and the messages follow once it is up. After that the coordinator is no
 * longer involved.
 *
 * Invariants:
 * - Order: a message for a shard is never sent while older ones for that shard wait.
 *   Buffers drain oldest first; messages a stopping local shard hands back go to the
 *   front. So messages of one sender to one entity leave in the order they came.
 * - Nothing is lost silently: every message is forwarded, given to a local shard (which
 *   delivers it or hands it back), buffered, or a counted dead letter (buffer overflow,
 *   region stopped). All buffers together hold at most bufferSizeMax new messages.
 * - One local incarnation per shard: `start-shard` only when no actor of that shard
 *   exists here. A proxy never starts a shard.
 * - Hand-off: BeginHandOff makes the region forget the home and buffer (it always acks,
 *   to the sender, even for unknown shards), except on the shard's owner, whose running
 *   local shard keeps taking messages until HandOff; HandOff stops the local shard, and
 *   ShardStopped goes out only once it has stopped. A home announced while the local
 *   shard is still handing off or stopping is not used: the region asks again afterwards.
 * - Coordinator identity: HostShard and ShardHome count only from the coordinator
 *   incarnation this region is registered with. BeginHandOff and HandOff are obeyed from
 *   any (buffering and stopping are always safe) and answered to their sender.
 */
import { assert, assertNever, fail } from "../../base/assert.js";
import { compareStrings } from "../../base/compare.js";
import { RateLimiter } from "../../base/rate-limiter.js";
import type { CoordinatorCommand, RegionCommand, RegionId } from "../../protocol/sharding.js";
import type { ShardId } from "../sharding/shard-id.js";
import { BufferLevelWarning } from "./buffer-level-warning.js";
import { RegionRegistration } from "./region-registration.js";
import { type RegionSettings, resolveRegionSettings } from "./region-settings.js";
import {
  type CoordinatorRef,
  LocalShardState,
  type RegionDropReason,
  type RegionEnvelope,
  type RegionInput,
  type RegionLogLevel,
  type RegionOutput,
  RegionPhase,
  type RegionStats,
  RegionTimer,
  type RegionView,
} from "./region-types.js";
import { ShardBuffers } from "./shard-buffers.js";

/** Construction parameters of one region or proxy. */
export interface RegionConfig {
  /** This region's id, as the coordinator and other regions address it. */
  readonly self: RegionId;
  /** Unique address of this region's node (sent in Register). */
  readonly member: string;
  /** The entity type (logs). */
  readonly typeName: string;
  /** Proxy only: routes, never hosts shards. */
  readonly proxy?: boolean;
  /** The sharding role of the entity type (logs). */
  readonly role?: string;
  /** The role the coordinator singleton runs on, when it is not `role` (logs). */
  readonly coordinatorRole?: string;
  readonly settings?: Partial<RegionSettings>;
}

interface LocalShard {
  state: LocalShardState;
  /** HostShard came from this coordinator: answer ShardStarted once the shard is up. */
  startedReplyTo: CoordinatorRef | undefined;
  /** The HandOff being served: ShardStopped goes to this coordinator with this id. */
  handOff: { readonly id: number; readonly coordinator: CoordinatorRef } | undefined;
}

interface MutableStats {
  overflowCount: number;
  deadLetters: number;
  registrationAttempts: number;
}

/** The shard region or proxy (see the module comment). */
export class RegionMachine<M> {
  readonly settings: Readonly<RegionSettings>;
  private readonly self: RegionId;
  private readonly member: string;
  private readonly typeName: string;
  private readonly proxy: boolean;
  private readonly role: string | undefined;
  private readonly coordinatorRole: string | undefined;
  private current: RegionPhase = RegionPhase.Idle;
  private readonly registration: RegionRegistration;
  /** Known homes. A home equal to `self` implies a starting or running local shard. */
  private readonly homes = new Map<ShardId, RegionId>();
  private readonly local = new Map<ShardId, LocalShard>();
  private readonly buffers = new ShardBuffers<M>();
  /** GetShardHome sent to the current coordinator and not answered yet. */
  private readonly asked = new Set<ShardId>();
  private readonly levelWarning: BufferLevelWarning;
  private readonly overflowLog: RateLimiter;
  private readonly timers = new Set<string>();
  private readonly counters: MutableStats = {
    overflowCount: 0,
    deadLetters: 0,
    registrationAttempts: 0,
  };
  private out: RegionOutput<M>[] = [];
  private nowMs = 0;

  /** Throws ConfigError on bad settings. */
  constructor(config: RegionConfig) {
    this.settings = resolveRegionSettings(config.settings);
    this.self = config.self;
    this.member = config.member;
    this.typeName = config.typeName;
    this.proxy = config.proxy ?? false;
    this.role = config.role;
    this.coordinatorRole = config.coordinatorRole ?? config.role;
    this.registration = new RegionRegistration(this.settings);
    this.levelWarning = new BufferLevelWarning(
      this.settings.bufferSizeMax,
      this.settings.warnIntervalMs,
    );
    this.overflowLog = new RateLimiter(1, this.settings.warnIntervalMs);
  }

  /** The current phase. */
  get phase(): RegionPhase {
    return this.current;
  }

  /** Counters for metrics and tests. */
  get stats(): RegionStats {
    return { bufferedMessages: this.buffers.total, ...this.counters };
  }

  /** A read-only picture of the region. */
  view(): RegionView {
    const byShard = <T>(a: { shard: ShardId } & T, b: { shard: ShardId } & T) =>
      compareStrings(a.shard, b.shard);
    return {
      phase: this.current,
      coordinator: this.registration.coordinator,
      registered: this.registration.registered,
      homes: [...this.homes].map(([shard, region]) => ({ shard, region })).sort(byShard),
      localShards: [...this.local].map(([shard, l]) => ({ shard, state: l.state })).sort(byShard),
      buffered: this.buffers
        .shards()
        .map((shard) => ({ shard, count: this.buffers.sizeOf(shard) }))
        .sort(byShard),
      stats: this.stats,
    };
  }

  /** Timers the driver should be running, sorted. */
  runningTimers(): string[] {
    return [...this.timers].sort();
  }

  /** This region's id (what `route` answers for the local shard). */
  get id(): RegionId {
    return this.self;
  }

  /**
   * The routing decision (pure query), the one the machine acts on for every message and
   * a driver may act on itself: where a message for `shard` goes now — this region's id
   * (`id`) when the local shard takes it (`deliver-local`), another region's id when it is
   * forwarded there (`forward`) — or undefined when it must wait: the home is unknown or
   * moving, the local shard is not up yet, older messages of the shard wait, or the
   * region does not route (not started, or stopped).
   *
   * When it is defined, `handle(deliver)` for `shard` emits exactly that one output and
   * changes no state (for a `forwarded` message only when it names this region: one
   * forwarded elsewhere waits), so a driver's fast path may send the message itself
   * without `handle` (test/core/region/region-machine.property.test.ts checks both on
   * every delivery; allocation-free).
   */
  route(shard: ShardId): RegionId | undefined {
    if (this.current !== RegionPhase.Running && this.current !== RegionPhase.ShuttingDown)
      return undefined;
    return this.buffers.has(shard) ? undefined : this.homeOf(shard);
  }

  /** Feeds one input at time `nowMs`; returns the outputs to perform, in order. */
  handle(input: RegionInput<M>, nowMs: number): RegionOutput<M>[] {
    this.nowMs = nowMs;
    this.out = [];
    if (this.current === RegionPhase.Stopped) this.onInputWhenStopped(input);
    else {
      if (this.current === RegionPhase.Idle && input.type !== "start")
        fail(`region input "${input.type}" before "start"`);
      this.dispatch(input);
      this.maybeFinishShutdown();
      if (!this.isStopped()) this.ensureTimers();
    }
    const out = this.out;
    this.out = [];
    return out;
  }

  /** A method, not a property read, so the compiler does not narrow across dispatch. */
  private isStopped(): boolean {
    return this.current === RegionPhase.Stopped;
  }

  private dispatch(input: RegionInput<M>): void {
    switch (input.type) {
      case "start":
        this.onStart();
        return;
      case "deliver":
        if (input.forwarded === true) this.onForwarded(input.shard);
        this.onDeliver(input.shard, {
          entityId: input.entityId,
          message: input.message,
          sender: input.sender,
        });
        return;
      case "coordinator-changed":
        this.onCoordinatorChanged(input.coordinator);
        return;
      case "coordinator-message":
        this.onCoordinatorMessage(input.from, input.message);
        return;
      case "shard-started-local":
        this.onShardStartedLocal(input.shard);
        return;
      case "return-to-region":
        this.onReturned(input.shard, input.messages);
        return;
      case "local-shard-stopped":
        this.onLocalShardStopped(input.shard);
        return;
      case "region-terminated":
        this.onRegionTerminated(input.region);
        return;
      case "timer":
        this.onTimer(input.key);
        return;
      case "graceful-shutdown":
        this.onGracefulShutdown();
        return;
      case "self-downed":
        this.becomeStopped("self-downed", "this member was downed");
        return;
      case "stop":
        this.becomeStopped("stopped", "stopped without hand-off");
        return;
      default:
        assertNever(input, "region input");
    }
  }

  private onStart(): void {
    assert(this.current === RegionPhase.Idle, "region started twice");
    this.current = RegionPhase.Running;
    this.registration.begin(this.nowMs);
  }

  // ---- routing -------------------------------------------------------------------------------

  private onDeliver(shard: ShardId, envelope: RegionEnvelope<M>): void {
    const to = this.route(shard);
    if (to !== undefined) this.send(to, shard, envelope);
    else if (this.bufferMessage(shard, envelope)) this.maybeRequestHome(shard);
  }

  /**
   * A message another region forwarded here, for a shard whose home this region knows as
   * a third region: the sender's cache or this one is stale (a hand-off tells every region
   * to forget the home, so a current cache never sends a message two hops). Both can be:
   * a coordinator that rebuilt its state from the regions' reports (stateStoreMode
   * "regions") never corrects a cached home of a shard that runs nowhere, and two regions
   * naming each other would pass its messages back and forth for ever (simulator S20wL
   * seed 32). So the entry is dropped: the message waits here for the coordinator's
   * answer instead of travelling a second hop.
   */
  private onForwarded(shard: ShardId): void {
    const home = this.homes.get(shard);
    if (home === undefined || home === this.self) return;
    this.homes.delete(shard);
    this.log(
      "debug",
      "stale-home",
      `a message for shard ${shard} was forwarded here, but its home is ${home}: asking the coordinator`,
    );
  }

  /**
   * The part of `route` that does not depend on the buffer: the region that takes the
   * shard's messages now (this one only once its local shard runs), or undefined. The
   * buffer drains to it (`drain`); a new message goes there only when nothing waits.
   */
  private homeOf(shard: ShardId): RegionId | undefined {
    const home = this.homes.get(shard);
    if (home !== this.self) return home;
    return this.local.get(shard)?.state === LocalShardState.Running ? home : undefined;
  }

  private send(to: RegionId, shard: ShardId, envelope: RegionEnvelope<M>): void {
    if (to === this.self) this.out.push({ type: "deliver-local", shard, envelope });
    else this.out.push({ type: "forward", region: to, shard, envelope });
  }

  /** Sends everything buffered for `shard` if it has a route now. */
  private drain(shard: ShardId): void {
    if (!this.buffers.has(shard)) return;
    const to = this.homeOf(shard);
    if (to === undefined) return;
    for (const envelope of this.buffers.take(shard)) this.send(to, shard, envelope);
    if (this.buffers.total === 0) this.levelWarning.onEmpty();
  }

  /** Buffers `envelope`, or reports it as overflow and returns false. */
  private bufferMessage(shard: ShardId, envelope: RegionEnvelope<M>): boolean {
    if (this.buffers.total >= this.settings.bufferSizeMax) {
      this.onOverflow(shard, envelope);
      return false;
    }
    this.buffers.push(shard, envelope);
    this.noteGrowth();
    return true;
  }

  private noteGrowth(): void {
    const w = this.levelWarning.onGrown(this.buffers.total, this.nowMs);
    if (w === undefined) return;
    this.log(
      w.level,
      "buffer-filling",
      `buffers of "${this.typeName}" at ${w.percent}% (${this.buffers.total} of ` +
        `${this.settings.bufferSizeMax} messages, ${this.buffers.shards().length} shard(s)); ` +
        `${this.registration.registered ? "registered" : "NOT registered with a coordinator"}`,
    );
  }

  private onOverflow(shard: ShardId, envelope: RegionEnvelope<M>): void {
    this.counters.overflowCount++;
    this.deadLetter(shard, envelope, "buffer-overflow");
    const suppressed = this.overflowLog.tryAcquire(this.nowMs);
    if (suppressed < 0) return;
    const more = suppressed > 0 ? ` (and ${suppressed} more since the last warning)` : "";
    this.log(
      "warn",
      "buffer-overflow",
      `buffers of "${this.typeName}" full (bufferSizeMax=${this.settings.bufferSizeMax}): ` +
        `message for shard ${shard} dropped to dead letters${more}; ` +
        `${this.counters.overflowCount} dropped so far`,
    );
  }

  private deadLetter(shard: ShardId, envelope: RegionEnvelope<M>, reason: RegionDropReason): void {
    this.counters.deadLetters++;
    this.out.push({ type: "dead-letter", shard, envelope, reason });
  }

  /** True when `shard` waits for the coordinator to name its home. */
  private waitsForHome(shard: ShardId): boolean {
    if (this.homes.has(shard)) return false;
    const state = this.local.get(shard)?.state;
    return state !== LocalShardState.HandingOff && state !== LocalShardState.Stopping;
  }

  /** Asks the home of `shard`, unless already asked of this coordinator. */
  private maybeRequestHome(shard: ShardId): void {
    if (!this.registration.registered || this.asked.has(shard) || !this.waitsForHome(shard)) return;
    this.requestHome(shard);
  }

  private requestHome(shard: ShardId): void {
    this.asked.add(shard);
    this.toCoordinator({ type: "get-shard-home", shard, from: this.self });
  }

  private onRegionTerminated(region: RegionId): void {
    if (region === this.self) return;
    for (const [shard, home] of [...this.homes]) if (home === region) this.homes.delete(shard);
  }

  // ---- registration --------------------------------------------------------------------------

  private onCoordinatorChanged(coordinator: CoordinatorRef | undefined): void {
    if (!this.registration.change(coordinator, this.nowMs)) return;
    this.asked.clear();
    this.log("info", "coordinator-changed", `coordinator is now ${coordinator ?? "unknown"}`);
    this.cancelTimer(RegionTimer.Register);
    if (coordinator !== undefined) this.sendRegister();
  }

  private sendRegister(): void {
    this.counters.registrationAttempts++;
    const message: CoordinatorCommand = this.proxy
      ? { type: "register-proxy", proxy: this.self, member: this.member }
      : {
          type: "register",
          region: this.self,
          member: this.member,
          hostedShards: [...this.local.keys()].sort(),
        };
    this.toCoordinator(message);
  }

  private onRegisterAck(from: CoordinatorRef): void {
    if (!this.registration.ack(from)) {
      this.log("debug", "register-ack-ignored", `register-ack from ${from} ignored`);
      return;
    }
    this.cancelTimer(RegionTimer.Register);
    this.log("info", "registered", `registered with coordinator ${from}`);
    for (const shard of this.buffers.shards()) this.maybeRequestHome(shard);
    if (this.current === RegionPhase.ShuttingDown) this.requestShutdown();
  }

  private onRegisterTimer(): void {
    if (this.registration.registered) return;
    if (this.registration.coordinator !== undefined) this.sendRegister();
    const text = this.registration.warning(this.nowMs, {
      typeName: this.typeName,
      role: this.role,
      coordinatorRole: this.coordinatorRole,
      proxy: this.proxy,
      bufferedMessages: this.buffers.total,
    });
    if (text !== undefined) this.log("warn", "not-registered", text);
  }

  private onRetryTimer(): void {
    if (!this.registration.registered) return;
    for (const shard of this.buffers.shards())
      if (this.waitsForHome(shard)) this.requestHome(shard);
    if (this.current === RegionPhase.ShuttingDown && this.local.size > 0) this.requestShutdown();
  }

  private retryNeeded(): boolean {
    if (this.current === RegionPhase.ShuttingDown && !this.proxy && this.local.size > 0)
      return true;
    return this.buffers.total > 0 && this.buffers.some((shard) => this.waitsForHome(shard));
  }

  /** Keeps the register timer running while unregistered, the retry timer while needed. */
  private ensureTimers(): void {
    if (!this.registration.registered && !this.timers.has(RegionTimer.Register))
      this.startTimer(RegionTimer.Register, this.registration.nextDelayMs());
    if (this.registration.registered && !this.timers.has(RegionTimer.Retry) && this.retryNeeded())
      this.startTimer(RegionTimer.Retry, this.settings.retryIntervalMs);
  }

  private onTimer(key: string): void {
    if (!this.timers.delete(key)) {
      this.log("debug", "timer-ignored", `timer ${key} is not running`);
      return;
    }
    if (key === RegionTimer.Register) this.onRegisterTimer();
    else if (key === RegionTimer.Retry) this.onRetryTimer();
  }

  // ---- messages from the coordinator ---------------------------------------------------------

  private onCoordinatorMessage(from: CoordinatorRef, message: RegionCommand): void {
    switch (message.type) {
      case "register-ack":
        this.onRegisterAck(from);
        return;
      case "shard-home":
        if (this.fromRegistered(from, message.type))
          this.onShardHome(message.shard, message.region);
        return;
      case "shard-homes":
        if (!this.fromRegistered(from, message.type)) return;
        for (const h of message.homes)
          for (const shard of h.shards) this.onShardHome(shard, h.region);
        return;
      case "host-shard":
        if (this.fromRegistered(from, message.type)) this.onHostShard(message.shard, from);
        return;
      case "begin-hand-off":
        this.onBeginHandOff(message.shard, message.handOffId, from);
        return;
      case "hand-off":
        this.onHandOff(message.shard, message.handOffId, from);
        return;
      default:
        assertNever(message, "coordinator message");
    }
  }

  /** HostShard / ShardHome count only from the coordinator this region registered with. */
  private fromRegistered(from: CoordinatorRef, what: string): boolean {
    if (this.registration.registered && from === this.registration.coordinator) return true;
    this.log("debug", "coordinator-message-ignored", `${what} from unregistered ${from} ignored`);
    return false;
  }

  private onShardHome(shard: ShardId, region: RegionId): void {
    this.asked.delete(shard);
    const l = this.local.get(shard);
    if (l?.state === LocalShardState.HandingOff || l?.state === LocalShardState.Stopping) {
      this.log("debug", "shard-home-deferred", `home of ${shard} ignored: local shard stopping`);
      return;
    }
    if (region === this.self) {
      this.onHomeIsSelf(shard);
      return;
    }
    if (l !== undefined) {
      this.log(
        "error",
        "shard-home-conflict",
        `coordinator places shard ${shard} at ${region} while it runs here; stopping it here`,
      );
      this.homes.delete(shard);
      this.stopLocal(shard, l);
      return;
    }
    this.homes.set(shard, region);
    this.drain(shard);
  }

  /** True (after logging why) when this region must not host shards now. */
  private mayNotHost(shard: ShardId, what: string): boolean {
    if (this.proxy) {
      this.log("error", "proxy-cannot-host", `${what} ${shard} sent to a proxy; ignored`);
      return true;
    }
    if (this.current === RegionPhase.ShuttingDown) {
      this.log("debug", "shutting-down", `${what} ${shard} ignored: shutting down`);
      return true;
    }
    return false;
  }

  private onHomeIsSelf(shard: ShardId): void {
    if (this.mayNotHost(shard, "shard-home (here) of")) return;
    this.homes.set(shard, this.self);
    if (!this.local.has(shard)) this.startLocal(shard, undefined);
    this.drain(shard);
  }

  private onHostShard(shard: ShardId, from: CoordinatorRef): void {
    if (this.mayNotHost(shard, "host-shard")) return;
    const l = this.local.get(shard);
    if (l?.state === LocalShardState.HandingOff || l?.state === LocalShardState.Stopping) {
      this.log("debug", "host-shard-deferred", `host-shard ${shard} ignored: local shard stopping`);
      return;
    }
    this.homes.set(shard, this.self);
    this.asked.delete(shard);
    if (l === undefined) this.startLocal(shard, from);
    else if (l.state === LocalShardState.Running) this.replyStarted(shard, from);
    else l.startedReplyTo = from;
    this.drain(shard);
  }

  // ---- local shards --------------------------------------------------------------------------

  private startLocal(shard: ShardId, replyTo: CoordinatorRef | undefined): void {
    if (!(!this.proxy && !this.local.has(shard))) fail(`start-shard ${shard} not allowed`);
    this.local.set(shard, {
      state: LocalShardState.Starting,
      startedReplyTo: replyTo,
      handOff: undefined,
    });
    this.out.push({ type: "start-shard", shard });
  }

  private stopLocal(shard: ShardId, l: LocalShard): void {
    l.state = LocalShardState.Stopping;
    l.startedReplyTo = undefined;
    this.out.push({ type: "stop-shard", shard });
  }

  private replyStarted(shard: ShardId, to: CoordinatorRef): void {
    this.sendTo(to, { type: "shard-started", shard, from: this.self });
  }

  private onShardStartedLocal(shard: ShardId): void {
    const l = this.local.get(shard);
    if (l?.state !== LocalShardState.Starting) return;
    l.state = LocalShardState.Running;
    if (l.startedReplyTo !== undefined) this.replyStarted(shard, l.startedReplyTo);
    l.startedReplyTo = undefined;
    this.drain(shard);
  }

  private onReturned(shard: ShardId, messages: readonly RegionEnvelope<M>[]): void {
    if (messages.length === 0) return;
    this.buffers.prepend(shard, messages);
    this.noteGrowth();
    this.drain(shard);
    this.maybeRequestHome(shard);
  }

  private onLocalShardStopped(shard: ShardId): void {
    const l = this.local.get(shard);
    if (l === undefined) return;
    this.local.delete(shard);
    if (this.homes.get(shard) === this.self) this.homes.delete(shard);
    if (l.handOff !== undefined)
      this.sendTo(l.handOff.coordinator, {
        type: "shard-stopped",
        shard,
        handOffId: l.handOff.id,
        from: this.self,
      });
    else if (l.state !== LocalShardState.Stopping)
      this.log("warn", "local-shard-terminated", `local shard ${shard} stopped unexpectedly`);
    if (this.buffers.has(shard)) this.maybeRequestHome(shard);
  }

  // ---- hand-off ------------------------------------------------------------------------------

  /**
   * Buffer the shard from now on (unless it runs here: see below) and acknowledge. When
   * the shard lives on another region,
   * the ack goes through that region (after the messages forwarded to it so far, on the
   * same channel): the coordinator hands the shard off only once every ack arrived, so
   * every message forwarded before the ack has reached the old owner's shard before the
   * hand-off does, and none can overtake this region's buffered ones at the new owner.
   */
  private onBeginHandOff(shard: ShardId, handOffId: number, from: CoordinatorRef): void {
    const home = this.homes.get(shard);
    // The old owner itself keeps giving the shard what arrives until HandOff: the
    // messages other regions forwarded before their acks (which travel behind them) must
    // reach the running shard, not this region's buffer, from which they would go to the
    // new owner in a race with those regions' later messages.
    if (home === this.self) {
      this.log("debug", "begin-hand-off", `shard ${shard} runs here until HandOff (#${handOffId})`);
      this.sendTo(from, { type: "begin-hand-off-ack", shard, handOffId, from: this.self });
      return;
    }
    this.homes.delete(shard);
    this.log("debug", "begin-hand-off", `buffering for shard ${shard} (hand-off #${handOffId})`);
    const ack: CoordinatorCommand = {
      type: "begin-hand-off-ack",
      shard,
      handOffId,
      from: this.self,
    };
    if (home !== undefined && home !== this.self)
      this.out.push({ type: "relay-to-coordinator", via: home, coordinator: from, message: ack });
    else this.sendTo(from, ack);
  }

  private onHandOff(shard: ShardId, handOffId: number, from: CoordinatorRef): void {
    this.homes.delete(shard);
    const l = this.local.get(shard);
    if (l === undefined) {
      this.sendTo(from, { type: "shard-stopped", shard, handOffId, from: this.self });
      return;
    }
    l.handOff = { id: handOffId, coordinator: from };
    if (l.state === LocalShardState.HandingOff || l.state === LocalShardState.Stopping) return;
    l.state = LocalShardState.HandingOff;
    l.startedReplyTo = undefined;
    this.out.push({ type: "hand-off-shard", shard, handOffId });
  }

  // ---- shutdown ------------------------------------------------------------------------------

  private onGracefulShutdown(): void {
    if (this.current !== RegionPhase.Running) return;
    this.current = RegionPhase.ShuttingDown;
    this.log(
      "info",
      "graceful-shutdown",
      `handing off ${this.local.size} shard(s), ${this.buffers.total} message(s) buffered`,
    );
    if (this.registration.registered) this.requestShutdown();
  }

  private requestShutdown(): void {
    if (this.proxy || this.local.size === 0) return;
    this.toCoordinator({ type: "graceful-shutdown-req", region: this.self });
  }

  /** Graceful shutdown ends once no local shard runs and nothing is buffered. */
  private maybeFinishShutdown(): void {
    if (this.current !== RegionPhase.ShuttingDown) return;
    if (this.local.size > 0 || this.buffers.total > 0) return;
    if (!this.proxy && this.registration.registered)
      this.toCoordinator({ type: "region-stopped", region: this.self });
    this.log("info", "region-stopped", "every shard handed off; stopped");
    this.finish();
  }

  private becomeStopped(event: string, why: string): void {
    for (const [shard, l] of this.local)
      if (l.state !== LocalShardState.Stopping) this.out.push({ type: "stop-shard", shard });
    this.local.clear();
    const dropped = this.buffers.total;
    for (const shard of this.buffers.shards())
      for (const envelope of this.buffers.take(shard))
        this.deadLetter(shard, envelope, "region-stopped");
    this.log("warn", event, `${why}: region stopped, ${dropped} buffered message(s) dropped`);
    this.finish();
  }

  private finish(): void {
    for (const key of [...this.timers]) this.cancelTimer(key);
    this.current = RegionPhase.Stopped;
    this.out.push({ type: "stopped" });
  }

  private onInputWhenStopped(input: RegionInput<M>): void {
    if (input.type === "deliver")
      this.deadLetter(
        input.shard,
        { entityId: input.entityId, message: input.message, sender: input.sender },
        "region-stopped",
      );
    else if (input.type === "return-to-region")
      for (const envelope of input.messages)
        this.deadLetter(input.shard, envelope, "region-stopped");
  }

  // ---- outputs -------------------------------------------------------------------------------

  private toCoordinator(message: CoordinatorCommand): void {
    const to = this.registration.coordinator;
    assert(to !== undefined, "message to the coordinator while none is known");
    this.sendTo(to, message);
  }

  private sendTo(coordinator: CoordinatorRef, message: CoordinatorCommand): void {
    this.out.push({ type: "send-to-coordinator", coordinator, message });
  }

  private startTimer(key: string, delayMs: number): void {
    this.timers.add(key);
    this.out.push({ type: "start-timer", key, delayMs });
  }

  private cancelTimer(key: string): void {
    if (!this.timers.delete(key)) return;
    this.out.push({ type: "cancel-timer", key });
  }

  private log(level: RegionLogLevel, event: string, text: string): void {
    this.out.push({ type: "log", level, event, text });
  }
}
