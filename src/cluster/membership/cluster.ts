/**
 * Cluster: the membership driver of one node. Every decision (gossip, joining, leader
 * actions, failure-detector verdicts, the Split Brain Resolver or auto-down, the own-stall
 * excuse) is the sans-IO MembershipMachine's (core/membership/membership-machine.ts;
 * docs/cluster.md, "The membership machine"). This driver only does I/O: it runs the
 * periodic timers (gossip, leader actions, reaper, heartbeat) and the seed-node timers,
 * decodes membership messages from remoting's CONTROL lane and encodes the ones the
 * machine sends, asks the lease when lease-majority needs it, quarantines removed
 * members, publishes events to subscribers, and stops the node when it was removed. It
 * feeds each input with the current time and performs the outputs in order.
 *
 * It also keeps the join diagnostics (why the associations to the seed nodes fail), which
 * read remoting's association events.
 *
 * Counting hooks: every membership message leaves through `send` (kind and encoded bytes;
 * remoting counts control frames per kind), every resolver or auto-down decision through
 * the `downing` performer (`downingDecisions`).
 */
import type { ActorSystem } from "../../actor/actor-system.js";
import { MachineDriver, type Performers } from "../../actor/machine-driver.js";
import type { Disposable } from "../../base/disposable.js";
import { ConfigError, InvalidAddressError } from "../../base/errors.js";
import {
  resolveSbrSettings,
  type SbrSettings,
  type SbrSettingsOverrides,
} from "../../core/downing/sbr-settings.js";
import type { PhiAccrualFailureDetector } from "../../core/failure-detector/phi-accrual.js";
import type { PhiAccrualSettings } from "../../core/failure-detector/phi-accrual-settings.js";
import { type Address, addressOf, addressToString } from "../../core/membership/address.js";
import { type ClusterEvent, diffClusterEvents } from "../../core/membership/cluster-events.js";
import {
  type ClusterSettings,
  resolveClusterSettings,
} from "../../core/membership/cluster-settings.js";
import { emptyGossip } from "../../core/membership/gossip.js";
import type { Member } from "../../core/membership/member.js";
import {
  type MembershipInput,
  MembershipMachine,
  type MembershipOutput,
} from "../../core/membership/membership-machine.js";
import {
  convergence,
  leader,
  type MembershipState,
  membershipStateOf,
  selfMember,
} from "../../core/membership/membership-state.js";
import { allUnreachable } from "../../core/membership/reachability.js";
import { parseSeedAddress, parseSeedAddresses } from "../../core/membership/seed-address.js";
import type { SeedJoinTimer } from "../../core/membership/seed-join.js";
import {
  type UniqueAddress,
  uniqueAddressOf,
  uniqueAddressToString,
} from "../../core/membership/unique-address.js";
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
import { internNode } from "./gossip-codec.js";
import {
  decodeMembershipMessage,
  encodeMembershipMessageParts,
  MembershipKind,
  type MembershipMessage,
  STALE,
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

function wireNodeOf(a: Address): WireNode {
  return { systemName: a.system, host: a.host, port: a.port, hostPort: `${a.host}:${a.port}` };
}

export class Cluster {
  readonly settings: Readonly<ClusterSettings>;
  readonly sbrSettings: Readonly<SbrSettings>;
  readonly self: UniqueAddress;
  private readonly machine: MembershipMachine;
  private readonly driver: MachineDriver<MembershipInput, MembershipOutput>;
  /**
   * The state as of the outputs performed so far (`state-changed`): what subscribers
   * read while an event of an input is being published, before later changes of the
   * same input (the machine's own state is already ahead).
   */
  private view: MembershipState;
  private readonly log: Logger;
  private readonly handlers = new Set<ClusterEventHandler>();
  private readonly timers: Disposable[] = [];
  private readonly seedTimers = new Map<SeedJoinTimer, Disposable>();
  private stopped = false;
  private readonly roles: readonly string[];
  private readonly onUpCallbacks: (() => void)[] = [];
  private readonly onRemovedCallbacks: (() => void)[] = [];
  /** The sender of each inbound connection's messages (senderOf). */
  private readonly senders = new WeakMap<Peer, UniqueAddress>();
  /** @internal Downing decisions taken here, by kind (read by the metrics). */
  readonly downingDecisions = new DowningDecisions();

  private constructor(
    private readonly system: ActorSystem,
    private readonly remoting: Remoting,
    private readonly options: ClusterOptions,
    seeds: readonly Address[],
  ) {
    this.settings = resolveClusterSettings(options.settings);
    this.sbrSettings = resolveSbrSettings(options.downing);
    const node = remoting.node;
    this.self = uniqueAddressOf(
      addressOf("shardkit", node.systemName, node.host, node.port),
      Number(remoting.localUid),
    );
    this.log = system.log.child({ component: "cluster", self: addressToString(this.self.address) });
    if (this.sbrSettings.activeStrategy === "lease-majority" && options.lease === undefined)
      throw new ConfigError(
        "downing.activeStrategy",
        "lease-majority",
        "a strategy other than lease-majority, or a `lease` option",
      );
    this.roles = [...(options.roles ?? [])];
    this.machine = new MembershipMachine(
      {
        self: this.self,
        roles: this.roles,
        appVersion: options.appVersion ?? "1.0.0",
        settings: this.settings,
        sbrSettings: this.sbrSettings,
        failureDetector: options.failureDetector,
        seedNodes: seeds,
        hasLease: options.lease !== undefined,
        random: system.runtime.random,
      },
      this.now(),
    );
    this.view = this.machine.state;
    this.driver = new MachineDriver(this.machine, () => this.now(), this.performers());
    if (this.sbrSettings.activeStrategy === "auto-down")
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
    const seeds = parseSeedAddresses(options.seedNodes, "seedNodes", system.name).map((a) =>
      addressOf("shardkit", system.name, a.host, a.port),
    );
    const c = new Cluster(system, remoting, options, seeds);
    for (let kind = MembershipKind.Gossip; kind <= MembershipKind.JoinRefused; kind++)
      remoting.registerControlHandler(kind, (peer, payload) => c.onControl(kind, peer, payload));
    c.quarantineListener = remoting.onAssociationEvent((e) => {
      if (e.type !== "quarantined-by" || c.stopped) return;
      const uid = Number(e.uid);
      if (!Number.isSafeInteger(uid)) return;
      const node = uniqueAddressOf(addressOf("shardkit", system.name, e.host, e.port), uid);
      c.driver.feed({ type: "quarantined-by", node });
    });
    c.startPeriodicTasks();
    if (seeds.length > 0) {
      c.startJoinDiagnostics(seeds);
      c.driver.feed({ type: "start" });
    }
    system.whenTerminated.then(() => c.stop());
    return c;
  }

  // ------------------------------------------------------------------ public API

  get state(): ClusterState {
    const ms = this.view;
    const g = ms.latestGossip;
    const unreachableKeys = new Set(allUnreachable(g.overview.reachability).map(key));
    return {
      members: g.members,
      unreachable: g.members.filter((m) => unreachableKeys.has(key(m.uniqueAddress))),
      leader: leader(ms),
      seenBy: g.overview.seen,
      convergence: convergence(ms, this.machine.exitingConfirmedIn(ms)),
    };
  }

  /** The roles this node joins with. */
  get selfRoles(): readonly string[] {
    return this.roles;
  }

  get selfMember(): Member | undefined {
    return selfMember(this.view);
  }

  get membershipState(): MembershipState {
    return this.view;
  }

  /** @internal Failure detectors of the monitored members by unique address (metrics: phi). */
  get failureDetectors(): ReadonlyMap<string, PhiAccrualFailureDetector> {
    return this.machine.failureDetectors;
  }

  /** Subscribes to cluster events; with initialState, current members are replayed first. */
  subscribe(handler: ClusterEventHandler, options: { initialState?: boolean } = {}): Disposable {
    if (options.initialState) {
      const before = membershipStateOf({ latestGossip: emptyGossip, selfUniqueAddress: this.self });
      for (const e of diffClusterEvents(before, this.view)) handler(e);
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
    const toSelf = to.host === this.self.address.host && to.port === this.self.address.port;
    if (!toSelf && !this.machine.joinsThroughSeeds) this.startJoinDiagnostics([to]);
    this.driver.feed({ type: "join", to });
  }

  /** Marks the member at "host:port" as leaving (graceful). */
  leave(hostPort: string): void {
    const a = this.addressOfHostPort(hostPort);
    this.driver.feed({ type: "leave", host: a.host, port: a.port });
  }

  /** Marks the member at "host:port" as down (it will be removed and must shut down). */
  down(hostPort: string): void {
    const a = this.addressOfHostPort(hostPort);
    this.driver.feed({ type: "down", host: a.host, port: a.port });
  }

  /**
   * Makes the leader wait with the removal of this member, once it is exiting, until
   * `exitingCompleted()` is called. Used by the coordinated shutdown wiring
   * (installClusterShutdown), which calls exitingCompleted in cluster-exiting-done.
   */
  holdRemovalUntilExitingCompleted(): void {
    this.driver.feed({ type: "hold-removal-until-exiting-completed" });
  }

  /** The exiting tasks are done: see the current gossip, confirm exiting to the leader. */
  exitingCompleted(): void {
    this.driver.feed({ type: "exiting-completed" });
  }

  /** Stops timers and handlers (the system's termination calls it). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.quarantineListener?.dispose();
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
  /** Feeds `quarantined-by` association events to the machine. */
  private quarantineListener: Disposable | undefined;
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
      } else if (e.type === "established") {
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
        if (this.stopped || this.machine.joinedOnce || selfMember(this.view) !== undefined) {
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
    const trying = this.machine.joinsThroughSeeds
      ? `trying seed nodes ${targets.join(", ")}`
      : `trying to join through ${targets.join(", ")}`;
    const lines = targets
      .filter((hp) => hp !== `${this.self.address.host}:${this.self.address.port}`)
      .map((hp) => {
        const f = this.joinFailures.get(hp);
        if (f !== undefined) return `seed ${hp}: ${describeAssociationFailure(f)}`;
        const refused = this.machine.joinRefusals.get(hp);
        if (refused !== undefined) return `seed ${hp}: join request refused (${refused})`;
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

  // ------------------------------------------------------------------ performing outputs

  private performers(): Performers<MembershipOutput> {
    return {
      send: (o) => this.send(o.to, o.message, o.urgent),
      "state-changed": (o) => {
        this.view = o.state;
      },
      publish: (o) => this.publish(o.event),
      quarantine: (o) => this.quarantine(o.node, o.afterMs, o.reason),
      downing: (o) => {
        this.downingDecisions.count(o.decision);
        if (o.nodes.length > 0)
          this.log.warn(`${o.by}: downing`, { nodes: o.nodes.map(key), reason: o.reason });
      },
      "acquire-lease": (o) => this.acquireLease(o.delayMs),
      "start-seed-timer": (o) => this.startSeedTimer(o.timer, o.delayMs),
      "cancel-seed-timer": (o) => {
        this.seedTimers.get(o.timer)?.dispose();
        this.seedTimers.delete(o.timer);
      },
      "cancel-seed-timers": () => {
        for (const t of this.seedTimers.values()) t.dispose();
        this.seedTimers.clear();
      },
      "self-removed": (o) => this.selfRemoved(o.reason),
      log: (o) => this.log[o.level](o.message, o.fields),
    };
  }

  /** Every membership message leaves here: the place to count them by kind and bytes. */
  private send(to: Address, m: MembershipMessage, urgent: boolean): void {
    if (this.stopped) return;
    const payload = encodeMembershipMessageParts(this.remoting.registry, m);
    this.remoting.sendControl(wireNodeOf(to), m.kind, payload, urgent);
  }

  private publish(e: ClusterEvent): void {
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

  /**
   * A removed incarnation may never talk to this node again: quarantine it in remoting
   * (clears its queues, stops redialling, refuses its handshakes).
   */
  private quarantine(node: UniqueAddress, afterMs: number | undefined, reason: string): void {
    const quarantine = () =>
      this.remoting.quarantine(wireNodeOf(node.address), BigInt(node.uid), reason);
    if (afterMs === undefined) quarantine();
    else this.system.runtime.scheduler.schedule(afterMs, quarantine);
  }

  /** lease-majority: after `delayMs`, try the lease; the machine decides on the answer. */
  private acquireLease(delayMs: number): void {
    const lease = this.options.lease;
    if (lease === undefined) return;
    this.system.runtime.scheduler.schedule(delayMs, () => {
      lease.acquire().then(
        (acquired) => this.leaseResult(acquired),
        (error: unknown) => {
          this.log.warn("split brain resolver: lease store unreachable", { error });
          this.leaseResult(false);
        },
      );
    });
  }

  private leaseResult(acquired: boolean): void {
    if (this.stopped) return;
    this.driver.feed({ type: "lease-result", acquired });
  }

  private startSeedTimer(timer: SeedJoinTimer, delayMs: number): void {
    this.seedTimers.get(timer)?.dispose();
    this.seedTimers.set(
      timer,
      this.system.runtime.scheduler.schedule(delayMs, () => {
        this.seedTimers.delete(timer);
        if (!this.stopped) this.driver.feed({ type: "seed-timeout", timer });
      }),
    );
  }

  private selfRemoved(reason: string): void {
    for (const cb of this.onRemovedCallbacks.splice(0)) cb();
    const handler = this.options.onSelfRemoved;
    if (handler !== undefined) handler(reason);
    else void this.system.terminate();
  }

  // ------------------------------------------------------------------ inputs

  private onControl(kind: number, peer: Peer, payload: Uint8Array): void {
    if (this.stopped) return;
    const message = decodeMembershipMessage(
      this.remoting.registry,
      kind,
      payload,
      this.view.latestGossip,
    );
    if (message === STALE) {
      // compact, against a member list we do not hold: answered with our full status, so
      // the exchange goes on (the sender answers it with what we lack, in full)
      this.driver.feed({ type: "status-unreadable", from: this.senderOf(peer) });
      return;
    }
    if (message === undefined) {
      this.remoting.badInput("undecodable membership message", peer.node.hostPort, `kind ${kind}`);
      return;
    }
    this.driver.feed({ type: "received", from: this.senderOf(peer), message });
  }

  /**
   * The sender's unique address, one object per inbound connection and the same object
   * the gossip codec decodes that node to (gossip-codec.ts, internNode).
   */
  private senderOf(peer: Peer): UniqueAddress {
    let from = this.senders.get(peer);
    if (from === undefined) {
      const built = uniqueAddressOf(
        addressOf("shardkit", peer.node.systemName, peer.node.host, peer.node.port),
        Number(peer.uid),
      );
      from = internNode(uniqueAddressToString(built));
      this.senders.set(peer, from);
    }
    return from;
  }

  private startPeriodicTasks(): void {
    const s = this.settings;
    this.every(s.gossipIntervalMs, () => this.driver.feed({ type: "gossip-tick" }));
    this.every(s.leaderActionsIntervalMs, () => this.driver.feed({ type: "leader-tick" }));
    this.every(s.unreachableNodesReaperIntervalMs, (latenessMs) =>
      this.driver.feed({
        type: "reaper-tick",
        latenessMs,
        loopDelayMs: this.system.runtime.eventLoop?.takeMaxDelayMs() ?? 0,
      }),
    );
    this.every(s.heartbeatIntervalMs, () => this.driver.feed({ type: "heartbeat-tick" }));
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

  // ------------------------------------------------------------------ helpers

  private now(): number {
    return this.system.runtime.clock.now();
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
