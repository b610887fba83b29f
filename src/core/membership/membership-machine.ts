/**
 * The membership machine of one node (docs/cluster.md, "The membership machine"): every
 * decision of cluster membership, sans-IO. The driver (cluster/membership/cluster.ts)
 * feeds it timer ticks, received messages, user commands and lease results with the
 * current time, and performs the outputs in the order given: `state-changed` (the view
 * its readers see) -> `quarantine` + `publish` per event -> messages to peers.
 *
 * It composes the pure rules of this folder and of core/downing and owns the state
 * between them: the MembershipState, the exiting confirmations, the seed-node
 * conversation (seed-join.ts), the join admission queue (join-admission.ts), one phi
 * accrual detector per monitored peer (heartbeat-ring.ts), the own-stall tracker
 * (core/failure-detector/self-stall.ts), and the resolver's stability and formation
 * state (core/downing/sbr-stability.ts, sbr-formation.ts) or the auto-down tracker.
 *
 * - gossip tick: admit queued joins; one broadcast after local changes, else up to 3
 *   rounds to a target biased towards members that have not seen the current version
 *   (each round is a status with the version's hash: with our seen set for such a
 *   member, a member holding another version answers with its full status;
 *   gossip-logic.ts, "Seen status", "Hashed status"; a full gossip that answers a member
 *   holding our member list goes without it, "Compact gossip");
 * - leader tick: leader actions on convergence, then the resolver (or auto-down);
 * - reaper tick: excuse this node's own stall, turn detector verdicts into reachability
 *   rows, prune tombstones;
 * - heartbeat tick: request heartbeats from the peers chosen on the hashed ring;
 * - messages: gossip, status, join conversation, heartbeats, exiting confirmation.
 *
 * Randomness (the gossip target) comes from the `random` source of the configuration; the
 * machine has no clock of its own.
 */
import { AutoDownTracker } from "../downing/auto-down.js";
import { decideDowning, type SbrDecisionKind } from "../downing/downing-decision.js";
import { downingStrategyOf } from "../downing/downing-strategy.js";
import { countsAsFirstConvergence, gateBeforeFirstConvergence } from "../downing/sbr-formation.js";
import { downAllWhenUnstableMsOf, type SbrSettings } from "../downing/sbr-settings.js";
import { SbrStabilityTracker } from "../downing/sbr-stability.js";
import { sbrViewOf, unreachableMembersOf, unreachableUpTogetherOf } from "../downing/sbr-view.js";
import { PhiAccrualFailureDetector } from "../failure-detector/phi-accrual.js";
import {
  type PhiAccrualSettings,
  resolvePhiAccrualSettings,
} from "../failure-detector/phi-accrual-settings.js";
import { SelfStallTracker } from "../failure-detector/self-stall.js";
import { type Address, addressEquals } from "./address.js";
import { type ClusterEvent, diffClusterEvents } from "./cluster-events.js";
import { type ClusterSettings, isWeaklyUpAllowed } from "./cluster-settings.js";
import {
  emptyGossip,
  findMember,
  type Gossip,
  hasMember,
  hasTombstone,
  markAsDown,
  membersHashOf,
  pruneTombstones,
  seenByNode,
  updateMembers,
  withoutSeen,
  withReachability,
  withSeen,
} from "./gossip.js";
import {
  GossipComparison,
  gossipRoundsPerInterval,
  gossipStatusOf,
  type RandomSource,
  receiveGossip,
  receiveGossipStatus,
  selectGossipTarget,
} from "./gossip-logic.js";
import { HeartbeatRing } from "./heartbeat-ring.js";
import { JoinRefusedReason, onInitJoin, onJoin, onWelcome } from "./join.js";
import { JoinAdmission } from "./join-admission.js";
import { leaderActions, stampLocalChange } from "./leader-actions.js";
import { type Member, withStatus } from "./member.js";
import type { MemberStatus } from "./member-status.js";
import { MembershipKind, type MembershipMessage } from "./membership-messages.js";
import {
  convergence,
  isLeader,
  leader,
  type MembershipState,
  membershipStateOf,
  selfMember,
  withLatestGossip,
} from "./membership-state.js";
import {
  allUnreachable,
  allUnreachableFrom,
  isReachableBy,
  markReachable,
  markUnreachable,
  type Reachability,
} from "./reachability.js";
import { SeedJoinMachine, type SeedJoinOutput, type SeedJoinTimer } from "./seed-join.js";
import { sameElements } from "./sorted-array.js";
import { parseUniqueAddress, type UniqueAddress, uniqueAddressToString } from "./unique-address.js";
import { emptyVectorClock, hasEntries, type VectorClock, vectorClockOf } from "./vector-clock.js";

/** Configuration of one node's machine (settings already resolved). */
export interface MembershipMachineConfig {
  readonly self: UniqueAddress;
  readonly roles: readonly string[];
  readonly appVersion: string;
  readonly settings: Readonly<ClusterSettings>;
  readonly sbrSettings: Readonly<SbrSettings>;
  readonly failureDetector?: Partial<PhiAccrualSettings> | undefined;
  /** Seed nodes in configured order; empty: join by the `join` command only. */
  readonly seedNodes: readonly Address[];
  /** Whether a lease is configured (lease-majority asks for it by `acquire-lease`). */
  readonly hasLease: boolean;
  /** The gossip target choice; the driver passes the runtime's Random. */
  readonly random: RandomSource;
}

/** The periodic ticks; the driver runs one timer per kind at its interval setting. */
export type MembershipTick = "gossip" | "leader" | "reaper" | "heartbeat";

/** What a downing decision was: the resolver's kind, down-all-when-unstable or auto-down. */
export type DowningDecisionKind = SbrDecisionKind | "down-all-when-unstable" | "auto-down";

/** What the driver feeds the machine. */
export type MembershipInput =
  /** Begin the seed-node conversation (when seed nodes are configured). */
  | { readonly type: "start" }
  | { readonly type: "gossip-tick" }
  | { readonly type: "leader-tick" }
  /**
   * `latenessMs`: how late the reaper timer fired; `loopDelayMs`: the runtime's largest
   * event-loop delay since the last tick (0 when unknown). Both measure this node's stall.
   */
  | { readonly type: "reaper-tick"; readonly latenessMs: number; readonly loopDelayMs: number }
  | { readonly type: "heartbeat-tick" }
  | { readonly type: "seed-timeout"; readonly timer: SeedJoinTimer }
  | { readonly type: "received"; readonly from: UniqueAddress; readonly message: MembershipMessage }
  /** User commands; `join` to this node's own address forms a new cluster. */
  | { readonly type: "join"; readonly to: Address }
  | { readonly type: "leave"; readonly host: string; readonly port: number }
  | { readonly type: "down"; readonly host: string; readonly port: number }
  /** The answer to `acquire-lease` (false also when the lease store failed). */
  | { readonly type: "lease-result"; readonly acquired: boolean }
  | { readonly type: "hold-removal-until-exiting-completed" }
  | { readonly type: "exiting-completed" }
  /**
   * Remoting: `node` refused a handshake because it quarantined this incarnation (it
   * removed this member from its cluster). See {@link MembershipMachine.quarantinedBy}.
   */
  | { readonly type: "quarantined-by"; readonly node: UniqueAddress }
  /**
   * A compact status from `from` could not be read: it was made against a member list
   * this node does not hold (gossip-logic.ts, "Compact status"). Answered with the full
   * status, so that the exchange goes on.
   */
  | { readonly type: "status-unreadable"; readonly from: UniqueAddress };

/**
 * Statuses of both this member and the member that quarantined it for which the
 * quarantine downs this member (`quarantined-by`): live members of one view. Down,
 * exiting and removed members are on their way out already.
 */
const QUARANTINE_DOWNS_SELF_WHILE: ReadonlySet<MemberStatus> = new Set<MemberStatus>([
  "joining",
  "weakly-up",
  "up",
  "preparing-for-shutdown",
  "ready-for-shutdown",
  "leaving",
]);

export type MembershipLogLevel = "debug" | "info" | "warn";

/** What the driver must do, in order. */
export type MembershipOutput =
  | {
      readonly type: "send";
      readonly to: Address;
      readonly message: MembershipMessage;
      /** Ahead of other control frames (heartbeat replies). */
      readonly urgent: boolean;
    }
  /** The membership state readers see from now on (published before its events). */
  | { readonly type: "state-changed"; readonly state: MembershipState }
  | { readonly type: "publish"; readonly event: ClusterEvent }
  /** Quarantine this removed incarnation in remoting, now or after `afterMs`. */
  | {
      readonly type: "quarantine";
      readonly node: UniqueAddress;
      readonly afterMs: number | undefined;
      readonly reason: string;
    }
  /**
   * Every downing decision (resolver, auto-down), once, before it is applied: the hook to
   * count decisions by kind. `nodes` is what it downs after the formation gate (empty:
   * everything was withheld, nothing changes).
   */
  | {
      readonly type: "downing";
      readonly by: "split brain resolver" | "auto-down";
      readonly decision: DowningDecisionKind;
      readonly nodes: readonly UniqueAddress[];
      readonly reason: string;
    }
  /** lease-majority: after `delayMs`, try the lease and feed `lease-result`. */
  | { readonly type: "acquire-lease"; readonly delayMs: number }
  | { readonly type: "start-seed-timer"; readonly timer: SeedJoinTimer; readonly delayMs: number }
  | { readonly type: "cancel-seed-timer"; readonly timer: SeedJoinTimer }
  | { readonly type: "cancel-seed-timers" }
  /** This member was downed or removed: it must stop (once). */
  | { readonly type: "self-removed"; readonly reason: string }
  | {
      readonly type: "log";
      readonly level: MembershipLogLevel;
      readonly message: string;
      readonly fields: Readonly<Record<string, unknown>> | undefined;
    };

const key = uniqueAddressToString;
/**
 * The clock of a received status version, per frozen version array: a converged cluster
 * sends the same status bytes again and again, decoded once into one shared message
 * (cluster/membership/membership-messages.ts). The WeakMap keeps none alive.
 */
const statusClocks = new WeakMap<readonly (readonly [string, number])[], VectorClock>();
/** The (empty) version of a hashed status on the wire. */
const NO_CLOCK_ENTRIES: readonly (readonly [string, number])[] = Object.freeze([]);
/** Heartbeat answers to the last this-many requests feed the failure detector. */
/**
 * The nodes of each member list's heartbeat ring (all members but joining ones), frozen
 * and kept per list, so that heartbeat-ring.ts keeps the ring's order per list too: every
 * member builds the ring of the same list, again whenever the unreachable nodes change.
 */
const ringMembers = new WeakMap<readonly Member[], readonly UniqueAddress[]>();

const HEARTBEAT_RESPONSE_WINDOW = 3;
/** Bound of the per-member "told it was removed" rate-limit table. */
const REMOVED_NOTICES_TRACKED_MAX = 1_000;

interface PendingJoin {
  readonly from: UniqueAddress;
  readonly roles: string[];
  readonly appVersion: string;
}

export class MembershipMachine {
  private readonly self: UniqueAddress;
  private readonly settings: Readonly<ClusterSettings>;
  private readonly sbrSettings: Readonly<SbrSettings>;
  private ms: MembershipState;
  private out: MembershipOutput[] = [];
  private nowMs = 0;
  private seedJoin: SeedJoinMachine | null = null;
  /** Since when the leader of this view has not seen this joining member's gossip. */
  private unseenByLeaderSince: number | undefined;
  /** Leave was asked before this node became a member: it joins nothing any more. */
  private leftBeforeJoining = false;
  private joinedWith: Address | undefined;
  private joinedOnceFlag = false;
  /** The last refusal reason of each node that refused this node's Join (host:port). */
  private readonly joinRefusalsByNode = new Map<string, string>();
  private readonly detectors = new Map<string, PhiAccrualFailureDetector>();
  private readonly heartbeatStarted = new Map<string, number>();
  private heartbeatSeq = 0;
  private readonly exitingConfirmed = new Set<string>();
  /** Removal waits for `exiting-completed` (a coordinated shutdown runs exiting tasks). */
  private holdExiting = false;
  /** Self is exiting and its exiting tasks still run: it neither sees gossip nor confirms. */
  private exitingTasksInProgress = false;
  private lastConvergenceAt: number;
  private readonly sbr: SbrStabilityTracker;
  /** Set when the auto-down strategy is active (instead of the split brain resolver). */
  private readonly autoDown: AutoDownTracker | undefined;
  private selfRemovedSignalled = false;
  private leftGracefully = false;
  private readonly selfStall: SelfStallTracker;
  private readonly joinAdmission: JoinAdmission<PendingJoin>;
  /** Set once this node is up: the cluster has converged with it (sbr-formation.ts). */
  private firstConverged = false;
  private withheldDowningKey = "";
  private leaseInFlight = false;
  private broadcastPending = false;
  /**
   * The last version this node knows other members hold (it received it in a gossip or
   * a status, or broadcast it), and the member list of that state: a gossip round to a
   * member that has not seen a newer version of our own making sends it the gossip
   * itself (gossipTick; gossip-logic.ts, "Own versions").
   */
  private sharedVersion: VectorClock | undefined = undefined;
  private sharedMembers: readonly Member[] | undefined = undefined;
  private readonly toldRemoved = new Map<string, number>();
  /** heartbeatReceivers() of the members and reachability table it was computed from. */
  private ringCache:
    | {
        readonly members: readonly Member[];
        readonly reachability: Reachability;
        /** The unreachable nodes the ring was built with (it depends on these, not on rows). */
        readonly unreachable: readonly string[];
        readonly receivers: readonly UniqueAddress[];
      }
    | undefined;
  /** The resolver's unreachable sets of the members and table they were computed from. */
  /** The downing view the resolver's tracker observed last (see downingTick). */
  private downingViewObserved: object | undefined = undefined;
  private downingViewCache:
    | {
        readonly members: readonly Member[];
        readonly reachability: Reachability;
        readonly unreachable: Member[];
        readonly upTogether: Member[];
      }
    | undefined;
  /** isLeaderAmongReachable() of the members and table it was computed from. */
  private leaderAmongReachableCache:
    | {
        readonly members: readonly Member[];
        readonly reachability: Reachability;
        readonly result: boolean;
      }
    | undefined;
  /** Members by canonical string, per member list (memberByKey). */
  private membersByKey: { readonly members: readonly Member[]; readonly map: Map<string, Member> } =
    { members: [], map: new Map() };

  constructor(
    private readonly config: MembershipMachineConfig,
    nowMs: number,
  ) {
    this.self = config.self;
    this.settings = config.settings;
    this.sbrSettings = config.sbrSettings;
    this.ms = membershipStateOf({ latestGossip: emptyGossip, selfUniqueAddress: this.self });
    this.lastConvergenceAt = nowMs;
    this.sbr = new SbrStabilityTracker({
      stableAfterMs: this.sbrSettings.stableAfterMs,
      downAllWhenUnstableMs: downAllWhenUnstableMsOf(this.sbrSettings),
    });
    const fd = resolvePhiAccrualSettings(config.failureDetector);
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
  }

  /** Feeds one input at time `nowMs`; returns the outputs to perform, in order. */
  handle(input: MembershipInput, nowMs: number): MembershipOutput[] {
    this.out = [];
    this.nowMs = nowMs;
    switch (input.type) {
      case "start":
        this.start();
        break;
      case "gossip-tick":
        this.gossipTick();
        break;
      case "leader-tick":
        this.leaderTick();
        break;
      case "reaper-tick":
        this.reaperTick(input.latenessMs, input.loopDelayMs);
        break;
      case "heartbeat-tick":
        this.heartbeatTick();
        break;
      case "seed-timeout":
        if (this.seedJoin !== null)
          this.performSeed(this.seedJoin.handle({ type: "timeout", timer: input.timer }));
        break;
      case "received":
        this.onMessage(input.from, input.message);
        break;
      case "status-unreadable":
        if (hasMember(this.ms.latestGossip, input.from)) this.sendStatus(input.from);
        break;
      case "join":
        this.join(input.to);
        break;
      case "leave":
        if (
          input.host === this.self.address.host &&
          input.port === this.self.address.port &&
          selfMember(this.ms) === undefined
        ) {
          this.leaveBeforeJoining();
          break;
        }
        this.changeMember(input.host, input.port, (m) =>
          m.status === "up" || m.status === "weakly-up" || m.status === "joining"
            ? withStatus(m, "leaving")
            : undefined,
        );
        break;
      case "down":
        this.down(input.host, input.port);
        break;
      case "lease-result":
        this.decideWithLease(input.acquired);
        break;
      case "hold-removal-until-exiting-completed":
        this.holdExiting = true;
        break;
      case "quarantined-by":
        this.quarantinedBy(input.node);
        break;
      case "exiting-completed":
        this.exitingCompleted();
        break;
    }
    return this.out;
  }

  // ------------------------------------------------------------------ read-only view

  get state(): MembershipState {
    return this.ms;
  }

  /** Whether this node was ever part of a cluster (gossip or a welcome accepted). */
  get joinedOnce(): boolean {
    return this.joinedOnceFlag;
  }

  /**
   * Why nodes refused this node's Join, by host:port (the last reason of each): shown by
   * the driver's join diagnostics. Bounded by the nodes this node sends Join to.
   */
  get joinRefusals(): ReadonlyMap<string, string> {
    return this.joinRefusalsByNode;
  }

  /** Whether the seed-node conversation runs (seed nodes were configured). */
  get joinsThroughSeeds(): boolean {
    return this.seedJoin !== null;
  }

  /** The phi accrual detector of each monitored member, by unique address (read-only). */
  get failureDetectors(): ReadonlyMap<string, PhiAccrualFailureDetector> {
    return this.detectors;
  }

  /** The members of `state` that confirmed they are exiting (counted for convergence). */
  exitingConfirmedIn(state: MembershipState): UniqueAddress[] {
    const out: UniqueAddress[] = [];
    for (const k of this.exitingConfirmed) {
      const m = state.latestGossip.members.find((x) => key(x.uniqueAddress) === k);
      if (m !== undefined) out.push(m.uniqueAddress);
    }
    return out;
  }

  // ------------------------------------------------------------------ commands

  private start(): void {
    if (this.config.seedNodes.length === 0 || this.seedJoin !== null) return;
    const s = this.settings;
    this.seedJoin = new SeedJoinMachine({
      self: this.self.address,
      seedNodes: this.config.seedNodes,
      seedNodeTimeoutMs: s.seedNodeTimeoutMs,
      seedNodeInitJoinResendIntervalMs: s.seedNodeInitJoinResendIntervalMs,
      retryUnsuccessfulJoinAfterMs: s.retryUnsuccessfulJoinAfterMs,
    });
    this.performSeed(this.seedJoin.handle({ type: "start" }));
  }

  private join(to: Address): void {
    if (this.leftBeforeJoining) return;
    this.joinedWith = to;
    if (to.host === this.self.address.host && to.port === this.self.address.port) this.joinSelf();
    else this.sendJoin(to);
  }

  /**
   * Leave before this node is a member (a shutdown while it still tries to join): it
   * stops trying and accepts no Welcome afterwards, so a process on its way out does not
   * join a cluster only to vanish from it when its shutdown stops the membership
   * (simulator S20wL seed 373: such a member was welcomed into a new cluster, became up
   * and ran a singleton, then stopped without leaving, and the cluster waited for the
   * failure detector and the resolver).
   */
  private leaveBeforeJoining(): void {
    if (this.leftBeforeJoining) return;
    this.leftBeforeJoining = true;
    this.log("info", "leaving before joining a cluster: no longer trying to join");
    if (this.seedJoin === null) return;
    this.seedJoin = null;
    this.out.push({ type: "cancel-seed-timers" });
  }

  private down(host: string, port: number): void {
    const m = this.memberAt(host, port);
    if (m === undefined || m.status === "down") return;
    this.localChange(markAsDown(this.ms.latestGossip, m.uniqueAddress));
  }

  /**
   * `node` refused this incarnation as quarantined: it removed this member, so its
   * cluster goes on without this one, and the two can never talk again. When `node` is
   * still a live member in this node's own view (joining, weakly up, up or leaving: not
   * down, exiting or removed), two clusters that each believe they are the cluster exist
   * side by side — a minority whose resolver has not decided yet, or an island left by
   * a decision on a stale view (docs/cluster.md, "Known issue") — and they would never
   * merge. This member downs itself, so its process stops and can be restarted to join
   * the other cluster. A refusal by an incarnation this view has already downed or
   * removed changes nothing: this side has decided against it.
   */
  private quarantinedBy(node: UniqueAddress): void {
    const me = selfMember(this.ms);
    if (me === undefined) {
      this.quarantinedBeforeJoining(node);
      return;
    }
    const other = findMember(this.ms.latestGossip, node);
    if (other === undefined || key(node) === key(this.self)) return;
    if (
      !QUARANTINE_DOWNS_SELF_WHILE.has(me.status) ||
      !QUARANTINE_DOWNS_SELF_WHILE.has(other.status)
    )
      return;
    this.log("warn", "quarantined by a member of this node's view: this member downs itself", {
      by: key(node),
      reason:
        "that member removed this incarnation, so its cluster and this node's can never merge; restart this process to join again",
    });
    this.localChange(markAsDown(this.ms.latestGossip, this.self));
  }

  /** Whether this node tries to join (seed nodes or a `join`) and is not a member yet. */
  private tryingToJoin(): boolean {
    return (
      !this.joinedOnceFlag &&
      !this.leftBeforeJoining &&
      selfMember(this.ms) === undefined &&
      (this.seedJoin !== null || this.joinedWith !== undefined)
    );
  }

  /**
   * A node this one tries to join refused its handshake as quarantined: a cluster admitted
   * this incarnation (its Welcome never arrived: lost, or cut off by a partition) and then
   * downed and removed it (simulator S20wL seed 9154). The incarnation can never join any
   * more, so it stops like a removed member; its process restarts as a new incarnation.
   */
  private quarantinedBeforeJoining(node: UniqueAddress): void {
    if (!this.tryingToJoin() || key(node) === key(this.self)) return;
    this.selfRemoved(
      `quarantined by ${key(node)} before this node learned it had joined: that cluster removed this incarnation, which can never join again; restart the process to join as a new incarnation`,
    );
  }

  /**
   * A Join of this node was refused. `tombstoned` or `downed`: the cluster admitted this
   * incarnation, but its Welcome never arrived, and then downed or removed it; it stops
   * like a removed member (see quarantinedBeforeJoining). Other reasons are transient or
   * a configuration error: kept for the join diagnostics; the seed conversation retries.
   */
  private onJoinRefused(from: UniqueAddress, reason: string): void {
    if (!this.tryingToJoin()) return;
    const hp = `${from.address.host}:${from.address.port}`;
    // kept (and logged once per change) only for the nodes this one asks: a small table
    const asked =
      (this.joinedWith !== undefined && addressEquals(this.joinedWith, from.address)) ||
      this.config.seedNodes.some((a) => addressEquals(a, from.address));
    if (!asked) this.log("debug", "join request refused", { by: key(from), reason });
    else if (this.joinRefusalsByNode.get(hp) !== reason) {
      this.log("info", "join request refused", { by: key(from), reason });
      this.joinRefusalsByNode.set(hp, reason);
    }
    if (reason === JoinRefusedReason.Tombstoned || reason === JoinRefusedReason.Downed)
      this.selfRemoved(
        `join refused by ${key(from)} (${reason}): that cluster admitted this incarnation, then downed or removed it before this node learned it had joined; it can never join again; restart the process to join as a new incarnation`,
      );
  }

  private changeMember(host: string, port: number, f: (m: Member) => Member | undefined): void {
    const m = this.memberAt(host, port);
    const changed = m === undefined ? undefined : f(m);
    if (changed === undefined) return;
    this.localChange(updateMembers(this.ms.latestGossip, [changed]));
  }

  /** A change this node made (command, resolver): stamped, applied, then broadcast. */
  private localChange(g: Gossip): void {
    this.setState(withLatestGossip(this.ms, stampLocalChange(g, this.self)));
    this.broadcastPending = true;
  }

  /** The exiting tasks are done: see the current gossip, confirm exiting to the leader. */
  private exitingCompleted(): void {
    if (!this.holdExiting) return;
    this.holdExiting = false;
    if (!this.exitingTasksInProgress) return;
    this.exitingTasksInProgress = false;
    if (selfMember(this.ms) === undefined) return;
    this.setState(withLatestGossip(this.ms, withSeen(this.ms.latestGossip, this.self)), []);
    this.broadcastPending = true;
  }

  // ------------------------------------------------------------------ state changes

  /**
   * The one place the state changes: the view goes out first, then per event the
   * quarantine of a removed member and the event, then this node's reaction to its own
   * status (exiting -> confirm; down/removed -> stop).
   */
  private setState(state: MembershipState, events?: readonly ClusterEvent[]): void {
    const before = this.ms;
    const next = this.holdWhileExiting(state);
    this.ms = next;
    this.out.push({ type: "state-changed", state: next });
    const evts = events ?? diffClusterEvents(before, next);
    for (const e of evts) {
      if (e.type === "member-removed") {
        // removed by this leader or another one: its confirmation is of no more use
        this.exitingConfirmed.delete(key(e.member.uniqueAddress));
        if (key(e.member.uniqueAddress) !== key(this.self))
          this.quarantineRemoved(e.member, e.previousStatus);
      }
      this.out.push({ type: "publish", event: e });
    }
    if (convergence(next, this.exitingConfirmedIn(next))) this.lastConvergenceAt = this.nowMs;
    if (!this.firstConverged && countsAsFirstConvergence(selfMember(next)?.status)) {
      this.firstConverged = true;
      this.log("debug", "up, so the cluster has converged once: the split brain resolver may act");
    }
    this.checkSelf();
  }

  /**
   * A removed incarnation may never talk to this node again. A downed member is
   * quarantined at once; a member that left gracefully after
   * quarantineRemovedNodeAfterMs, so the final gossip telling it that it was removed can
   * still reach it.
   */
  private quarantineRemoved(member: Member, previousStatus: string): void {
    this.out.push({
      type: "quarantine",
      node: member.uniqueAddress,
      afterMs: previousStatus === "down" ? undefined : this.settings.quarantineRemovedNodeAfterMs,
      reason: `cluster member removed (was ${previousStatus})`,
    });
  }

  /**
   * While self is exiting and its exiting tasks run (holdExiting, until exiting-completed),
   * it does not mark gossip as seen: the leader needs its seen mark or its
   * ExitingConfirmed to remove it, so the removal waits for those tasks (the sharding
   * hand-off runs before them).
   */
  private holdWhileExiting(state: MembershipState): MembershipState {
    if (!this.holdExiting || selfMember(state)?.status !== "exiting") return state;
    this.exitingTasksInProgress = true;
    const g = state.latestGossip;
    return seenByNode(g, this.self) ? withLatestGossip(state, withoutSeen(g, this.self)) : state;
  }

  private checkSelf(): void {
    const me = selfMember(this.ms);
    if (me?.status === "leaving" || me?.status === "exiting") this.leftGracefully = true;
    if (me?.status === "exiting" && !this.exitingTasksInProgress) this.confirmExiting();
    const removed = me === undefined && this.joinedOnceFlag;
    if (me?.status === "down") this.selfRemoved("this member was downed");
    else if (removed) this.selfRemoved("this member was removed");
  }

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
    if (this.leftGracefully) this.log("info", "left the cluster; stopping", { reason });
    else this.log("warn", "removed from the cluster; stopping", { reason });
    this.out.push({ type: "self-removed", reason });
  }

  /** Sends our gossip (with its tombstone) to a removed member, at most once per interval. */
  private tellRemovedMember(node: UniqueAddress): void {
    const k = key(node);
    const last = this.toldRemoved.get(k);
    if (last !== undefined && this.nowMs - last < this.settings.gossipIntervalMs) return;
    if (this.toldRemoved.size >= REMOVED_NOTICES_TRACKED_MAX) this.toldRemoved.clear();
    this.toldRemoved.set(k, this.nowMs);
    this.sendGossip(node);
  }

  // ------------------------------------------------------------------ ticks

  private gossipTick(): void {
    for (const j of this.joinAdmission.due(this.nowMs))
      this.admitJoin(j.from, j.roles, j.appVersion);
    if (selfMember(this.ms) === undefined) return;
    if (this.broadcastPending) {
      // After local changes (join accepted, leader action, leave/down, SBR decision) the
      // state goes to every member at most once per interval: broadcasting on every
      // change made a wave of J joins into N members cost about J·N full gossips.
      this.broadcastPending = false;
      for (const m of this.ms.latestGossip.members)
        if (key(m.uniqueAddress) !== key(this.self) && m.status !== "down")
          this.sendGossip(m.uniqueAddress);
      this.markShared();
      return;
    }
    const rounds = gossipRoundsPerInterval(this.ms);
    const g = this.ms.latestGossip;
    for (let i = 0; i < rounds; i++) {
      const target = selectGossipTarget(this.ms, this.config.random, this.settings);
      if (target === undefined) return;
      // A version of our own making (a merge, a reachability mark) that no other member is
      // known to hold goes to a target that has not seen it as the gossip itself, without
      // the member list if ours is one others hold (gossip-logic.ts, "Own versions").
      if (target.send === "gossip" && g.version !== this.sharedVersion) {
        this.sendGossip(target.node, g.members === this.sharedMembers);
        continue;
      }
      // A target that has not seen a version others hold usually holds it already (the
      // broadcast after each change reaches every member): it gets our seen set, and
      // asks for the full gossip by its full status only if it holds another version.
      // The version goes as its hash (it can have an entry per member; gossip-logic.ts,
      // "Hashed status"); replies, which a member of an earlier version must understand,
      // never.
      this.sendStatus(target.node, target.send === "gossip", true);
    }
  }

  private leaderTick(): void {
    if (selfMember(this.ms) === undefined) return;
    const now = this.nowMs;
    const r = leaderActions(this.ms, {
      minNrOfMembers: this.settings.minNrOfMembers,
      roleMinNrOfMembers: this.settings.roleMinNrOfMembers,
      allowWeaklyUp: isWeaklyUpAllowed(this.settings),
      weaklyUpDelayElapsed: now - this.lastConvergenceAt >= this.settings.allowWeaklyUpMembersMs,
      exitingConfirmed: this.exitingConfirmedIn(this.ms),
      nowMs: now,
      maxMembersUpPerRound: this.settings.maxMembersUpPerLeaderRound,
    });
    if (r.type === "changed") {
      this.setState(r.state, r.events);
      for (const n of r.exitingGossipTargets) this.sendGossip(n);
      // Removed members are no gossip targets any more: tell them directly, so they
      // see their tombstone and shut down at once.
      for (const n of r.removedExitingConfirmed) this.sendGossip(n);
      this.broadcastPending = true;
    }
    this.downingTick();
    this.joinAgainIfUnseen();
  }

  /**
   * A joining (or weakly-up) member whose view's leader has not seen its gossip for
   * `retryUnsuccessfulJoinAfterMs` sends that leader its Join again. The member that
   * welcomed it may have crashed before it told anyone, and a leader ignores gossip from a
   * node it does not know: the joiner would wait for ever (simulator S20wL seed 981). A
   * leader that knows it answers with its Welcome again; one that does not admits it.
   */
  private joinAgainIfUnseen(): void {
    if (this.settings.retryUnsuccessfulJoinAfterMs === 0) return; // never
    const status = selfMember(this.ms)?.status;
    const l = leader(this.ms);
    if (
      (status !== "joining" && status !== "weakly-up") ||
      l === undefined ||
      key(l) === key(this.self) ||
      seenByNode(this.ms.latestGossip, l)
    ) {
      this.unseenByLeaderSince = undefined;
      return;
    }
    if (this.unseenByLeaderSince === undefined) {
      this.unseenByLeaderSince = this.nowMs;
      return;
    }
    if (this.nowMs - this.unseenByLeaderSince < this.settings.retryUnsuccessfulJoinAfterMs) return;
    this.unseenByLeaderSince = this.nowMs;
    this.log("info", "the leader has not seen this joining member: joining again", {
      leader: key(l),
    });
    this.sendJoin(l.address);
  }

  /**
   * This node's own stall up to now (the reaper timer's lateness, or the runtime's
   * event-loop delay if longer) does not count against the members it monitors; after a
   * stall longer than the acceptable pause its unreachability verdicts are suspect for a
   * while (core/failure-detector/self-stall.ts).
   */
  private excuseOwnStall(latenessMs: number, loopDelayMs: number): void {
    const now = this.nowMs;
    const v = this.selfStall.observe(Math.max(latenessMs, loopDelayMs), now);
    if (v.type !== "stalled") return;
    for (const d of this.detectors.values()) d.excuse(v.excuseMs, now);
    this.sbr.excuse(v.excuseMs, now);
    if (v.suspect)
      this.log(
        "warn",
        "this member itself was stalled (event loop blocked or starved of CPU) longer than " +
          "the acceptable heartbeat pause: that time does not count against the members it " +
          "monitors, and it marks no member unreachable until it has heard them again",
        { stalledMs: Math.round(v.excuseMs), suspectUntilMs: Math.round(v.suspectUntilMs - now) },
      );
  }

  private reaperTick(latenessMs: number, loopDelayMs: number): void {
    const now = this.nowMs;
    // measured even before this node is a member, so a later tick gets a fresh figure
    this.excuseOwnStall(latenessMs, loopDelayMs);
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
        this.log("debug", "not marking node as unreachable: own verdicts suspect after a stall", {
          node: k,
        });
      } else if (reachable && !available) {
        this.log("warn", "marking node as unreachable", { node: k, phi: detector.phi(now) });
        r = markUnreachable(r, this.self, subject.uniqueAddress);
      } else if (!reachable && available) {
        this.log("info", "marking node as reachable again", { node: k });
        r = markReachable(r, this.self, subject.uniqueAddress);
      }
    }
    // A member this node no longer heartbeats (the ring moved while members joined) has
    // no detector left to bring it back: this node withdraws its verdict, as an observer
    // without evidence (its new observers judge it from now on).
    for (const subject of allUnreachableFrom(r, this.self))
      if (!this.detectors.has(key(subject))) {
        this.log("info", "no longer monitoring node: withdrawing its unreachable mark", {
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
    if (selfMember(this.ms) === undefined) return;
    const receivers = this.heartbeatReceivers();
    const now = this.nowMs;
    const wanted = new Set(receivers.map(key));
    for (const k of [...this.detectors.keys()])
      if (!wanted.has(k)) {
        this.detectors.delete(k);
        this.heartbeatStarted.delete(k);
      }
    const seq = ++this.heartbeatSeq;
    for (const n of receivers) {
      const k = key(n);
      let d = this.detectors.get(k);
      if (d === undefined) {
        d = new PhiAccrualFailureDetector(this.config.failureDetector);
        this.detectors.set(k, d);
        this.heartbeatStarted.set(k, now);
      }
      const started = this.heartbeatStarted.get(k) as number;
      // A peer that never answers still becomes unreachable: after expectedResponseAfterMs
      // the first heartbeat is assumed, so phi grows from then on.
      if (!d.isMonitoring && now - started >= this.settings.expectedResponseAfterMs)
        d.heartbeat(now);
      this.send(n.address, { kind: MembershipKind.Heartbeat, seq });
    }
  }

  /**
   * The peers this node heartbeats: from the hashed ring of the non-joining members and
   * the unreachable ones. The ring is rebuilt only when the members or the reachability
   * table changed (gossip.ts shares both between versions that did not change them), not
   * on every tick.
   */
  private heartbeatReceivers(): readonly UniqueAddress[] {
    const g = this.ms.latestGossip;
    const c = this.ringCache;
    if (c !== undefined && c.members === g.members && c.reachability === g.overview.reachability)
      return c.receivers;
    // a new table with the same unreachable nodes (observations of a crash spreading):
    // the same ring
    const unreachableNodes = allUnreachable(g.overview.reachability);
    const unreachable = unreachableNodes.map(key);
    if (c !== undefined && c.members === g.members && sameElements(c.unreachable, unreachable)) {
      this.ringCache = { ...c, reachability: g.overview.reachability };
      return c.receivers;
    }
    // the members but joining ones; a joining self is added to the ring by receivers()
    let nodes = ringMembers.get(g.members);
    if (nodes === undefined) {
      nodes = Object.freeze(
        g.members.filter((m) => m.status !== "joining").map((m) => m.uniqueAddress),
      );
      ringMembers.set(g.members, nodes);
    }
    const ring = new HeartbeatRing(nodes, {
      unreachable: unreachableNodes,
      monitoredByNrOfMembers: this.settings.monitoredByNrOfMembers,
    });
    const receivers = Object.freeze(ring.receivers(this.self));
    this.ringCache = {
      members: g.members,
      reachability: g.overview.reachability,
      unreachable,
      receivers,
    };
    return receivers;
  }

  // ------------------------------------------------------------------ downing

  /** The resolver (or auto-down) of this side, after the leader actions of a tick. */
  private downingTick(): void {
    const now = this.nowMs;
    if (this.autoDown !== undefined) {
      this.autoDownTick(this.autoDown, now);
      return;
    }
    const g = this.ms.latestGossip;
    const unreachable = this.unreachableForDowning();
    // the same view object (its arrays never change) tells the tracker nothing new:
    // observing it again would only rebuild what it holds
    if (unreachable !== this.downingViewObserved) {
      this.sbr.observe(unreachable.unreachable, now, unreachable.upTogether);
      this.downingViewObserved = unreachable;
    }
    const tick = this.sbr.tick(
      now,
      isLeader(this.ms, this.self) || this.isLeaderAmongReachable() || this.isCutOffNeverUp(),
    );
    if (tick.type === "down-all-unstable") {
      this.applySbrDowning(
        g.members.map((m) => m.uniqueAddress),
        `down-all-when-unstable after ${tick.unstableForMs} ms`,
        "down-all-when-unstable",
      );
      return;
    }
    if (tick.type !== "decide") return;
    const outcome = decideDowning(downingStrategyOf(this.sbrSettings), sbrViewOf(this.ms), {});
    if (outcome.type === "acquire-lease") {
      // lease-majority: after `delayMs` (the minority waits), try the lease, then decide
      if (!this.config.hasLease || this.leaseInFlight) return;
      this.leaseInFlight = true;
      this.out.push({ type: "acquire-lease", delayMs: outcome.delayMs });
      return;
    }
    if (outcome.type !== "down") return;
    this.applySbrDowning(outcome.down, outcome.reason, outcome.decision);
  }

  /**
   * What the resolver observes each leader tick (unreachable members, and those of them
   * that were up together), recomputed only when the members or the reachability table
   * changed; with no reachability rows nobody is unreachable.
   */
  private unreachableForDowning(): { unreachable: Member[]; upTogether: Member[] } {
    const g = this.ms.latestGossip;
    const c = this.downingViewCache;
    if (c !== undefined && c.members === g.members && c.reachability === g.overview.reachability)
      return c;
    let unreachable: Member[] = [];
    let upTogether: Member[] = [];
    if (g.overview.reachability.records.length > 0) {
      const view = sbrViewOf(this.ms);
      unreachable = unreachableMembersOf(view);
      upTogether = unreachableUpTogetherOf(view);
    }
    const next = {
      members: g.members,
      reachability: g.overview.reachability,
      unreachable,
      upTogether,
    };
    this.downingViewCache = next;
    return next;
  }

  private decideWithLease(leaseAcquired: boolean): void {
    this.leaseInFlight = false;
    const outcome = decideDowning(downingStrategyOf(this.sbrSettings), sbrViewOf(this.ms), {
      leaseAcquired,
    });
    if (outcome.type === "down")
      this.applySbrDowning(outcome.down, outcome.reason, outcome.decision);
  }

  /** A resolver decision, through the formation gate (core/downing/sbr-formation.ts). */
  private applySbrDowning(
    nodes: readonly UniqueAddress[],
    reason: string,
    decision: DowningDecisionKind,
  ): void {
    const gate = gateBeforeFirstConvergence(
      nodes,
      this.self,
      this.firstConverged,
      this.sbrSettings.actBeforeFirstConvergence,
    );
    if (gate.withheld.length > 0) {
      const k = gate.withheld.map(key).join(",");
      if (k !== this.withheldDowningKey)
        this.log(
          "warn",
          "split brain resolver: not downing other members: this member was never up, so " +
            "the cluster has not converged with it yet (downing.actBeforeFirstConvergence is false)",
          { withheld: gate.withheld.map(key), reason },
        );
      this.withheldDowningKey = k;
    }
    this.applyDowning(gate.down, reason, "split brain resolver", decision);
  }

  /** auto-down: the leader of this side downs every member unreachable for afterMs. */
  private autoDownTick(tracker: AutoDownTracker, now: number): void {
    tracker.observe(unreachableMembersOf(sbrViewOf(this.ms)), now);
    if (!(isLeader(this.ms, this.self) || this.isLeaderAmongReachable())) return;
    const afterMs = this.sbrSettings.autoDown.afterMs;
    const due = tracker.due(now, afterMs);
    if (due.length === 0) return;
    this.applyDowning(
      due.map((m) => m.uniqueAddress),
      `auto-down: unreachable for at least ${afterMs} ms`,
      "auto-down",
      "auto-down",
    );
  }

  /**
   * A member that was never up and reaches no up or leaving member of its view decides for
   * itself: nobody else can. A fallback leader of its view is joining too, and may be in
   * another cluster by now, so it never acts here; the formation gate lets this member
   * down only itself (downing.actBeforeFirstConvergence false). Simulator S20wL seed 116:
   * e joined an island whose only up member then went away, and stayed joining for ever.
   */
  private isCutOffNeverUp(): boolean {
    if (this.firstConverged || this.sbrSettings.actBeforeFirstConvergence) return false;
    const g = this.ms.latestGossip;
    const unreachable = new Set(allUnreachable(g.overview.reachability).map(key));
    return g.members.every(
      (m) => (m.status !== "up" && m.status !== "leaving") || unreachable.has(key(m.uniqueAddress)),
    );
  }

  /**
   * The SBR of each side decides on that side's leader: the first reachable up member.
   * Asked every leader tick: recomputed only when the members or the table changed.
   */
  private isLeaderAmongReachable(): boolean {
    const g = this.ms.latestGossip;
    const c = this.leaderAmongReachableCache;
    if (c !== undefined && c.members === g.members && c.reachability === g.overview.reachability)
      return c.result;
    const unreachable =
      g.overview.reachability.records.length === 0
        ? new Set<string>()
        : new Set(allUnreachable(g.overview.reachability).map(key));
    const first = g.members.find(
      (m) =>
        !unreachable.has(key(m.uniqueAddress)) && (m.status === "up" || m.status === "leaving"),
    );
    const result = first !== undefined && key(first.uniqueAddress) === key(this.self);
    this.leaderAmongReachableCache = {
      members: g.members,
      reachability: g.overview.reachability,
      result,
    };
    return result;
  }

  private applyDowning(
    nodes: readonly UniqueAddress[],
    reason: string,
    by: "split brain resolver" | "auto-down",
    decision: DowningDecisionKind,
  ): void {
    this.out.push({ type: "downing", by, decision, nodes, reason });
    if (nodes.length === 0) return;
    let g = this.ms.latestGossip;
    const selfKey = key(this.self);
    for (const n of nodes)
      if (key(n) !== selfKey && findMember(g, n) !== undefined) g = markAsDown(g, n);
    if (nodes.some((n) => key(n) === selfKey)) g = markAsDown(g, this.self);
    this.sbr.decisionApplied(this.nowMs);
    this.localChange(g);
  }

  // ------------------------------------------------------------------ messages

  private onMessage(from: UniqueAddress, m: MembershipMessage): void {
    switch (m.kind) {
      case MembershipKind.Gossip:
        this.onGossip(from, m.to, m.gossip, m.membersHash);
        return;
      case MembershipKind.GossipStatus:
        this.onStatus(from, m.version, m.seenDigest, m.seen, m.versionHash, m.membersHash);
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
          this.detectors.get(key(from))?.heartbeat(this.nowMs);
        return;
      case MembershipKind.JoinRefused:
        this.onJoinRefused(from, m.reason);
        return;
      case MembershipKind.ExitingConfirmed:
        // Only a member's: a leaver confirms again until it learns of its removal, and a
        // confirmation arriving after the removal would otherwise be kept for good.
        if (this.memberByKey(m.node) !== undefined) this.exitingConfirmed.add(m.node);
        return;
    }
  }

  private onGossip(
    from: UniqueAddress,
    to: string,
    gossip: Gossip,
    membersHash: readonly [number, number] | undefined,
  ): void {
    let toNode: UniqueAddress;
    try {
      toNode = parseUniqueAddress(to);
    } catch {
      return;
    }
    const r = receiveGossip(
      this.ms,
      {
        from,
        to: toNode,
        gossip,
        sentAtMs: this.nowMs,
        ...(membersHash === undefined ? {} : { membersHash }),
      },
      this.nowMs,
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
    this.joinedOnceFlag = true;
    this.setState(r.state, r.events);
    // the sender holds the version we now hold (ours, or its own that we took)
    if (r.comparison === GossipComparison.Same || r.comparison === GossipComparison.Newer)
      this.markShared();
    if (r.replyTo === undefined) return;
    if (r.replyWith === "seen") this.sendStatus(r.replyTo, true, false, r.replyCompact);
    else this.sendGossip(r.replyTo, r.replyCompact);
  }

  private onStatus(
    from: UniqueAddress,
    version: readonly (readonly [string, number])[],
    seenDigest: number,
    seen: readonly number[] | undefined,
    versionHash: readonly [number, number] | undefined,
    membersHash: readonly [number, number] | undefined,
  ): void {
    let v = statusClocks.get(version);
    if (v === undefined && versionHash !== undefined) v = emptyVectorClock; // not read
    // most statuses carry our own version: then our clock itself (compared by identity)
    if (v === undefined && hasEntries(this.ms.latestGossip.version, version))
      v = this.ms.latestGossip.version;
    if (v === undefined)
      try {
        v = vectorClockOf(version);
        // a frozen array (a decoded status shared by its bytes) cannot change: keep its clock
        if (Object.isFrozen(version)) statusClocks.set(version, v);
      } catch {
        return;
      }
    if (hasTombstone(this.ms.latestGossip, from)) {
      this.tellRemovedMember(from);
      return;
    }
    const status = {
      from,
      version: v,
      seenDigest,
      ...(seen === undefined ? {} : { seen }),
      ...(versionHash === undefined ? {} : { versionHash }),
      ...(membersHash === undefined ? {} : { membersHash }),
    };
    const reply = receiveGossipStatus(this.ms, status);
    if (reply.type === "none" || reply.type === "send-seen") {
      // a status of our version: its sender holds it
      if (reply.state !== undefined) this.setState(reply.state, []);
      this.markShared();
    }
    if (reply.type === "send-gossip") this.sendGossip(reply.to, reply.compact);
    else if (reply.type === "send-status") this.sendStatus(reply.to, false, false, reply.compact);
    else if (reply.type === "send-seen") this.sendStatus(reply.to, true, false, reply.compact);
  }

  private onJoinRequest(from: UniqueAddress, roles: string[], appVersion: string): void {
    const offer = this.joinAdmission.offer(key(from), { from, roles, appVersion }, this.nowMs);
    if (offer === "admitted") this.admitJoin(from, roles, appVersion);
    else if (offer === "dropped")
      this.log("info", "join request dropped: admission queue full (the node retries)", {
        node: key(from),
        queued: this.joinAdmission.queued,
      });
  }

  private admitJoin(from: UniqueAddress, roles: string[], appVersion: string): void {
    const outcome = onJoin(this.ms, { node: from, roles, appVersion });
    switch (outcome.type) {
      case "refused":
        this.log("info", "join refused", { node: key(from), reason: outcome.reason });
        // The joiner learns why: a removed or downed incarnation stops instead of asking
        // for ever (onJoinRefused).
        if (outcome.reason !== JoinRefusedReason.SelfAlreadyMember)
          this.send(from.address, { kind: MembershipKind.JoinRefused, reason: outcome.reason });
        return;
      case "welcome-again":
        this.send(from.address, { kind: MembershipKind.Welcome, gossip: outcome.welcome.gossip });
        return;
      case "downed-old-incarnation":
        this.setState(outcome.state, outcome.events);
        this.broadcastPending = true;
        return;
      case "joined":
        this.log("info", "node joining", { node: key(from) });
        this.setState(outcome.state, outcome.events);
        if (outcome.welcome !== undefined)
          this.send(from.address, { kind: MembershipKind.Welcome, gossip: outcome.welcome.gossip });
        this.broadcastPending = true;
        return;
    }
  }

  private onWelcomeMessage(from: UniqueAddress, gossip: Gossip): void {
    if (this.leftBeforeJoining) return;
    const joinedWith = this.joinedWith ?? from.address;
    const outcome = onWelcome(this.ms, { from, gossip }, joinedWith);
    if (outcome.type !== "welcomed") return;
    this.joinedOnceFlag = true;
    this.log("info", "welcomed into the cluster", { by: key(from) });
    this.setState(outcome.state, outcome.events);
    this.markShared();
    if (this.seedJoin !== null)
      this.performSeed(this.seedJoin.handle({ type: "welcome", from: from.address }));
    if (outcome.replyTo !== undefined) this.sendGossip(outcome.replyTo);
  }

  private joinSelf(): void {
    const outcome = onJoin(this.ms, {
      node: this.self,
      roles: [...this.config.roles],
      appVersion: this.config.appVersion,
    });
    if (outcome.type !== "joined") return;
    this.joinedOnceFlag = true;
    this.log("info", "formed a new cluster");
    this.setState(outcome.state, outcome.events);
    if (outcome.formedNewCluster) this.leaderTick();
  }

  private performSeed(outputs: readonly SeedJoinOutput[]): void {
    for (const o of outputs) {
      switch (o.type) {
        case "send-init-join":
          for (const to of o.to) this.send(to, { kind: MembershipKind.InitJoin });
          break;
        case "send-join":
          this.joinedWith = o.to;
          this.sendJoin(o.to);
          break;
        case "join-self":
          this.joinedWith = this.self.address;
          this.joinSelf();
          break;
        case "start-timer":
          this.out.push({ type: "start-seed-timer", timer: o.timer, delayMs: o.delayMs });
          break;
        case "cancel-timer":
          this.out.push({ type: "cancel-seed-timer", timer: o.timer });
          break;
        case "joined":
          this.out.push({ type: "cancel-seed-timers" });
          break;
      }
    }
  }

  // ------------------------------------------------------------------ sending

  private sendJoin(to: Address): void {
    this.send(to, {
      kind: MembershipKind.Join,
      roles: [...this.config.roles],
      appVersion: this.config.appVersion,
    });
  }

  /** The full gossip; `compact`: without the member list (the receiver holds it). */
  private sendGossip(to: UniqueAddress, compact = false): void {
    if (key(to) === key(this.self)) return;
    const gossip = this.ms.latestGossip;
    this.send(to.address, {
      kind: MembershipKind.Gossip,
      to: key(to),
      gossip,
      membersHash: membersHashOf(gossip.members),
      ...(compact ? { compact } : {}),
    });
  }

  /**
   * Our status; with `withSeen` our seen set too (a seen status); `hashed`: the version
   * as its hash (a target that has seen it; gossip-logic.ts, "Hashed status").
   */
  /**
   * `compact`: the version's keys as indices into our member list (gossip-logic.ts,
   * "Compact status"); only for a full status.
   */
  private sendStatus(to: UniqueAddress, withSeen = false, hashed = false, compact = false): void {
    const s = gossipStatusOf(this.ms, withSeen, hashed);
    // the clock's own frozen entries: one array per version, so its encoding is kept
    const version = s.versionHash === undefined ? s.version.entries : NO_CLOCK_ENTRIES;
    const members = this.ms.latestGossip.members;
    this.send(to.address, {
      kind: MembershipKind.GossipStatus,
      version,
      seenDigest: s.seenDigest,
      ...(s.seen === undefined ? {} : { seen: s.seen }),
      // the answer to a full status may be a gossip, compact if the member lists agree;
      // a hashed status is answered by a status at most
      ...(s.versionHash === undefined
        ? { membersHash: membersHashOf(members), ...(compact ? { compactOn: members } : {}) }
        : { versionHash: s.versionHash }),
    });
  }

  /** Another member holds the current version (see sharedVersion). */
  private markShared(): void {
    this.sharedVersion = this.ms.latestGossip.version;
    this.sharedMembers = this.ms.latestGossip.members;
  }

  private send(to: Address, message: MembershipMessage, urgent = false): void {
    this.out.push({ type: "send", to, message, urgent });
  }

  private log(
    level: MembershipLogLevel,
    message: string,
    fields?: Readonly<Record<string, unknown>>,
  ): void {
    this.out.push({ type: "log", level, message, fields });
  }

  // ------------------------------------------------------------------ helpers

  private memberByKey(k: string): Member | undefined {
    const members = this.ms.latestGossip.members;
    if (this.membersByKey.members !== members)
      this.membersByKey = { members, map: new Map(members.map((m) => [key(m.uniqueAddress), m])) };
    return this.membersByKey.map.get(k);
  }

  private memberAt(host: string, port: number): Member | undefined {
    return this.ms.latestGossip.members.find(
      (m) => m.uniqueAddress.address.host === host && m.uniqueAddress.address.port === port,
    );
  }
}
