/**
 * Cluster: the membership driver of one node. It owns the node's MembershipState and
 * feeds the sans-IO core machines (core/membership, core/downing) with timer ticks,
 * received messages and failure-detector verdicts, then performs their outputs in order:
 * state change -> events to subscribers -> messages to peers.
 *
 * - gossip: every gossipIntervalMs (up to 3 rounds while fewer than half have seen the
 *   state) to a target biased towards members that have not seen the current version;
 *   full gossip when the target has not seen it, a status digest otherwise;
 * - joining: seed-node conversation (SeedJoinMachine) or an explicit join(address);
 * - leader actions on convergence; weakly-up after allowWeaklyUpMembersMs without it;
 * - failure detection: request/response heartbeats to the peers chosen on the hashed
 *   ring, one phi accrual detector per monitored peer; verdicts become reachability rows;
 *   heartbeat replies go out ahead of other control frames; self-aware: the reaper
 *   measures this node's own stall (its timer's lateness, the runtime's event-loop
 *   delay) and excuses it (core/failure-detector/self-stall.ts);
 * - boot storms: Join requests admitted at a bounded rate (core/membership/join-admission.ts),
 *   members moved up in batches, and the resolver's formation rules
 *   (core/downing/sbr-formation.ts; docs/cluster.md "Formation and boot storms");
 * - downing: the Split Brain Resolver decides once the unreachable set is stable; never
 *   automatic downing by timeout, unless the opt-in auto-down strategy is active (the
 *   leader downs members unreachable for downing.autoDown.afterMs; docs/cluster.md);
 * - a member that sees itself downed or removed leaves and stops (`onSelfRemoved`).
 *
 * All messages travel on remoting's CONTROL lane (unreliable; every conversation here is
 * periodic or retried, as in the specification).
 */
import type { ActorSystem } from "../../actor/actor-system.js";
import type { Disposable } from "../../base/disposable.js";
import { ConfigError, InvalidAddressError } from "../../base/errors.js";
import { AutoDownTracker } from "../../core/downing/auto-down.js";
import { decideDowning } from "../../core/downing/downing-decision.js";
import { downingStrategyOf } from "../../core/downing/downing-strategy.js";
import {
  countsAsFirstConvergence,
  gateBeforeFirstConvergence,
} from "../../core/downing/sbr-formation.js";
import {
  downAllWhenUnstableMsOf,
  resolveSbrSettings,
  type SbrSettings,
  type SbrSettingsOverrides,
} from "../../core/downing/sbr-settings.js";
import { SbrStabilityTracker } from "../../core/downing/sbr-stability.js";
import {
  sbrViewOf,
  unreachableMembersOf,
  unreachableUpTogetherOf,
} from "../../core/downing/sbr-view.js";
import { PhiAccrualFailureDetector } from "../../core/failure-detector/phi-accrual.js";
import {
  type PhiAccrualSettings,
  resolvePhiAccrualSettings,
} from "../../core/failure-detector/phi-accrual-settings.js";
import { SelfStallTracker } from "../../core/failure-detector/self-stall.js";
import { type Address, addressOf, addressToString } from "../../core/membership/address.js";
import { type ClusterEvent, diffClusterEvents } from "../../core/membership/cluster-events.js";
import {
  type ClusterSettings,
  isWeaklyUpAllowed,
  resolveClusterSettings,
} from "../../core/membership/cluster-settings.js";
import {
  emptyGossip,
  findMember,
  type Gossip,
  hasTombstone,
  markAsDown,
  pruneTombstones,
  seenByNode,
  updateMembers,
  withoutSeen,
  withReachability,
  withSeen,
} from "../../core/membership/gossip.js";
import {
  gossipRoundsPerInterval,
  gossipStatusOf,
  receiveGossip,
  receiveGossipStatus,
  selectGossipTarget,
} from "../../core/membership/gossip-logic.js";
import { HeartbeatRing } from "../../core/membership/heartbeat-ring.js";
import { onInitJoin, onJoin, onWelcome } from "../../core/membership/join.js";
import { JoinAdmission } from "../../core/membership/join-admission.js";
import { leaderActions, stampLocalChange } from "../../core/membership/leader-actions.js";
import { type Member, withStatus } from "../../core/membership/member.js";
import {
  convergence,
  isLeader,
  leader,
  type MembershipState,
  membershipStateOf,
  selfMember,
  withLatestGossip,
} from "../../core/membership/membership-state.js";
import {
  allUnreachable,
  allUnreachableFrom,
  isReachableBy,
  markReachable,
  markUnreachable,
} from "../../core/membership/reachability.js";
import { parseSeedAddress, parseSeedAddresses } from "../../core/membership/seed-address.js";
import {
  SeedJoinMachine,
  type SeedJoinOutput,
  type SeedJoinTimer,
} from "../../core/membership/seed-join.js";
import {
  parseUniqueAddress,
  type UniqueAddress,
  uniqueAddressOf,
  uniqueAddressToString,
} from "../../core/membership/unique-address.js";
import { vectorClockOf } from "../../core/membership/vector-clock.js";
import type { Lease } from "../../ports/lease.js";
import type { Logger } from "../../ports/logger.js";
import {
  type AssociationFailure,
  describeAssociationFailure,
} from "../remoting/association-failure.js";
import type { Peer } from "../remoting/inbound-connection.js";
import type { Remoting } from "../remoting/remoting.js";
import type { WireNode } from "../remoting/wire-path.js";
import { DowningDecisions } from "./downing-decisions.js";
import {
  decodeMembershipMessage,
  encodeMembershipMessage,
  MembershipKind,
  type MembershipMessage,
} from "./membership-messages.js";

export interface ClusterOptions {
  /**
   * Seed nodes as "host:port" (also "system@host:port" or "akka://system@host:port"); the
   * first may form a new cluster. Empty: join() manually. Validated at start (ConfigError
   * naming `seedNodes[i]`).
   */
  readonly seedNodes?: readonly string[];
  readonly roles?: readonly string[];
  readonly appVersion?: string;
  readonly settings?: Partial<ClusterSettings>;
  readonly failureDetector?: Partial<PhiAccrualSettings>;
  readonly downing?: SbrSettingsOverrides;
  /** Required by the lease-majority strategy: the lease the surviving side must hold. */
  readonly lease?: Lease;
  /** Called once when this member is downed or removed; default: terminate the system. */
  readonly onSelfRemoved?: (reason: string) => void;
}

/** A snapshot of the cluster as this node sees it. */
export interface ClusterState {
  readonly members: readonly Member[];
  readonly unreachable: readonly Member[];
  readonly leader: UniqueAddress | undefined;
  readonly seenBy: readonly UniqueAddress[];
  readonly convergence: boolean;
}

export type ClusterEventHandler = (event: ClusterEvent) => void;

const key = uniqueAddressToString;
/** Heartbeat answers to the last this-many requests feed the failure detector. */
const HEARTBEAT_RESPONSE_WINDOW = 3;
/** Bound of the per-member "told it was removed" rate-limit table. */
const REMOVED_NOTICES_TRACKED_MAX = 1_000;

export class Cluster {
  readonly settings: Readonly<ClusterSettings>;
  readonly sbrSettings: Readonly<SbrSettings>;
  readonly self: UniqueAddress;
  private ms: MembershipState;
  private readonly log: Logger;
  private readonly handlers = new Set<ClusterEventHandler>();
  private readonly timers: Disposable[] = [];
  private seedJoin: SeedJoinMachine | null = null;
  private readonly seedTimers = new Map<SeedJoinTimer, Disposable>();
  private joinedWith: Address | undefined;
  private readonly detectors = new Map<string, PhiAccrualFailureDetector>();
  /** @internal Downing decisions taken here, by kind (read by the metrics). */
  readonly downingDecisions = new DowningDecisions();
  private readonly heartbeatStarted = new Map<string, number>();
  private heartbeatSeq = 0;
  private readonly exitingConfirmed = new Set<string>();
  /** Removal waits for exitingCompleted() (a coordinated shutdown runs exiting tasks). */
  private holdExiting = false;
  /** Self is exiting and its exiting tasks still run: it neither sees gossip nor confirms. */
  private exitingTasksInProgress = false;
  private lastConvergenceAt: number;
  private readonly sbr: SbrStabilityTracker;
  /** Set when the auto-down strategy is active (instead of the split brain resolver). */
  private readonly autoDown: AutoDownTracker | undefined;
  private selfRemovedSignalled = false;
  private stopped = false;
  private readonly roles: readonly string[];
  private readonly appVersion: string;
  private readonly onUpCallbacks: (() => void)[] = [];
  private readonly onRemovedCallbacks: (() => void)[] = [];
  private readonly selfStall: SelfStallTracker;
  private readonly joinAdmission: JoinAdmission<{
    readonly from: UniqueAddress;
    readonly roles: string[];
    readonly appVersion: string;
  }>;
  /** Set once this node is up: the cluster has converged with it (sbr-formation.ts). */
  private firstConverged = false;
  private withheldDowningKey = "";

  private constructor(
    private readonly system: ActorSystem,
    private readonly remoting: Remoting,
    private readonly options: ClusterOptions,
  ) {
    this.settings = resolveClusterSettings(options.settings);
    this.sbrSettings = resolveSbrSettings(options.downing);
    const node = remoting.node;
    this.self = uniqueAddressOf(
      addressOf("shardkit", node.systemName, node.host, node.port),
      Number(remoting.localUid),
    );
    this.ms = membershipStateOf({ latestGossip: emptyGossip, selfUniqueAddress: this.self });
    this.log = system.log.child({ component: "cluster", self: addressToString(this.self.address) });
    this.lastConvergenceAt = this.now();
    this.sbr = new SbrStabilityTracker({
      stableAfterMs: this.sbrSettings.stableAfterMs,
      downAllWhenUnstableMs: downAllWhenUnstableMsOf(this.sbrSettings),
    });
    if (this.sbrSettings.activeStrategy === "lease-majority" && options.lease === undefined)
      throw new ConfigError(
        "downing.activeStrategy",
        "lease-majority",
        "a strategy other than lease-majority, or a `lease` option",
      );
    this.roles = [...(options.roles ?? [])];
    this.appVersion = options.appVersion ?? "1.0.0";
    const fd = resolvePhiAccrualSettings(options.failureDetector);
    this.selfStall = new SelfStallTracker({
      ignoreBelowMs: this.settings.selfStallIgnoredBelowMs,
      acceptableHeartbeatPauseMs: fd.acceptableHeartbeatPauseMs,
      // one heartbeat round and the wait for its answer, after the stall ended
      suspectForMs: this.settings.heartbeatIntervalMs + this.settings.expectedResponseAfterMs,
    });
    this.joinAdmission = new JoinAdmission({
      ratePerSecond: this.settings.maxJoinsAdmittedPerSecond,
      queueMax: this.settings.joinAdmissionQueueMax,
    });
    this.autoDown =
      this.sbrSettings.activeStrategy === "auto-down" ? new AutoDownTracker() : undefined;
    if (this.autoDown !== undefined)
      this.log.warn(
        "AUTO-DOWN IS ON: the leader downs any member unreachable for downing.autoDown.afterMs, " +
          "on each side of a network partition; a partition therefore splits the cluster into " +
          "islands that each go on alone, and without shard leases one entity can run on two " +
          "islands at once. Use a split brain resolver strategy unless docs/cluster.md " +
          '"Auto-down" says this is acceptable for you.',
        { afterMs: this.sbrSettings.autoDown.afterMs },
      );
  }

  /** Starts membership on a node whose remoting is running. */
  static start(system: ActorSystem, remoting: Remoting, options: ClusterOptions = {}): Cluster {
    const c = new Cluster(system, remoting, options);
    for (let kind = MembershipKind.Gossip; kind <= MembershipKind.ExitingConfirmed; kind++)
      remoting.registerControlHandler(kind, (peer, payload) => c.onControl(kind, peer, payload));
    const seeds = parseSeedAddresses(options.seedNodes, "seedNodes", system.name).map((a) =>
      addressOf("shardkit", system.name, a.host, a.port),
    );
    c.startPeriodicTasks();
    if (seeds.length > 0) {
      c.startJoinDiagnostics(seeds);
      c.seedJoin = new SeedJoinMachine({
        self: c.self.address,
        seedNodes: seeds,
        seedNodeTimeoutMs: c.settings.seedNodeTimeoutMs,
        seedNodeInitJoinResendIntervalMs: c.settings.seedNodeInitJoinResendIntervalMs,
        retryUnsuccessfulJoinAfterMs: c.settings.retryUnsuccessfulJoinAfterMs,
      });
      c.performSeed(c.seedJoin.handle({ type: "start" }));
    }
    system.whenTerminated.then(() => c.stop());
    return c;
  }

  // ------------------------------------------------------------------ public API

  get state(): ClusterState {
    const g = this.ms.latestGossip;
    const unreachableKeys = new Set(allUnreachable(g.overview.reachability).map(key));
    return {
      members: g.members,
      unreachable: g.members.filter((m) => unreachableKeys.has(key(m.uniqueAddress))),
      leader: leader(this.ms),
      seenBy: g.overview.seen,
      convergence: convergence(this.ms, this.exitingConfirmedNodes()),
    };
  }

  /** The roles this node joins with. */
  get selfRoles(): readonly string[] {
    return this.roles;
  }

  get selfMember(): Member | undefined {
    return selfMember(this.ms);
  }

  get membershipState(): MembershipState {
    return this.ms;
  }

  /** @internal Failure detectors of the monitored members by unique address (metrics: phi). */
  get failureDetectors(): ReadonlyMap<string, PhiAccrualFailureDetector> {
    return this.detectors;
  }

  /** Subscribes to cluster events; with initialState, current members are replayed first. */
  subscribe(handler: ClusterEventHandler, options: { initialState?: boolean } = {}): Disposable {
    if (options.initialState) {
      const before = membershipStateOf({ latestGossip: emptyGossip, selfUniqueAddress: this.self });
      for (const e of diffClusterEvents(before, this.ms)) handler(e);
    }
    this.handlers.add(handler);
    return { dispose: () => this.handlers.delete(handler) };
  }

  registerOnMemberUp(callback: () => void): void {
    if (this.selfMember?.status === "up") callback();
    else this.onUpCallbacks.push(callback);
  }

  registerOnMemberRemoved(callback: () => void): void {
    this.onRemovedCallbacks.push(callback);
  }

  /** Joins the cluster that the node at "host:port" belongs to (or itself, to form one). */
  join(hostPort: string): void {
    const to = this.addressOfHostPort(hostPort);
    this.joinedWith = to;
    if (to.host === this.self.address.host && to.port === this.self.address.port) this.joinSelf();
    else {
      if (this.seedJoin === null) this.startJoinDiagnostics([to]);
      this.send(to, {
        kind: MembershipKind.Join,
        roles: [...this.roles],
        appVersion: this.appVersion,
      });
    }
  }

  /** Marks the member at "host:port" as leaving (graceful). */
  leave(hostPort: string): void {
    this.changeMember(hostPort, (m) =>
      m.status === "up" || m.status === "weakly-up" || m.status === "joining"
        ? withStatus(m, "leaving")
        : undefined,
    );
  }

  /** Marks the member at "host:port" as down (it will be removed and must shut down). */
  down(hostPort: string): void {
    const m = this.memberAt(hostPort);
    if (m === undefined || m.status === "down") return;
    this.setState(
      withLatestGossip(
        this.ms,
        stampLocalChange(markAsDown(this.ms.latestGossip, m.uniqueAddress), this.self),
      ),
    );
    this.requestBroadcast();
  }

  /** Stops timers and handlers (the system's termination calls it). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) t.dispose();
    for (const t of this.seedTimers.values()) t.dispose();
    this.stopJoinDiagnostics();
    this.handlers.clear();
  }

  // ------------------------------------------------------------------ join diagnostics

  private joinTargets: readonly Address[] = [];
  private readonly joinFailures = new Map<string, AssociationFailure>();
  private readonly joinConnected = new Set<string>();
  private joinListener: Disposable | undefined;
  private joinDiagnosticsTimer: Disposable | undefined;
  private joinStartedAt = 0;

  /**
   * Until this node is a member, remembers why the associations to `targets` fail and
   * logs it at warn once per joinDiagnosticsIntervalMs (a wrong seed address must not be
   * silent at the default log level).
   */
  private startJoinDiagnostics(targets: readonly Address[]): void {
    const same =
      this.joinListener !== undefined &&
      targets.length === this.joinTargets.length &&
      targets.every(
        (t, i) => addressToString(t) === addressToString(this.joinTargets[i] as Address),
      );
    // a join retried (e.g. by bootstrap) keeps its start time and its warning cadence
    if (same) return;
    this.joinTargets = targets;
    this.joinStartedAt = this.now();
    const hps = new Set(targets.map((t) => `${t.host}:${t.port}`));
    this.joinListener?.dispose();
    this.joinListener = this.remoting.onAssociationEvent((e) => {
      if (!hps.has(e.hostPort)) return;
      if (e.type === "failed") {
        this.joinFailures.set(e.hostPort, e.failure);
        this.joinConnected.delete(e.hostPort);
      } else {
        this.joinFailures.delete(e.hostPort);
        this.joinConnected.add(e.hostPort);
      }
    });
    this.armJoinDiagnostics();
  }

  private armJoinDiagnostics(): void {
    this.joinDiagnosticsTimer?.dispose();
    this.joinDiagnosticsTimer = this.system.runtime.scheduler.schedule(
      this.settings.joinDiagnosticsIntervalMs,
      () => {
        this.joinDiagnosticsTimer = undefined;
        if (this.stopped || this.joinedOnce || selfMember(this.ms) !== undefined) {
          this.stopJoinDiagnostics();
          return;
        }
        this.log.warn(this.joinDiagnosticsMessage(), {
          seedNodes: this.joinTargets.map((t) => `${t.host}:${t.port}`),
          causes: Object.fromEntries([...this.joinFailures].map(([hp, f]) => [hp, f.cause])),
        });
        this.armJoinDiagnostics();
      },
    );
  }

  private joinDiagnosticsMessage(): string {
    const elapsed = Math.round(this.now() - this.joinStartedAt);
    const targets = this.joinTargets.map((t) => `${t.host}:${t.port}`);
    const trying =
      this.seedJoin !== null
        ? `trying seed nodes ${targets.join(", ")}`
        : `trying to join through ${targets.join(", ")}`;
    const lines = targets
      .filter((hp) => hp !== `${this.self.address.host}:${this.self.address.port}`)
      .map((hp) => {
        const f = this.joinFailures.get(hp);
        if (f !== undefined) return `seed ${hp}: ${describeAssociationFailure(f)}`;
        if (this.joinConnected.has(hp))
          return `seed ${hp}: connected, but no answer to the join request yet (is it a member of a cluster itself?)`;
        return `seed ${hp}: no connection result yet`;
      });
    return `not a cluster member yet after ${elapsed} ms, ${trying}; ${lines.join("; ")}`;
  }

  private stopJoinDiagnostics(): void {
    this.joinListener?.dispose();
    this.joinListener = undefined;
    this.joinDiagnosticsTimer?.dispose();
    this.joinDiagnosticsTimer = undefined;
    this.joinFailures.clear();
    this.joinConnected.clear();
  }

  // ------------------------------------------------------------------ state changes

  private setState(state: MembershipState, events?: readonly ClusterEvent[]): void {
    const before = this.ms;
    const next = this.holdWhileExiting(state);
    this.ms = next;
    const evts = events ?? diffClusterEvents(before, next);
    for (const e of evts) this.publish(e);
    if (convergence(next, this.exitingConfirmedNodes())) this.lastConvergenceAt = this.now();
    if (!this.firstConverged && countsAsFirstConvergence(selfMember(next)?.status)) {
      this.firstConverged = true;
      this.log.debug("up, so the cluster has converged once: the split brain resolver may act");
    }
    this.checkSelf();
  }

  private readonly toldRemoved = new Map<string, number>();

  /** Sends our gossip (with its tombstone) to a removed member, at most once per interval. */
  private tellRemovedMember(node: UniqueAddress): void {
    const k = key(node);
    const now = this.now();
    const last = this.toldRemoved.get(k);
    if (last !== undefined && now - last < this.settings.gossipIntervalMs) return;
    if (this.toldRemoved.size >= REMOVED_NOTICES_TRACKED_MAX) this.toldRemoved.clear();
    this.toldRemoved.set(k, now);
    this.sendGossip(node);
  }

  /**
   * A removed incarnation may never talk to this node again: quarantine it in remoting
   * (clears its queues, stops redialling, refuses its handshakes). A downed member at
   * once; a member that left gracefully after quarantineRemovedNodeAfterMs, so the
   * final gossip telling it that it was removed can still reach it.
   */
  private quarantineRemoved(member: Member, previousStatus: string): void {
    const node = member.uniqueAddress;
    const a = node.address;
    const quarantine = () =>
      this.remoting.quarantine(
        { systemName: a.system, host: a.host, port: a.port, hostPort: `${a.host}:${a.port}` },
        BigInt(node.uid),
        `cluster member removed (was ${previousStatus})`,
      );
    if (previousStatus === "down") quarantine();
    else
      this.system.runtime.scheduler.schedule(
        this.settings.quarantineRemovedNodeAfterMs,
        quarantine,
      );
  }

  private publish(e: ClusterEvent): void {
    if (e.type === "member-removed" && key(e.member.uniqueAddress) !== key(this.self))
      this.quarantineRemoved(e.member, e.previousStatus);
    if (e.type === "member-up" && key(e.member.uniqueAddress) === key(this.self))
      for (const cb of this.onUpCallbacks.splice(0)) cb();
    for (const h of [...this.handlers]) {
      try {
        h(e);
      } catch (error) {
        this.log.error("cluster event handler threw", { event: e.type, error });
      }
    }
  }

  private changeMember(hostPort: string, f: (m: Member) => Member | undefined): void {
    const m = this.memberAt(hostPort);
    const changed = m === undefined ? undefined : f(m);
    if (changed === undefined) return;
    this.setState(
      withLatestGossip(
        this.ms,
        stampLocalChange(updateMembers(this.ms.latestGossip, [changed]), this.self),
      ),
    );
    this.requestBroadcast();
  }

  /** Reacts to this member's own status: exiting -> confirm; down/removed -> stop. */
  private leftGracefully = false;

  /**
   * While self is exiting and its exiting tasks run (holdExiting, until exitingCompleted),
   * it does not mark gossip as seen: the leader needs its seen mark or its
   * ExitingConfirmed to remove it, so the removal waits for those tasks (the sharding
   * hand-off runs before them), as in Akka.
   */
  private holdWhileExiting(state: MembershipState): MembershipState {
    if (!this.holdExiting || selfMember(state)?.status !== "exiting") return state;
    this.exitingTasksInProgress = true;
    const g = state.latestGossip;
    return seenByNode(g, this.self) ? withLatestGossip(state, withoutSeen(g, this.self)) : state;
  }

  /**
   * Makes the leader wait with the removal of this member, once it is exiting, until
   * `exitingCompleted()` is called. Used by the coordinated shutdown wiring
   * (installClusterShutdown), which calls exitingCompleted in cluster-exiting-done.
   */
  holdRemovalUntilExitingCompleted(): void {
    this.holdExiting = true;
  }

  /** The exiting tasks are done: see the current gossip, confirm exiting to the leader. */
  exitingCompleted(): void {
    if (!this.holdExiting) return;
    this.holdExiting = false;
    if (!this.exitingTasksInProgress) return;
    this.exitingTasksInProgress = false;
    if (selfMember(this.ms) === undefined) return;
    this.setState(withLatestGossip(this.ms, withSeen(this.ms.latestGossip, this.self)), []);
    this.requestBroadcast();
  }

  private checkSelf(): void {
    const me = selfMember(this.ms);
    if (me?.status === "leaving" || me?.status === "exiting") this.leftGracefully = true;
    if (me?.status === "exiting" && !this.exitingTasksInProgress) this.confirmExiting();
    const removed = me === undefined && this.joinedOnce;
    if (me?.status === "down") this.selfRemoved("this member was downed");
    else if (removed) this.selfRemoved("this member was removed");
  }

  private joinedOnce = false;

  private confirmExiting(): void {
    const l = leader(this.ms);
    const msg: MembershipMessage = { kind: MembershipKind.ExitingConfirmed, node: key(this.self) };
    for (const m of this.ms.latestGossip.members)
      if (
        key(m.uniqueAddress) !== key(this.self) &&
        (l === undefined || key(l) === key(m.uniqueAddress))
      )
        this.send(m.uniqueAddress.address, msg);
  }

  private selfRemoved(reason: string): void {
    if (this.selfRemovedSignalled) return;
    this.selfRemovedSignalled = true;
    // After a graceful leave, removal is the expected end; anything else is a warning.
    if (this.leftGracefully) this.log.info("left the cluster; stopping", { reason });
    else this.log.warn("removed from the cluster; stopping", { reason });
    for (const cb of this.onRemovedCallbacks.splice(0)) cb();
    const handler = this.options.onSelfRemoved;
    if (handler !== undefined) handler(reason);
    else void this.system.terminate();
  }

  // ------------------------------------------------------------------ periodic tasks

  private startPeriodicTasks(): void {
    const s = this.settings;
    this.every(s.gossipIntervalMs, () => this.gossipTick());
    this.every(s.leaderActionsIntervalMs, () => this.leaderTick());
    this.every(s.unreachableNodesReaperIntervalMs, (latenessMs) => this.reaperTick(latenessMs));
    this.every(s.heartbeatIntervalMs, () => this.heartbeatTick());
  }

  /** Runs `fn` every intervalMs; it gets how late this run fired (ms, >= 0). */
  private every(intervalMs: number, fn: (latenessMs: number) => void): void {
    const slot = this.timers.length;
    const arm = (delay: number) => {
      const due = this.now() + delay;
      this.timers[slot] = this.system.runtime.scheduler.schedule(delay, () => {
        if (this.stopped) return;
        fn(Math.max(0, this.now() - due));
        arm(intervalMs);
      });
    };
    arm(
      this.settings.periodicTasksInitialDelayMs +
        intervalMs * this.system.runtime.random.next() * 0.1,
    );
  }

  private gossipTick(): void {
    for (const j of this.joinAdmission.due(this.now()))
      this.admitJoin(j.from, j.roles, j.appVersion);
    if (selfMember(this.ms) === undefined) return;
    if (this.broadcastPending) {
      this.broadcastPending = false;
      this.gossipToAll();
      return;
    }
    const rounds = gossipRoundsPerInterval(this.ms);
    for (let i = 0; i < rounds; i++) {
      const target = selectGossipTarget(this.ms, this.system.runtime.random, this.settings);
      if (target === undefined) return;
      if (target.send === "gossip") this.sendGossip(target.node);
      else this.sendStatus(target.node);
    }
  }

  private leaderTick(): void {
    if (selfMember(this.ms) === undefined) return;
    const now = this.now();
    const r = leaderActions(this.ms, {
      minNrOfMembers: this.settings.minNrOfMembers,
      roleMinNrOfMembers: this.settings.roleMinNrOfMembers,
      allowWeaklyUp: isWeaklyUpAllowed(this.settings),
      weaklyUpDelayElapsed: now - this.lastConvergenceAt >= this.settings.allowWeaklyUpMembersMs,
      exitingConfirmed: this.exitingConfirmedNodes(),
      nowMs: now,
      maxMembersUpPerRound: this.settings.maxMembersUpPerLeaderRound,
    });
    if (r.type === "changed") {
      for (const n of r.removedExitingConfirmed) this.exitingConfirmed.delete(key(n));
      this.setState(r.state, r.events);
      for (const n of r.exitingGossipTargets) this.sendGossip(n);
      // Removed members are no gossip targets any more: tell them directly, so they
      // see their tombstone and shut down at once.
      for (const n of r.removedExitingConfirmed) this.sendGossip(n);
      this.requestBroadcast();
    }
    this.sbrTick(now);
  }

  /**
   * This node's own stall up to now (the reaper timer's lateness, or the runtime's
   * event-loop delay if longer) does not count against the members it monitors; after a
   * stall longer than the acceptable pause its unreachability verdicts are suspect for a
   * while (core/failure-detector/self-stall.ts).
   */
  private excuseOwnStall(latenessMs: number, now: number): void {
    const loopDelayMs = this.system.runtime.eventLoop?.takeMaxDelayMs() ?? 0;
    const v = this.selfStall.observe(Math.max(latenessMs, loopDelayMs), now);
    if (v.type !== "stalled") return;
    for (const d of this.detectors.values()) d.excuse(v.excuseMs, now);
    this.sbr.excuse(v.excuseMs, now);
    if (v.suspect)
      this.log.warn(
        "this member itself was stalled (event loop blocked or starved of CPU) longer than " +
          "the acceptable heartbeat pause: that time does not count against the members it " +
          "monitors, and it marks no member unreachable until it has heard them again",
        { stalledMs: Math.round(v.excuseMs), suspectUntilMs: Math.round(v.suspectUntilMs - now) },
      );
  }

  private reaperTick(latenessMs = 0): void {
    const now = this.now();
    // measured even before this node is a member, so a later tick gets a fresh figure
    this.excuseOwnStall(latenessMs, now);
    if (selfMember(this.ms) === undefined) return;
    const suspect = this.selfStall.isSuspect(now);
    let r = this.ms.latestGossip.overview.reachability;
    const before = r;
    for (const [k, detector] of this.detectors) {
      const subject = this.memberByKey(k);
      if (subject === undefined) continue;
      const reachable = isReachableBy(r, this.self, subject.uniqueAddress);
      const available = detector.isAvailable(now);
      if (reachable && !available && suspect) {
        this.log.debug("not marking node as unreachable: own verdicts suspect after a stall", {
          node: k,
        });
      } else if (reachable && !available) {
        this.log.warn("marking node as unreachable", { node: k, phi: detector.phi(now) });
        r = markUnreachable(r, this.self, subject.uniqueAddress);
      } else if (!reachable && available) {
        this.log.info("marking node as reachable again", { node: k });
        r = markReachable(r, this.self, subject.uniqueAddress);
      }
    }
    // A member this node no longer heartbeats (the ring moved while members joined) has
    // no detector left to bring it back: this node withdraws its verdict, as an observer
    // without evidence (its new observers judge it from now on).
    for (const subject of allUnreachableFrom(r, this.self))
      if (!this.detectors.has(key(subject))) {
        this.log.info("no longer monitoring node: withdrawing its unreachable mark", {
          node: key(subject),
        });
        r = markReachable(r, this.self, subject);
      }
    let g = this.ms.latestGossip;
    if (r !== before) g = stampLocalChange(withReachability(g, r), this.self);
    const pruned = pruneTombstones(g, now - this.settings.pruneGossipTombstonesAfterMs);
    if (g !== this.ms.latestGossip || pruned.tombstones.length !== g.tombstones.length)
      this.setState(withLatestGossip(this.ms, pruned));
  }

  private heartbeatTick(): void {
    const me = selfMember(this.ms);
    if (me === undefined) return;
    const g = this.ms.latestGossip;
    const nodes = g.members
      .filter((m) => m.status !== "joining" || key(m.uniqueAddress) === key(this.self))
      .map((m) => m.uniqueAddress);
    const ring = new HeartbeatRing(nodes, {
      unreachable: allUnreachable(g.overview.reachability),
      monitoredByNrOfMembers: this.settings.monitoredByNrOfMembers,
    });
    const receivers = ring.receivers(this.self);
    const now = this.now();
    const wanted = new Set(receivers.map(key));
    for (const k of [...this.detectors.keys()])
      if (!wanted.has(k)) {
        this.detectors.delete(k);
        this.heartbeatStarted.delete(k);
      }
    const seq = ++this.heartbeatSeq;
    for (const n of receivers) {
      const k = key(n);
      if (!this.detectors.has(k)) {
        this.detectors.set(k, new PhiAccrualFailureDetector(this.options.failureDetector));
        this.heartbeatStarted.set(k, now);
      }
      const started = this.heartbeatStarted.get(k) as number;
      const d = this.detectors.get(k) as PhiAccrualFailureDetector;
      // A peer that never answers still becomes unreachable: after expectedResponseAfterMs
      // the first heartbeat is assumed, so phi grows from then on.
      if (!d.isMonitoring && now - started >= this.settings.expectedResponseAfterMs)
        d.heartbeat(now);
      this.send(n.address, { kind: MembershipKind.Heartbeat, seq });
    }
  }

  private sbrTick(now: number): void {
    if (this.autoDown !== undefined) {
      this.autoDownTick(this.autoDown, now);
      return;
    }
    const g = this.ms.latestGossip;
    const view = sbrViewOf(this.ms);
    this.sbr.observe(unreachableMembersOf(view), now, unreachableUpTogetherOf(view));
    const tick = this.sbr.tick(now, isLeader(this.ms, this.self) || this.isLeaderAmongReachable());
    if (tick.type === "down-all-unstable") {
      this.downingDecisions.count("down-all-when-unstable");
      this.applySbrDowning(
        g.members.map((m) => m.uniqueAddress),
        `down-all-when-unstable after ${tick.unstableForMs} ms`,
      );
      return;
    }
    if (tick.type !== "decide") return;
    const outcome = decideDowning(downingStrategyOf(this.sbrSettings), sbrViewOf(this.ms), {});
    if (outcome.type === "acquire-lease") {
      this.acquireLeaseThenDecide(outcome.delayMs);
      return;
    }
    if (outcome.type !== "down") return;
    this.downingDecisions.count(outcome.decision);
    this.applySbrDowning(outcome.down, outcome.reason);
  }

  /** A resolver decision, through the formation gate (core/downing/sbr-formation.ts). */
  private applySbrDowning(nodes: readonly UniqueAddress[], reason: string): void {
    const gate = gateBeforeFirstConvergence(
      nodes,
      this.self,
      this.firstConverged,
      this.sbrSettings.actBeforeFirstConvergence,
    );
    if (gate.withheld.length > 0) {
      const k = gate.withheld.map(key).join(",");
      if (k !== this.withheldDowningKey)
        this.log.warn(
          "split brain resolver: not downing other members: this member was never up, so " +
            "the cluster has not converged with it yet (downing.actBeforeFirstConvergence is false)",
          { withheld: gate.withheld.map(key), reason },
        );
      this.withheldDowningKey = k;
    }
    this.applyDowning(gate.down, reason);
  }

  /** auto-down: the leader of this side downs every member unreachable for afterMs. */
  private autoDownTick(tracker: AutoDownTracker, now: number): void {
    tracker.observe(unreachableMembersOf(sbrViewOf(this.ms)), now);
    if (!(isLeader(this.ms, this.self) || this.isLeaderAmongReachable())) return;
    const afterMs = this.sbrSettings.autoDown.afterMs;
    const due = tracker.due(now, afterMs);
    if (due.length === 0) return;
    this.downingDecisions.count("auto-down");
    this.applyDowning(
      due.map((m) => m.uniqueAddress),
      `auto-down: unreachable for at least ${afterMs} ms`,
      "auto-down",
    );
  }

  private leaseInFlight = false;

  /** lease-majority: after `delayMs` (the minority waits), try the lease, then decide. */
  private acquireLeaseThenDecide(delayMs: number): void {
    const lease = this.options.lease;
    if (lease === undefined || this.leaseInFlight) return;
    this.leaseInFlight = true;
    this.system.runtime.scheduler.schedule(delayMs, () => {
      lease.acquire().then(
        (acquired) => this.decideWithLease(acquired),
        (error: unknown) => {
          this.log.warn("split brain resolver: lease store unreachable", { error });
          this.decideWithLease(false);
        },
      );
    });
  }

  private decideWithLease(leaseAcquired: boolean): void {
    this.leaseInFlight = false;
    if (this.stopped) return;
    const outcome = decideDowning(downingStrategyOf(this.sbrSettings), sbrViewOf(this.ms), {
      leaseAcquired,
    });
    if (outcome.type !== "down") return;
    this.downingDecisions.count(outcome.decision);
    this.applySbrDowning(outcome.down, outcome.reason);
  }

  /** The SBR of each side decides on that side's leader: the first reachable up member. */
  private isLeaderAmongReachable(): boolean {
    const g = this.ms.latestGossip;
    const unreachable = new Set(allUnreachable(g.overview.reachability).map(key));
    const first = g.members.find(
      (m) =>
        !unreachable.has(key(m.uniqueAddress)) && (m.status === "up" || m.status === "leaving"),
    );
    return first !== undefined && key(first.uniqueAddress) === key(this.self);
  }

  private applyDowning(
    nodes: readonly UniqueAddress[],
    reason: string,
    by = "split brain resolver",
  ): void {
    if (nodes.length === 0) return;
    this.log.warn(`${by}: downing`, { nodes: nodes.map(key), reason });
    let g = this.ms.latestGossip;
    const selfKey = key(this.self);
    for (const n of nodes)
      if (key(n) !== selfKey && findMember(g, n) !== undefined) g = markAsDown(g, n);
    if (nodes.some((n) => key(n) === selfKey)) g = markAsDown(g, this.self);
    this.sbr.decisionApplied(this.now());
    this.setState(withLatestGossip(this.ms, stampLocalChange(g, this.self)));
    this.requestBroadcast();
  }

  // ------------------------------------------------------------------ messages

  private onControl(kind: number, peer: Peer, payload: Uint8Array): void {
    if (this.stopped) return;
    const m = decodeMembershipMessage(this.remoting.registry, kind, payload);
    if (m === undefined) {
      this.remoting.badInput("undecodable membership message", peer.node.hostPort, `kind ${kind}`);
      return;
    }
    const from = uniqueAddressOf(
      addressOf("shardkit", peer.node.systemName, peer.node.host, peer.node.port),
      Number(peer.uid),
    );
    this.onMessage(from, m);
  }

  private onMessage(from: UniqueAddress, m: MembershipMessage): void {
    switch (m.kind) {
      case MembershipKind.Gossip:
        this.onGossip(from, m.to, m.gossip);
        return;
      case MembershipKind.GossipStatus:
        this.onStatus(from, m.version, m.seenDigest);
        return;
      case MembershipKind.Join:
        this.onJoinRequest(from, m.roles, m.appVersion);
        return;
      case MembershipKind.Welcome:
        this.onWelcomeMessage(from, m.gossip);
        return;
      case MembershipKind.InitJoin: {
        const reply = onInitJoin(this.ms);
        this.send(from.address, {
          kind:
            reply.type === "init-join-ack"
              ? MembershipKind.InitJoinAck
              : MembershipKind.InitJoinNack,
        });
        return;
      }
      case MembershipKind.InitJoinAck:
      case MembershipKind.InitJoinNack:
        if (this.seedJoin !== null)
          this.performSeed(
            this.seedJoin.handle({
              type: m.kind === MembershipKind.InitJoinAck ? "init-join-ack" : "init-join-nack",
              from: from.address,
            }),
          );
        return;
      case MembershipKind.Heartbeat:
        if (!hasTombstone(this.ms.latestGossip, from))
          this.send(from.address, { kind: MembershipKind.HeartbeatRsp, seq: m.seq }, true);
        return;
      case MembershipKind.HeartbeatRsp:
        // Only answers to recent requests count: answers held up by a cut arrive in a
        // burst at the heal and would teach the detector near-zero intervals.
        if (m.seq > this.heartbeatSeq - HEARTBEAT_RESPONSE_WINDOW)
          this.detectors.get(key(from))?.heartbeat(this.now());
        return;
      case MembershipKind.ExitingConfirmed:
        this.exitingConfirmed.add(m.node);
        return;
    }
  }

  private onGossip(from: UniqueAddress, to: string, gossip: Gossip): void {
    let toNode: UniqueAddress;
    try {
      toNode = parseUniqueAddress(to);
    } catch {
      return;
    }
    const r = receiveGossip(
      this.ms,
      { from, to: toNode, gossip, sentAtMs: this.now() },
      this.now(),
      {
        gossipTimeToLiveMs: this.settings.gossipTimeToLiveMs,
        exitingTasksInProgress: this.exitingTasksInProgress,
      },
    );
    if (r.type === "ignored") {
      if (r.reason === "self-removed") this.selfRemoved("the cluster removed this member");
      // A removed member that still talks (e.g. it was paused while being downed) must
      // learn of its tombstone, or it would run on as a zombie.
      else if (r.reason === "sender-removed") this.tellRemovedMember(from);
      return;
    }
    this.joinedOnce = true;
    this.setState(r.state, r.events);
    if (r.replyTo !== undefined) this.sendGossip(r.replyTo);
  }

  private onStatus(from: UniqueAddress, version: [string, number][], seenDigest: number): void {
    let v: ReturnType<typeof vectorClockOf>;
    try {
      v = vectorClockOf(version);
    } catch {
      return;
    }
    if (hasTombstone(this.ms.latestGossip, from)) {
      this.tellRemovedMember(from);
      return;
    }
    const reply = receiveGossipStatus(this.ms, { from, version: v, seenDigest });
    if (reply.type === "send-gossip") this.sendGossip(reply.to);
    else if (reply.type === "send-status") this.sendStatus(reply.to);
  }

  private onJoinRequest(from: UniqueAddress, roles: string[], appVersion: string): void {
    const offer = this.joinAdmission.offer(key(from), { from, roles, appVersion }, this.now());
    if (offer === "admitted") this.admitJoin(from, roles, appVersion);
    else if (offer === "dropped")
      this.log.info("join request dropped: admission queue full (the node retries)", {
        node: key(from),
        queued: this.joinAdmission.queued,
      });
  }

  private admitJoin(from: UniqueAddress, roles: string[], appVersion: string): void {
    if (this.stopped) return;
    const outcome = onJoin(this.ms, { node: from, roles, appVersion });
    switch (outcome.type) {
      case "refused":
        this.log.info("join refused", { node: key(from), reason: outcome.reason });
        return;
      case "welcome-again":
        this.send(from.address, { kind: MembershipKind.Welcome, gossip: outcome.welcome.gossip });
        return;
      case "downed-old-incarnation":
        this.setState(outcome.state, outcome.events);
        this.requestBroadcast();
        return;
      case "joined":
        this.log.info("node joining", { node: key(from) });
        this.setState(outcome.state, outcome.events);
        if (outcome.welcome !== undefined)
          this.send(from.address, { kind: MembershipKind.Welcome, gossip: outcome.welcome.gossip });
        this.requestBroadcast();
        return;
    }
  }

  private onWelcomeMessage(from: UniqueAddress, gossip: Gossip): void {
    const joinedWith = this.joinedWith ?? from.address;
    const outcome = onWelcome(this.ms, { from, gossip }, joinedWith);
    if (outcome.type !== "welcomed") return;
    this.joinedOnce = true;
    this.log.info("welcomed into the cluster", { by: key(from) });
    this.setState(outcome.state, outcome.events);
    if (this.seedJoin !== null)
      this.performSeed(this.seedJoin.handle({ type: "welcome", from: from.address }));
    if (outcome.replyTo !== undefined) this.sendGossip(outcome.replyTo);
  }

  private joinSelf(): void {
    const outcome = onJoin(this.ms, {
      node: this.self,
      roles: this.roles,
      appVersion: this.appVersion,
    });
    if (outcome.type !== "joined") return;
    this.joinedOnce = true;
    this.log.info("formed a new cluster");
    this.setState(outcome.state, outcome.events);
    if (outcome.formedNewCluster) this.leaderTick();
  }

  // ------------------------------------------------------------------ seed-node conversation

  private performSeed(outputs: readonly SeedJoinOutput[]): void {
    for (const o of outputs) {
      switch (o.type) {
        case "send-init-join":
          for (const to of o.to) this.send(to, { kind: MembershipKind.InitJoin });
          break;
        case "send-join":
          this.joinedWith = o.to;
          this.send(o.to, {
            kind: MembershipKind.Join,
            roles: [...this.roles],
            appVersion: this.appVersion,
          });
          break;
        case "join-self":
          this.joinedWith = this.self.address;
          this.joinSelf();
          break;
        case "start-timer": {
          this.seedTimers.get(o.timer)?.dispose();
          const timer = o.timer;
          this.seedTimers.set(
            timer,
            this.system.runtime.scheduler.schedule(o.delayMs, () => {
              this.seedTimers.delete(timer);
              if (!this.stopped && this.seedJoin !== null)
                this.performSeed(this.seedJoin.handle({ type: "timeout", timer }));
            }),
          );
          break;
        }
        case "cancel-timer":
          this.seedTimers.get(o.timer)?.dispose();
          this.seedTimers.delete(o.timer);
          break;
        case "joined":
          for (const t of this.seedTimers.values()) t.dispose();
          this.seedTimers.clear();
          break;
      }
    }
  }

  // ------------------------------------------------------------------ sending

  private sendGossip(to: UniqueAddress): void {
    if (key(to) === key(this.self)) return;
    this.send(to.address, {
      kind: MembershipKind.Gossip,
      to: key(to),
      gossip: this.ms.latestGossip,
    });
  }

  private sendStatus(to: UniqueAddress): void {
    const s = gossipStatusOf(this.ms);
    this.send(to.address, {
      kind: MembershipKind.GossipStatus,
      version: s.version.entries.map(([k, c]) => [k, c]),
      seenDigest: s.seenDigest,
    });
  }

  /**
   * After a local change (join accepted, leader action, leave/down, SBR decision) the
   * state goes to every member — but at most once per gossip interval: broadcasting on
   * every change made a wave of J joins into N members cost about J·N full gossips.
   */
  private requestBroadcast(): void {
    this.broadcastPending = true;
  }

  private broadcastPending = false;

  /** Gossips the current state to every other member (after a local change). */
  private gossipToAll(): void {
    for (const m of this.ms.latestGossip.members)
      if (key(m.uniqueAddress) !== key(this.self) && m.status !== "down")
        this.sendGossip(m.uniqueAddress);
  }

  private send(to: Address, m: MembershipMessage, urgent = false): void {
    if (this.stopped) return;
    const node: WireNode = {
      systemName: to.system,
      host: to.host,
      port: to.port,
      hostPort: `${to.host}:${to.port}`,
    };
    this.remoting.sendControl(
      node,
      m.kind,
      encodeMembershipMessage(this.remoting.registry, m),
      urgent,
    );
  }

  // ------------------------------------------------------------------ helpers

  private now(): number {
    return this.system.runtime.clock.now();
  }

  private exitingConfirmedNodes(): UniqueAddress[] {
    const out: UniqueAddress[] = [];
    for (const k of this.exitingConfirmed) {
      const m = this.memberByKey(k);
      if (m !== undefined) out.push(m.uniqueAddress);
    }
    return out;
  }

  private memberByKey(k: string): Member | undefined {
    return this.ms.latestGossip.members.find((m) => key(m.uniqueAddress) === k);
  }

  private memberAt(hostPort: string): Member | undefined {
    const a = this.addressOfHostPort(hostPort);
    return this.ms.latestGossip.members.find(
      (m) => m.uniqueAddress.address.host === a.host && m.uniqueAddress.address.port === a.port,
    );
  }

  private addressOfHostPort(hostPort: string): Address {
    let a: { host: string; port: number };
    try {
      a = parseSeedAddress(hostPort, "address", this.system.name);
    } catch (error) {
      throw new InvalidAddressError(
        hostPort,
        `expected host:port${error instanceof ConfigError ? ` (${error.allowed})` : ""}`,
      );
    }
    return addressOf("shardkit", this.system.name, a.host, a.port);
  }
}
