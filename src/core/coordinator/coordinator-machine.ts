/**
 * The shard coordinator as a sans-IO state machine (docs/sharding-coordinator.md).
 * The driver (a cluster singleton actor) feeds inputs with the current time and performs
 * the outputs in order (coordinator-io.ts); the machine never waits and owns no timer.
 *
 * Two copies of the state. `durable` is what the store has acknowledged; `projected` is
 * durable plus the events still in the persist queue. Decisions (where a shard goes,
 * whether it is free) use `projected`, so a decision taken while a write is in flight
 * already sees the earlier ones; announcements (RegisterAck, HostShard, ShardHome) use
 * `durable` and are only made when `durable` and `projected` agree. Because the queue
 * writes in decision order, a shard's new home is never durable before the deallocation
 * of its old one, and HostShard to a new owner is only output after both.
 *
 * Safety rule: a shard gets a new home only after its old owner answered ShardStopped for
 * the current hand-off attempt, or the old owner's region terminated (its member removed,
 * or the region reported it stopped). A hand-off that times out is ABORTED: the shard
 * stays with its old owner, which may still be running it, and waiting requesters are
 * told so; a rebalance may pick it again later, a graceful shutdown retries it.
 * Leased shards (settings.shardsLeased) are the exception: the lease, not the
 * coordinator, keeps a shard from running twice, so the shards of a region whose member
 * has been unreachable for unreachableMoveAfterMs get new homes at once (the new home
 * starts each once it holds the lease); the old region is told to stop them (a HandOff
 * with MOVED_AWAY_HAND_OFF_ID), again whenever its member becomes reachable, until it
 * answers or is gone.
 *
 * Modes: "persistent" starts from a recovered snapshot + events; "regions" (no database)
 * starts empty, rebuilds the table from the shards regions report when they register,
 * and allocates nothing new until every member that may run shards has a registered
 * region or proxy, or is removed. Both modes defer allocation until minNrOfMembers
 * regions registered with this coordinator, and while a write is failing.
 */
import { fail } from "../../base/assert.js";
import {
  type CoordinatorCommand,
  type CoordinatorEvent,
  type CoordinatorSnapshot,
  MOVED_AWAY_HAND_OFF_ID,
  type RegionCommand,
  type RegionId,
} from "../../protocol/sharding.js";
import type { ShardId } from "../sharding/shard-id.js";
import { regionsHaveSameAppVersion } from "./allocation/rebalance-gate.js";
import { compareRegionMembers } from "./allocation/region-preference.js";
import type { RegionView } from "./allocation/region-view.js";
import {
  type CoordinatorInput,
  type CoordinatorLogLevel,
  type CoordinatorMember,
  type CoordinatorOutput,
  CoordinatorTimer,
  parseCoordinatorTimer,
} from "./coordinator-io.js";
import { CoordinatorMembership } from "./coordinator-membership.js";
import { type CoordinatorSettings, resolveCoordinatorSettings } from "./coordinator-settings.js";
import {
  CoordinatorState,
  type RegionRecord,
  recoverCoordinatorState,
} from "./coordinator-state.js";
import type { CoordinatorAllocationStrategy } from "./coordinator-strategy.js";
import { type HandOffReason, type HandOffRecord, HandOffTracker } from "./hand-off-tracker.js";
import { type PendingEvent, PersistQueue } from "./persist-queue.js";
import { WaitingRequests } from "./waiting-requests.js";

/** Where the machine's state comes from. */
export type CoordinatorRecovery =
  /** Replayed from the store: an optional snapshot and the events written after it. */
  | {
      readonly mode: "persistent";
      readonly snapshot?: CoordinatorSnapshot;
      readonly events?: readonly CoordinatorEvent[];
    }
  /** No database: start empty and learn the hosted shards from registering regions. */
  | { readonly mode: "regions" };

/** Construction parameters of the machine. */
export interface CoordinatorConfig {
  /** The coordinator's own id (sent in RegisterAck; requester of remembered shards). */
  readonly self: RegionId;
  readonly strategy: CoordinatorAllocationStrategy;
  readonly recovery: CoordinatorRecovery;
  readonly settings?: Partial<CoordinatorSettings>;
  /** Only members with this role host regions; undefined = every member. */
  readonly role?: string;
  /**
   * Regions that registered with this coordinator before its actor restarted (a journal
   * conflict): the actor keeps its id, so they stay registered and do not register again.
   * Those the loaded state still holds count as registered (minNrOfMembers) at once.
   */
  readonly registered?: Iterable<RegionId>;
}

/** Counters for metrics and tests. */
export interface CoordinatorStats {
  /** GetShardHome requests refused because waitingShardsMax shards were waiting. */
  readonly droppedRequests: number;
  readonly persistFailures: number;
  readonly handOffTimeouts: number;
  readonly handOffsCompleted: number;
  /** Leased shards given a new home because their region's member was unreachable. */
  readonly shardsMovedFromUnreachable: number;
}

/** A read-only picture of the machine for queries, logs and tests. */
export interface CoordinatorView {
  /** Projected regions (decisions included) in registration order. */
  readonly regions: readonly {
    readonly region: RegionId;
    readonly member: string;
    readonly shards: readonly ShardId[];
    readonly shuttingDown: boolean;
  }[];
  readonly proxies: readonly RegionId[];
  readonly handOffs: readonly Readonly<Omit<HandOffRecord, "pendingAcks">>[];
  readonly waitingShards: readonly ShardId[];
  /** Remember entities: shards without a home that the coordinator allocates itself. */
  readonly unallocatedShards: readonly ShardId[];
  readonly pendingEvents: number;
  readonly persistFailing: boolean;
  /** minNrOfMembers reached (latched). */
  readonly allocationOpen: boolean;
  /** Regions recovery still waiting for members. */
  readonly recovering: boolean;
  readonly stats: CoordinatorStats;
}

interface MutableStats {
  droppedRequests: number;
  persistFailures: number;
  handOffTimeouts: number;
  handOffsCompleted: number;
  shardsMovedFromUnreachable: number;
}

/** The shard coordinator (see the module comment). */
export class CoordinatorMachine {
  readonly settings: Readonly<CoordinatorSettings>;
  private readonly self: RegionId;
  private readonly strategy: CoordinatorAllocationStrategy;
  private readonly durable: CoordinatorState;
  private readonly projected: CoordinatorState;
  private readonly membership: CoordinatorMembership;
  private readonly queue: PersistQueue;
  private readonly handOffs = new HandOffTracker();
  private readonly waiting: WaitingRequests;
  private readonly shuttingDown = new Set<RegionId>();
  /** HostShard sent, ShardStarted not yet received: shard -> owner. */
  private readonly hostPending = new Map<ShardId, RegionId>();
  /** Regions recovery: down or unreachable members waited for (see recoveryMarginHolds). */
  private readonly recoveryUnreported = new Set<string>();
  private recoveryMarginStarted = false;
  private recoveryMarginPassed = false;
  /** Regions on removed members whose removal margin runs (their shards wait). */
  private readonly removalPending = new Set<RegionId>();
  /** When this node saw a member removed (membership input `removed`). */
  private removedAtMs = new Map<string, number>();
  /** Leased shards: members seen unreachable (their move timer runs or has fired). */
  private readonly unreachableSeen = new Set<string>();
  /** Leased shards moved away from a region that has not yet confirmed it stopped them. */
  private readonly movedAway = new Map<RegionId, Set<ShardId>>();
  /** Regions that registered with this coordinator incarnation (minNrOfMembers). */
  private readonly registeredNow = new Set<RegionId>();
  private allocationOpen = false;
  private recovering: boolean;
  private eventsSinceSnapshot = 0;
  /** Up members with the role but no region or proxy at the previous rebalance tick. */
  private unreportedAtLastTick = new Set<string>();
  private readonly counters: MutableStats = {
    droppedRequests: 0,
    persistFailures: 0,
    handOffTimeouts: 0,
    handOffsCompleted: 0,
    shardsMovedFromUnreachable: 0,
  };
  private out: CoordinatorOutput[] = [];
  private nowMs = 0;

  /** Throws ConfigError on bad settings, CoordinatorStateError on inconsistent recovery. */
  constructor(config: CoordinatorConfig) {
    this.settings = resolveCoordinatorSettings(config.settings);
    this.self = config.self;
    this.strategy = config.strategy;
    const remember = this.settings.rememberEntities;
    const r = config.recovery;
    this.durable =
      r.mode === "persistent"
        ? recoverCoordinatorState(r.snapshot, r.events ?? [], remember)
        : new CoordinatorState(remember);
    this.projected = this.durable.clone();
    this.recovering = r.mode === "regions";
    this.membership = new CoordinatorMembership(config.role);
    this.queue = new PersistQueue(this.settings);
    this.waiting = new WaitingRequests(this.settings.waitingShardsMax);
    for (const region of config.registered ?? [])
      if (this.durable.region(region) !== undefined) this.registeredNow.add(region);
  }

  /** Feeds one input at time `nowMs`; returns the outputs to perform, in order. */
  handle(input: CoordinatorInput, nowMs: number): CoordinatorOutput[] {
    this.out = [];
    this.nowMs = nowMs;
    this.dispatch(input);
    const batch = this.queue.takeBatchToWrite();
    if (batch !== undefined) this.emitPersist(batch.batchId, batch.entries);
    return this.out;
  }

  /** The durable state as a snapshot value. */
  durableSnapshot(): CoordinatorSnapshot {
    return this.durable.toSnapshot();
  }

  /** How many hand-offs are in progress (cheap; view() copies everything). */
  get handOffCount(): number {
    return this.handOffs.size;
  }

  /** Regions registered with this coordinator (`registered` of its next incarnation). */
  get registeredRegions(): readonly RegionId[] {
    return [...this.registeredNow];
  }

  /**
   * The id of the batch being written (a `persist` output not yet answered), if any; not
   * a batch waiting for its retry timer.
   */
  get batchInFlight(): number | undefined {
    return this.queue.writingBatchId;
  }

  /** The id of the hand-off attempt of `shard` in progress, if any. */
  handOffIdOf(shard: ShardId): number | undefined {
    return this.handOffs.get(shard)?.id;
  }

  /** The hand-offs in progress (attempt id, shard, reason), oldest first; a copy. */
  handOffsInProgress(): {
    readonly id: number;
    readonly shard: ShardId;
    readonly reason: HandOffReason;
  }[] {
    const out: { id: number; shard: ShardId; reason: HandOffReason }[] = [];
    for (const h of this.handOffs.all()) out.push({ id: h.id, shard: h.shard, reason: h.reason });
    return out;
  }

  /** The durable home of `shard`, if any. */
  durableHomeOf(shard: ShardId): RegionId | undefined {
    return this.durable.homeOf(shard);
  }

  /** A read-only picture of the machine. */
  view(): CoordinatorView {
    return {
      regions: [...this.projected.regions()].map(([region, r]) => ({
        region,
        member: r.member,
        shards: [...r.shards],
        shuttingDown: this.shuttingDown.has(region),
      })),
      proxies: [...this.projected.proxies().keys()],
      handOffs: [...this.handOffs.all()].map(({ pendingAcks: _, ...rest }) => ({ ...rest })),
      waitingShards: this.waiting.shards(),
      unallocatedShards: [...this.projected.unallocated()],
      pendingEvents: this.queue.size,
      persistFailing: this.queue.failing,
      allocationOpen: this.allocationOpen,
      recovering: this.recovering,
      stats: { ...this.counters },
    };
  }

  private dispatch(input: CoordinatorInput): void {
    switch (input.type) {
      case "register":
      case "register-proxy":
      case "get-shard-home":
      case "shard-started":
      case "begin-hand-off-ack":
      case "shard-stopped":
      case "graceful-shutdown-req":
      case "region-stopped":
        this.dispatchCommand(input);
        return;
      case "membership":
        if (input.removed !== undefined)
          this.removedAtMs = new Map(input.removed.map((r) => [r.uniqueAddress, r.atMs]));
        this.onMembership(input.members);
        return;
      case "persisted":
        this.onPersisted(input.batchId);
        return;
      case "persist-failed":
        this.onPersistFailed(input.batchId, input.reason);
        return;
      case "timer":
        this.onTimer(input.key);
        return;
      case "rebalance-tick":
        this.onRebalanceTick();
        return;
      case "allocation-retry":
        this.maybeAllocateWaiting();
        return;
      case "region-terminated": {
        const member = this.projected.region(input.region)?.member;
        if (member !== undefined && this.membership.isGone(member))
          this.regionMemberRemoved(input.region);
        else this.terminateRegion(input.region, "terminated");
        return;
      }
      case "proxy-terminated":
        this.terminateProxy(input.proxy);
        return;
    }
  }

  private dispatchCommand(msg: CoordinatorCommand): void {
    switch (msg.type) {
      case "register":
        this.onRegister(msg.region, msg.member, msg.hostedShards);
        return;
      case "register-proxy":
        this.onRegisterProxy(msg.proxy, msg.member);
        return;
      case "get-shard-home":
        this.onGetShardHome(msg.shard, msg.from);
        return;
      case "shard-started":
        this.onShardStarted(msg.shard, msg.from);
        return;
      case "begin-hand-off-ack":
        this.onBeginHandOffAck(msg.shard, msg.handOffId, msg.from);
        return;
      case "shard-stopped":
        this.onShardStopped(msg.shard, msg.handOffId, msg.from);
        return;
      case "graceful-shutdown-req":
        this.onGracefulShutdownReq(msg.region);
        return;
      case "region-stopped":
        this.terminateRegion(msg.region, "stopped");
        return;
    }
  }

  // ---- membership and registration ---------------------------------------------------------

  private onMembership(members: readonly CoordinatorMember[]): void {
    this.membership.update(members);
    for (const [region, r] of [...this.projected.regions()])
      if (this.membership.isGone(r.member)) this.regionMemberRemoved(region);
    for (const [proxy, member] of [...this.projected.proxies()])
      if (this.membership.isGone(member)) this.terminateProxy(proxy);
    if (this.settings.shardsLeased) this.onReachabilityOfLeased(members);
    this.maybeOpenAllocation();
    this.maybeCompleteRecovery();
    this.maybeAllocateWaiting();
  }

  // ---- leased shards on unreachable members ----------------------------------------------

  /**
   * Leased shards: a member newly unreachable starts its move timer (or moves its shards
   * at once); a member reachable again cancels it, gets the HandOffs of the shards moved
   * away from it once more, and the requests waiting for its shards are answered.
   */
  private onReachabilityOfLeased(members: readonly CoordinatorMember[]): void {
    for (const m of members) {
      const key = m.uniqueAddress;
      if (!m.reachable && m.status !== "removed") {
        if (this.unreachableSeen.has(key)) continue;
        this.unreachableSeen.add(key);
        const after = this.settings.unreachableMoveAfterMs;
        if (after === 0) this.moveShardsOfUnreachable(key);
        else this.startTimer(CoordinatorTimer.unreachableMove(key), after);
      } else if (this.unreachableSeen.delete(key)) {
        if (this.settings.unreachableMoveAfterMs > 0)
          this.out.push({ type: "cancel-timer", key: CoordinatorTimer.unreachableMove(key) });
        for (const [region, r] of this.projected.regions())
          if (r.member === key) this.tellMovedAway(region);
        this.answerWaitingOnReachable();
      }
    }
    for (const key of [...this.unreachableSeen])
      if (this.membership.get(key) === undefined) this.unreachableSeen.delete(key);
  }

  /** The region's member is unreachable and its shards are leased: requests wait. */
  private homeUnreachable(region: RegionId): boolean {
    if (!this.settings.shardsLeased) return false;
    const member = this.projected.region(region)?.member;
    const m = member === undefined ? undefined : this.membership.get(member);
    return m !== undefined && !m.reachable;
  }

  /** Gives the leased shards of every region on `member` (unreachable) new homes. */
  private moveShardsOfUnreachable(member: string): void {
    const m = this.membership.get(member);
    if (m === undefined || m.reachable) return;
    for (const [region, r] of [...this.projected.regions()]) {
      if (r.member !== member || r.shards.length === 0) continue;
      const shards = [...r.shards];
      const moved = this.movedAway.get(region) ?? new Set<ShardId>();
      this.movedAway.set(region, moved);
      for (const shard of shards) {
        this.cancelHostPending(shard);
        const h = this.handOffs.get(shard);
        if (h !== undefined && h.owner === region) {
          this.handOffs.remove(shard);
          this.out.push({ type: "cancel-timer", key: CoordinatorTimer.handOff(shard) });
        }
        this.enqueue({ type: "shard-home-deallocated", shard });
        moved.add(shard);
        this.counters.shardsMovedFromUnreachable++;
      }
      this.log(
        "info",
        "shards-moved-from-unreachable",
        `region ${region}: member unreachable; its ${shards.length} leased shard(s) get new homes`,
        { region, member, shards: shards.slice(0, 20), count: shards.length },
      );
      this.tellMovedAway(region);
    }
    this.maybeAllocateWaiting();
  }

  /**
   * HandOff (MOVED_AWAY_HAND_OFF_ID) of every shard moved away from `region`; a shard
   * given back to `region` since is no longer moved away from it.
   */
  private tellMovedAway(region: RegionId): void {
    const moved = this.movedAway.get(region);
    if (moved === undefined) return;
    for (const shard of [...moved]) {
      if (this.projected.homeOf(shard) === region) moved.delete(shard);
      else this.send(region, { type: "hand-off", shard, handOffId: MOVED_AWAY_HAND_OFF_ID });
    }
    if (moved.size === 0) this.movedAway.delete(region);
  }

  /**
   * Those HandOffs are messages that can be lost (a connection reset drops what it had
   * queued): one lost while the region's member stayed reachable left the region running
   * the shard and renewing its lease, and the shard's new home waited for that lease for
   * ever (simulator S20L seed 5041). Every rebalance tick sends them again to each region
   * whose member is reachable, until it answers ShardStopped.
   */
  private resendMovedAway(): void {
    for (const region of [...this.movedAway.keys()])
      if (!this.homeUnreachable(region)) this.tellMovedAway(region);
  }

  /** Answers waiting requests whose shard's home is (again) reachable. */
  private answerWaitingOnReachable(): void {
    for (const shard of this.waiting.shards()) {
      if (this.handOffs.has(shard)) continue;
      const home = this.stableHomeOf(shard);
      if (home === undefined || this.removalPending.has(home) || this.homeUnreachable(home))
        continue;
      for (const to of this.waiting.take(shard))
        this.send(to, { type: "shard-home", shard, region: home });
    }
  }

  /** Why a registration from `member` is refused, or undefined when it is accepted. */
  private registrationRefusal(
    member: string,
    known: boolean,
    isRegion: boolean,
  ): string | undefined {
    const m = this.membership.get(member);
    if (m === undefined) return "the member is not (yet) in the membership";
    if (isRegion && !this.membership.hasRole(m)) return "the member lacks the sharding role";
    if (m.status === "up") return undefined;
    if ((known || this.recovering) && this.membership.isAlive(m)) return undefined;
    return `the member is ${m.status}, not up`;
  }

  private onRegister(region: RegionId, member: string, hosted: readonly ShardId[]): void {
    const previous = this.projected.region(region)?.member;
    if (previous !== undefined && previous !== member) {
      if (!this.membership.isGone(previous)) {
        this.log("warn", "register-ignored", `region ${region} is registered for ${previous}`, {
          region,
          member,
          previousMember: previous,
        });
        return;
      }
      this.terminateRegion(region, "replaced by a new incarnation");
    }
    const known = this.projected.region(region) !== undefined;
    const refusal = this.registrationRefusal(member, known, true);
    if (refusal !== undefined) {
      this.log("info", "register-ignored", `region ${region} not registered: ${refusal}`, {
        region,
        member,
      });
      return;
    }
    this.registeredNow.add(region);
    if (!known) this.enqueue({ type: "shard-region-registered", region, member });
    else if (this.durable.region(region)?.member === member)
      this.send(region, { type: "register-ack", coordinator: this.self });
    this.onHostedShards(region, hosted);
    this.maybeOpenAllocation();
    this.maybeCompleteRecovery();
    this.maybeAllocateWaiting();
  }

  private onRegisterProxy(proxy: RegionId, member: string): void {
    const previous = this.projected.proxies().get(proxy);
    if (previous !== undefined && previous !== member) {
      if (!this.membership.isGone(previous)) {
        this.log("warn", "register-ignored", `proxy ${proxy} is registered for ${previous}`, {
          proxy,
          member,
        });
        return;
      }
      this.terminateProxy(proxy);
    }
    const known = this.projected.proxies().has(proxy);
    const refusal = this.registrationRefusal(member, known, false);
    if (refusal !== undefined) {
      this.log("info", "register-ignored", `proxy ${proxy} not registered: ${refusal}`, {
        proxy,
        member,
      });
      return;
    }
    if (!known) this.enqueue({ type: "shard-region-proxy-registered", proxy, member });
    else if (this.durable.proxies().get(proxy) === member)
      this.send(proxy, { type: "register-ack", coordinator: this.self });
    this.maybeCompleteRecovery();
  }

  /**
   * Regions recovery adopts reported shards. A reported shard placed elsewhere (or, outside
   * recovery, nowhere) is logged; with leased shards the region is also told to stop it
   * (a HandOff with MOVED_AWAY_HAND_OFF_ID, repeated like the shards moved away from an
   * unreachable member until it answers): a coordinator that started while the region's
   * member was unreachable did not wait for its report (regions recovery) and may have
   * given those shards new homes, which wait for leases the region still renews.
   */
  private onHostedShards(region: RegionId, hosted: readonly ShardId[]): void {
    const elsewhere: ShardId[] = [];
    for (const shard of hosted) {
      const home = this.projected.homeOf(shard);
      if (home === region) continue;
      if (home === undefined && this.recovering)
        this.enqueue({ type: "shard-home-allocated", shard, region }, false);
      else elsewhere.push(shard);
    }
    if (elsewhere.length === 0) return;
    const leased = this.settings.shardsLeased;
    this.log(
      this.recovering ? "error" : "warn",
      "hosted-shards-mismatch",
      `region ${region} reports ${elsewhere.length} shard(s) the coordinator places elsewhere${leased ? "; told to stop them" : ""}`,
      { region, shards: elsewhere.slice(0, 20) },
    );
    if (!leased) return;
    const moved = this.movedAway.get(region) ?? new Set<ShardId>();
    this.movedAway.set(region, moved);
    for (const shard of elsewhere) {
      if (moved.has(shard)) continue;
      moved.add(shard);
      this.send(region, { type: "hand-off", shard, handOffId: MOVED_AWAY_HAND_OFF_ID });
    }
  }

  private maybeOpenAllocation(): void {
    if (this.allocationOpen) return;
    let alive = 0;
    for (const r of this.registeredNow) if (this.projected.region(r) !== undefined) alive++;
    if (alive < this.settings.minNrOfMembers) return;
    this.allocationOpen = true;
    this.log("info", "allocation-enabled", `${alive} region(s) registered`, { regions: alive });
  }

  /** Members that may run shards but have neither a region nor a proxy registered. */
  /**
   * Regions recovery: a member that was waited for while down or unreachable and then
   * removed without registering may have run shards nobody reported, and may still run
   * them until it notices it was downed.
   * Like a known region on a removed member (regionRemovalMarginMs), recovery completes
   * only after the margin, so none of those shards starts elsewhere meanwhile.
   */
  private recoveryMarginHolds(): boolean {
    const margin = this.settings.regionRemovalMarginMs;
    if (margin === 0 || this.recoveryMarginPassed) return false;
    const reported = new Set<string>();
    for (const r of this.projected.regions().values()) reported.add(r.member);
    for (const m of this.projected.proxies().values()) reported.add(m);
    const vanished = [...this.recoveryUnreported].filter((m) => !reported.has(m));
    if (vanished.length === 0) return false;
    if (!this.recoveryMarginStarted) {
      const left = Math.max(...vanished.map((m) => this.marginLeftMs(m)));
      if (left === 0) {
        this.recoveryMarginPassed = true;
        return false;
      }
      this.recoveryMarginStarted = true;
      this.log(
        "info",
        "regions-recovery-margin",
        `${vanished.length} member(s) left before registering; allocating in ${left} ms`,
        { members: vanished, regionRemovalMarginMs: margin, waitMs: left },
      );
      this.startTimer(CoordinatorTimer.recoveryMargin, left);
    }
    return true;
  }

  /**
   * What is left of the removal margin of `member`: counted from when this node saw it
   * removed (membership input `removed`), or the whole margin when that is unknown.
   */
  private marginLeftMs(member: string | undefined): number {
    const margin = this.settings.regionRemovalMarginMs;
    const at = member === undefined ? undefined : this.removedAtMs.get(member);
    if (at === undefined) return margin;
    return Math.max(0, Math.min(margin, at + margin - this.nowMs));
  }

  private unreportedMembers(): string[] {
    const reported = new Set<string>();
    for (const r of this.projected.regions().values()) reported.add(r.member);
    for (const m of this.projected.proxies().values()) reported.add(m);
    return this.membership
      .mayRunShards()
      .map((m) => m.uniqueAddress)
      .filter((m) => !reported.has(m));
  }

  private maybeCompleteRecovery(): void {
    if (!this.recovering || !this.membership.known) return;
    let unreported = this.unreportedMembers();
    for (const m of unreported) {
      // a member leaving gracefully hands its shards off first; a downed or unreachable
      // one may still run them
      const info = this.membership.get(m);
      if (info !== undefined && (info.status === "down" || !info.reachable))
        this.recoveryUnreported.add(m);
    }
    // Leased shards: an unreachable member is not waited for. The shards it may still run
    // get new homes, which start them only once its leases expired or were released (a
    // coordinator that moved because its own member became unreachable recovers at once).
    if (this.settings.shardsLeased)
      unreported = unreported.filter((m) => this.membership.get(m)?.reachable !== false);
    if (unreported.length > 0) return;
    if (this.recoveryMarginHolds()) return;
    this.recovering = false;
    this.log("info", "regions-recovery-complete", "every member has registered or is gone", {
      shards: this.projected.shardCount,
    });
    this.maybeAllocateWaiting();
    this.pumpShutdowns();
  }

  // ---- locating and allocating shards --------------------------------------------------------

  private onGetShardHome(shard: ShardId, from: RegionId): void {
    if (!this.handOffs.has(shard)) {
      const home = this.durable.homeOf(shard);
      // a home on a removed member waits for its removal margin (then a new home)
      if (
        home !== undefined &&
        home === this.projected.homeOf(shard) &&
        !this.removalPending.has(home) &&
        !this.homeUnreachable(home)
      ) {
        this.send(from, { type: "shard-home", shard, region: home });
        return;
      }
    }
    if (!this.waiting.add(shard, from)) {
      this.counters.droppedRequests++;
      this.log("warn", "get-shard-home-dropped", "too many shards waiting for a home", {
        shard,
        from,
        waitingShardsMax: this.settings.waitingShardsMax,
      });
      return;
    }
    this.maybeAllocate(shard, from);
  }

  private mayAllocate(): boolean {
    return this.membership.known && this.allocationOpen && !this.recovering && !this.queue.failing;
  }

  private viewOf(region: RegionId, r: RegionRecord): RegionView | undefined {
    const m = this.membership.get(r.member);
    if (m === undefined) return undefined;
    const member = { address: m.address, status: m.status, appVersion: m.appVersion };
    return { regionId: region, member, shards: r.shards };
  }

  /** Regions a new shard may go to: not shutting down, member up and reachable, newest. */
  private allocationCandidates(): RegionView[] {
    const views: RegionView[] = [];
    for (const [region, r] of this.projected.regions()) {
      if (this.shuttingDown.has(region) || !this.membership.canTakeNewShards(r.member)) continue;
      const v = this.viewOf(region, r);
      if (v !== undefined) views.push(v);
    }
    return keepNewestAppVersion(views);
  }

  /** Decides a home for `shard` if allowed; false when no region can take new shards. */
  private maybeAllocate(shard: ShardId, requester: RegionId): boolean {
    if (!this.mayAllocate()) return false;
    if (this.projected.homeOf(shard) !== undefined || this.handOffs.has(shard)) return true;
    const candidates = this.allocationCandidates();
    if (candidates.length === 0) {
      this.log("debug", "allocation-deferred", "no region can take new shards", { shard });
      return false;
    }
    let chosen: RegionId | undefined;
    try {
      chosen = this.strategy.allocateShard(requester, shard, candidates);
    } catch (e) {
      this.log("error", "strategy-failed", `allocateShard threw: ${String(e)}`, { shard });
      return true;
    }
    if (!candidates.some((c) => c.regionId === chosen)) {
      if (chosen !== undefined)
        this.log("warn", "allocation-refused", `strategy chose ineligible region ${chosen}`, {
          shard,
          region: chosen,
        });
      return true;
    }
    this.enqueue({ type: "shard-home-allocated", shard, region: chosen as RegionId }, true);
    return true;
  }

  /** Allocates every waiting (and, with remember entities, every remembered) shard. */
  private maybeAllocateWaiting(): void {
    if (!this.mayAllocate()) return;
    for (const shard of this.waiting.shards())
      if (!this.maybeAllocate(shard, this.waiting.firstRequester(shard) ?? this.self)) return;
    for (const shard of [...this.projected.unallocated()])
      if (!this.maybeAllocate(shard, this.self)) return;
  }

  private onShardStarted(shard: ShardId, from: RegionId): void {
    if (this.hostPending.get(shard) !== from) return;
    this.hostPending.delete(shard);
    this.out.push({ type: "cancel-timer", key: CoordinatorTimer.hostShard(shard) });
  }

  private onHostShardTimer(shard: ShardId): void {
    const owner = this.hostPending.get(shard);
    if (owner === undefined) return;
    if (this.stableHomeOf(shard) !== owner || this.handOffs.has(shard)) {
      this.hostPending.delete(shard);
      return;
    }
    this.sendHostShard(shard, owner);
  }

  private sendHostShard(shard: ShardId, owner: RegionId): void {
    this.hostPending.set(shard, owner);
    this.send(owner, { type: "host-shard", shard });
    this.startTimer(CoordinatorTimer.hostShard(shard), this.settings.shardStartTimeoutMs);
  }

  private cancelHostPending(shard: ShardId): void {
    if (!this.hostPending.delete(shard)) return;
    this.out.push({ type: "cancel-timer", key: CoordinatorTimer.hostShard(shard) });
  }

  /** The home both durable and decided (undefined while they differ). */
  private stableHomeOf(shard: ShardId): RegionId | undefined {
    const home = this.durable.homeOf(shard);
    return home !== undefined && home === this.projected.homeOf(shard) ? home : undefined;
  }

  // ---- persistence ---------------------------------------------------------------------------

  private enqueue(event: CoordinatorEvent, hostShard = false): void {
    const applied = this.projected.apply(event);
    if (!applied) fail(`coordinator decided a no-op event: ${JSON.stringify(event)}`);
    this.queue.enqueue({ event, hostShard });
  }

  private emitPersist(batchId: number, entries: readonly PendingEvent[]): void {
    this.out.push({ type: "persist", batchId, events: entries.map((e) => e.event) });
  }

  private onPersisted(batchId: number): void {
    const wasFailing = this.queue.failing;
    const batch = this.queue.onPersisted(batchId);
    if (batch === undefined) {
      this.log("warn", "persisted-unexpected", `no batch ${batchId} is being written`, {
        batchId,
      });
      return;
    }
    const homes: [RegionId, ShardId, RegionId][] = [];
    for (const entry of batch.entries) {
      this.durable.apply(entry.event);
      this.afterDurable(entry, homes);
    }
    for (const msg of shardHomeMessages(homes)) this.send(msg.to, msg.message);
    this.maybeSnapshot(batch.entries.length);
    if (wasFailing) this.maybeAllocateWaiting();
    this.pumpShutdowns();
  }

  /** Announces what `entry` made durable; ShardHome answers are collected in `homes`. */
  private afterDurable(entry: PendingEvent, homes: [RegionId, ShardId, RegionId][]): void {
    const e = entry.event;
    switch (e.type) {
      case "shard-region-registered":
        if (this.projected.region(e.region)?.member === e.member)
          this.send(e.region, { type: "register-ack", coordinator: this.self });
        return;
      case "shard-region-proxy-registered":
        if (this.projected.proxies().get(e.proxy) === e.member)
          this.send(e.proxy, { type: "register-ack", coordinator: this.self });
        return;
      case "shard-home-allocated":
        if (this.stableHomeOf(e.shard) !== e.region) return;
        if (entry.hostShard) this.sendHostShard(e.shard, e.region);
        for (const to of this.waiting.take(e.shard)) homes.push([to, e.shard, e.region]);
        return;
      case "shard-home-deallocated":
      case "shard-region-terminated":
      case "shard-region-proxy-terminated":
        return;
    }
  }

  private maybeSnapshot(persistedEvents: number): void {
    const every = this.settings.snapshotAfterEvents;
    if (every === 0) return;
    this.eventsSinceSnapshot += persistedEvents;
    if (this.eventsSinceSnapshot < every) return;
    this.eventsSinceSnapshot = 0;
    this.out.push({ type: "save-snapshot", snapshot: this.durable.toSnapshot() });
  }

  private onPersistFailed(batchId: number, reason: string): void {
    const delayMs = this.queue.onFailed(batchId);
    if (delayMs === undefined) {
      this.log("warn", "persist-failed-unexpected", `no batch ${batchId} is being written`, {
        batchId,
      });
      return;
    }
    this.counters.persistFailures++;
    this.log("warn", "persist-failed", `writing batch ${batchId} failed: ${reason}`, {
      batchId,
      retryInMs: delayMs,
    });
    this.startTimer(CoordinatorTimer.persistRetry, delayMs);
  }

  private onTimer(key: string): void {
    const t = parseCoordinatorTimer(key);
    if (t === undefined) {
      this.log("debug", "timer-unknown", `unknown timer ${key}`, {});
      return;
    }
    switch (t.kind) {
      case "persist-retry": {
        const batch = this.queue.onRetryTimer();
        if (batch !== undefined) this.emitPersist(batch.batchId, batch.entries);
        return;
      }
      case "host-shard":
        this.onHostShardTimer(t.shard);
        return;
      case "hand-off":
        this.onHandOffTimeout(t.shard);
        return;
      case "unreachable-move":
        if (this.unreachableSeen.has(t.member)) this.moveShardsOfUnreachable(t.member);
        return;
      case "region-removal":
        if (this.removalPending.delete(t.region))
          this.terminateRegion(t.region, "member removed (removal margin passed)");
        return;
      case "recovery-margin":
        this.recoveryMarginPassed = true;
        this.maybeCompleteRecovery();
        return;
    }
  }

  // ---- hand-off: rebalance and graceful shutdown ---------------------------------------------

  private onRebalanceTick(): void {
    if (this.recovering && this.membership.known) {
      const missing = this.unreportedMembers();
      this.log("warn", "regions-recovery-waiting", waitingForMembersMessage(missing), {
        members: missing,
      });
    } else if (!this.allocationOpen) {
      this.log("info", "allocation-waiting", "waiting for minNrOfMembers regions", {
        minNrOfMembers: this.settings.minNrOfMembers,
        registered: this.registeredNow.size,
      });
    }
    this.warnUnreportedMembers();
    this.resendMovedAway();
    this.maybeAllocateWaiting();
    this.pumpShutdowns();
    this.maybeRebalance();
  }

  /**
   * S16: an Up member with the sharding role that has registered neither a region nor a
   * proxy at two ticks in a row most likely never started sharding for this type: it
   * hosts nothing, and a future coordinator's regions recovery would wait for it. Warned
   * at every tick while it lasts (regions recovery has its own warning).
   */
  private warnUnreportedMembers(): void {
    const now = new Set(
      this.recovering || !this.membership.known
        ? []
        : this.unreportedMembers().filter((m) => this.membership.get(m)?.status === "up"),
    );
    const lasting = [...now].filter((m) => this.unreportedAtLastTick.has(m));
    this.unreportedAtLastTick = now;
    if (lasting.length > 0)
      this.log("warn", "members-without-region", membersWithoutRegionMessage(lasting), {
        members: lasting,
      });
  }

  private maybeRebalance(): void {
    if (!this.mayAllocate()) return;
    const all: RegionView[] = [];
    const views: RegionView[] = [];
    for (const [region, r] of this.projected.regions()) {
      const v = this.viewOf(region, r);
      if (v === undefined) continue;
      all.push(v);
      if (!this.shuttingDown.has(region)) views.push(v);
    }
    if (views.length === 0) return;
    if (!regionsHaveSameAppVersion(all)) {
      this.log("debug", "rebalance-blocked", "regions run different appVersions", {});
      return;
    }
    let proposed: ShardId[];
    try {
      const facts = this.membership.rebalanceFacts();
      proposed = [...this.strategy.rebalance(views, this.handOffs.shards(), facts)];
    } catch (e) {
      this.log("error", "strategy-failed", `rebalance threw: ${String(e)}`, {});
      return;
    }
    for (const shard of proposed) {
      if (this.handOffs.size >= this.settings.rebalanceConcurrencyMax) return;
      const home = this.stableHomeOf(shard);
      if (home === undefined || this.handOffs.has(shard) || this.shuttingDown.has(home)) continue;
      this.startHandOff(shard, home, "rebalance");
    }
  }

  private onGracefulShutdownReq(region: RegionId): void {
    const r = this.projected.region(region);
    if (r === undefined) {
      this.log("info", "graceful-shutdown-ignored", `region ${region} is not registered`, {
        region,
      });
      return;
    }
    if (!this.shuttingDown.has(region)) {
      this.shuttingDown.add(region);
      this.log("info", "graceful-shutdown", `handing off ${r.shards.length} shard(s)`, {
        region,
        shards: r.shards.length,
      });
    }
    this.pumpShutdowns();
  }

  /**
   * Starts hand-offs of shutting-down regions' durable shards while slots are free. Not
   * during regions recovery: BeginHandOff would miss the regions that have not registered
   * yet, and they would keep forwarding to the region after it stopped (messages lost).
   */
  private pumpShutdowns(): void {
    if (this.recovering) return;
    const max = this.settings.rebalanceConcurrencyMax;
    for (const region of this.shuttingDown) {
      const r = this.projected.region(region);
      if (r === undefined) continue;
      for (const shard of r.shards) {
        if (this.handOffs.size >= max) return;
        if (!this.handOffs.has(shard) && this.stableHomeOf(shard) === region)
          this.startHandOff(shard, region, "shutdown");
      }
    }
  }

  private startHandOff(shard: ShardId, owner: RegionId, reason: HandOffReason): void {
    this.cancelHostPending(shard);
    const recipients = [...this.projected.regions().keys(), ...this.projected.proxies().keys()];
    const h = this.handOffs.start(shard, owner, recipients, reason, this.nowMs);
    this.log("debug", "hand-off-started", `${reason}: shard ${shard} from ${owner}`, {
      shard,
      owner,
      handOffId: h.id,
    });
    for (const to of recipients) this.send(to, { type: "begin-hand-off", shard, handOffId: h.id });
    this.startTimer(CoordinatorTimer.handOff(shard), this.settings.handOffTimeoutMs);
  }

  private onBeginHandOffAck(shard: ShardId, handOffId: number, from: RegionId): void {
    if (this.handOffs.ack(shard, handOffId, from) === "all-acked")
      this.sendHandOff(this.handOffs.get(shard) as HandOffRecord);
  }

  private sendHandOff(h: HandOffRecord): void {
    this.send(h.owner, { type: "hand-off", shard: h.shard, handOffId: h.id });
  }

  private onShardStopped(shard: ShardId, handOffId: number, from: RegionId): void {
    if (handOffId === MOVED_AWAY_HAND_OFF_ID) {
      const moved = this.movedAway.get(from);
      if (moved?.delete(shard) === true && moved.size === 0) this.movedAway.delete(from);
      this.log("debug", "moved-away-stopped", `region ${from} stopped shard ${shard}`, {
        shard,
        from,
      });
      return;
    }
    const h = this.handOffs.stopped(shard, handOffId, from);
    if (h === undefined) {
      this.log("debug", "shard-stopped-ignored", `no matching hand-off of ${shard}`, {
        shard,
        handOffId,
        from,
      });
      return;
    }
    this.counters.handOffsCompleted++;
    this.out.push({ type: "cancel-timer", key: CoordinatorTimer.handOff(shard) });
    this.enqueue({ type: "shard-home-deallocated", shard });
    if (this.waiting.has(shard))
      this.maybeAllocate(shard, this.waiting.firstRequester(shard) ?? this.self);
    else if (this.projected.unallocated().has(shard)) this.maybeAllocate(shard, this.self);
    this.pumpShutdowns();
  }

  private onHandOffTimeout(shard: ShardId): void {
    const h = this.handOffs.remove(shard);
    if (h === undefined) return;
    this.counters.handOffTimeouts++;
    this.log("warn", "hand-off-timeout", `hand-off of ${shard} aborted; it stays on ${h.owner}`, {
      shard,
      owner: h.owner,
      reason: h.reason,
      phase: h.phase,
      missingAcks: [...h.pendingAcks],
      handOffTimeoutMs: this.settings.handOffTimeoutMs,
    });
    const home = this.stableHomeOf(shard);
    if (home !== undefined)
      for (const to of this.waiting.take(shard))
        this.send(to, { type: "shard-home", shard, region: home });
    this.pumpShutdowns();
  }

  // ---- termination ---------------------------------------------------------------------------

  /**
   * The member of `region` was removed. Its shards get new homes only after
   * regionRemovalMarginMs: a downed member may still run them until it notices (see the
   * setting). Meanwhile requests for them wait.
   */
  private regionMemberRemoved(region: RegionId): void {
    const margin = this.settings.regionRemovalMarginMs;
    if (margin === 0) {
      this.terminateRegion(region, "member removed");
      return;
    }
    if (this.removalPending.has(region)) return;
    const r = this.projected.region(region);
    if (r === undefined) return;
    // Counted once, from the removal: what already passed of the margin (e.g. while the
    // coordinator singleton waited it before starting here) is not waited again.
    const left = this.marginLeftMs(r.member);
    if (left === 0) {
      this.terminateRegion(region, "member removed (removal margin passed)");
      return;
    }
    this.removalPending.add(region);
    this.log(
      "info",
      "region-removal-pending",
      `region ${region}: member removed; shards move in ${left} ms`,
      {
        region,
        regionRemovalMarginMs: margin,
        waitMs: left,
      },
    );
    this.startTimer(CoordinatorTimer.regionRemoval(region), left);
  }

  private terminateRegion(region: RegionId, why: string): void {
    const r = this.projected.region(region);
    if (r === undefined) return;
    if (this.removalPending.delete(region))
      this.out.push({ type: "cancel-timer", key: CoordinatorTimer.regionRemoval(region) });
    this.movedAway.delete(region);
    this.log("info", "region-terminated", `region ${region} ${why}`, {
      region,
      shards: r.shards.length,
    });
    for (const shard of r.shards)
      if (this.hostPending.get(shard) === region) this.cancelHostPending(shard);
    this.enqueue({ type: "shard-region-terminated", region });
    this.shuttingDown.delete(region);
    this.registeredNow.delete(region);
    this.regionGone(region);
    this.maybeAllocateWaiting();
    this.pumpShutdowns();
  }

  private terminateProxy(proxy: RegionId): void {
    if (!this.projected.proxies().has(proxy)) return;
    this.enqueue({ type: "shard-region-proxy-terminated", proxy });
    this.regionGone(proxy);
  }

  /** Hand-offs owned by `region` end; its missing acks count; it waits for nothing more. */
  private regionGone(region: RegionId): void {
    const { dropped, allAcked } = this.handOffs.regionGone(region);
    for (const h of dropped)
      this.out.push({ type: "cancel-timer", key: CoordinatorTimer.handOff(h.shard) });
    for (const h of allAcked) this.sendHandOff(h);
    this.waiting.removeRequester(region);
  }

  // ---- outputs -------------------------------------------------------------------------------

  private send(to: RegionId, message: RegionCommand): void {
    this.out.push({ type: "send", to, message });
  }

  private startTimer(key: string, delayMs: number): void {
    this.out.push({ type: "start-timer", key, delayMs });
  }

  private log(
    level: CoordinatorLogLevel,
    event: string,
    message: string,
    fields: Record<string, unknown>,
  ): void {
    this.out.push({ type: "log", level, event, message, fields });
  }
}

/** The views in the best member class (region-preference.ts: newest appVersion), in order. */
function keepNewestAppVersion(views: readonly RegionView[]): RegionView[] {
  let best: RegionView | undefined;
  for (const v of views) if (best === undefined || compareRegionMembers(v, best) < 0) best = v;
  return views.filter((v) => best !== undefined && compareRegionMembers(v, best) === 0);
}

/** ShardHome per requester, or one ShardHomes when a requester gets several homes. */
function shardHomeMessages(
  homes: readonly [RegionId, ShardId, RegionId][],
): { to: RegionId; message: RegionCommand }[] {
  const byRequester = new Map<RegionId, [ShardId, RegionId][]>();
  for (const [to, shard, region] of homes) {
    const list = byRequester.get(to) ?? [];
    list.push([shard, region]);
    byRequester.set(to, list);
  }
  return [...byRequester].map(([to, list]) => {
    if (list.length === 1) {
      const [shard, region] = list[0] as [ShardId, RegionId];
      return { to, message: { type: "shard-home", shard, region } };
    }
    const byRegion = new Map<RegionId, ShardId[]>();
    for (const [shard, region] of list)
      byRegion.set(region, [...(byRegion.get(region) ?? []), shard]);
    const grouped = [...byRegion].map(([region, shards]) => ({ region, shards }));
    return { to, message: { type: "shard-homes", homes: grouped } };
  });
}

function membersWithoutRegionMessage(members: readonly string[]): string {
  return (
    `${members.length} up member(s) that may host shards registered no region or proxy: ` +
    `${members.join(", ")} (is sharding started on those nodes? They host no shards, and a ` +
    "new coordinator waits for them before allocating)"
  );
}

function waitingForMembersMessage(missing: readonly string[]): string {
  if (missing.length === 0)
    return "allocation is held until the removal margin of the members that left before registering has passed";
  return (
    `allocation is held until ${missing.length} member(s) register a region or proxy or ` +
    `are removed: ${missing.join(", ")} (is sharding started on those nodes?)`
  );
}
