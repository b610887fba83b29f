/**
 * The metrics of one ClusterNode (docs/observability.md, "Metric list"). Almost every
 * value is read at scrape time from counters the node keeps anyway (`system.stats`,
 * `remoting.stats`, the ask registry, the membership state); the rest comes from events
 * that are rare by nature (membership changes, association changes, dead letters, shard
 * and entity starts and stops, passivations, GetShardHome answers, finished, timed-out and
 * abandoned hand-offs). The regions' and shards' buffers and each association's reconnect
 * count are read when scraped.
 * Nothing here runs per message, except the ask latency observation (one clock read per
 * settled ask); phi is computed from the failure detectors when scraped.
 *
 * Label rules: series about this member carry no member label (the scraper's `instance`
 * tells members apart); series about another member carry `member` (its
 * `system@host:port`) and are removed when that member is removed from the cluster.
 * Entity ids are never labels; types, shard states, statuses and reasons are bounded.
 */
import type { ClusterNode } from "../api/cluster-node.js";
import { ClusterSharding } from "../api/cluster-sharding.js";
import type { Disposable } from "../base/disposable.js";
import { DOWNING_DECISION_KINDS } from "../cluster/membership/downing-decisions.js";
import { MembershipKind } from "../cluster/membership/membership-messages.js";
import { ASSOCIATION_STATES } from "../cluster/remoting/outbound-association.js";
import type { RegionProbe } from "../cluster/sharding/sharding-lifecycle.js";
import { shardedEntityTypeOf } from "../cluster/sharding/sharding-type.js";
import { MEMBER_STATUSES } from "../core/membership/member-status.js";
import { type UniqueAddress, uniqueAddressToString } from "../core/membership/unique-address.js";
import { type HistogramSeries, MetricsRegistry, type ValueSeries } from "./metrics-registry.js";

/** `system@host:port` of a member. */
function nodeOf(u: UniqueAddress): string {
  const a = u.address;
  return `${a.system}@${a.host}:${a.port}`;
}

/** `system@host:port` of a peer given as `host:port`. */
function peerNode(system: string, hostPort: string): string {
  return `${system}@${hostPort}`;
}

/** A local shard start or stop, for the dashboard's timeline. */
export interface ShardEvent {
  /** Monotonic ms of this node's clock. */
  readonly atMs: number;
  readonly kind: "shard-started" | "shard-stopped";
  readonly type: string;
  readonly shardId: string;
}

/** Bound of the set of removed members remembered (cleared when full). */
export const REMOVED_MEMBERS_TRACKED_MAX = 1_000;

/** Bound of the local shard-event ring. */
export const SHARD_EVENTS_MAX = 200;

/** Buckets of the hand-off duration (seconds): hand-offs wait for entities to stop. */
export const HAND_OFF_BUCKETS_SECONDS: readonly number[] = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
];

/** The `kind` label of each membership message kind (CONTROL kinds of cluster.ts). */
const MEMBERSHIP_KIND_NAMES: readonly (readonly [number, string])[] = [
  [MembershipKind.Gossip, "gossip"],
  [MembershipKind.GossipStatus, "gossip-status"],
  [MembershipKind.Join, "join"],
  [MembershipKind.Welcome, "welcome"],
  [MembershipKind.InitJoin, "init-join"],
  [MembershipKind.InitJoinAck, "init-join-ack"],
  [MembershipKind.InitJoinNack, "init-join-nack"],
  [MembershipKind.Heartbeat, "heartbeat"],
  [MembershipKind.HeartbeatRsp, "heartbeat-rsp"],
  [MembershipKind.ExitingConfirmed, "exiting-confirmed"],
  [MembershipKind.JoinRefused, "join-refused"],
];

/** The registry of a node plus what the dashboard reads from the same observations. */
export class NodeMetrics implements Disposable {
  readonly registry: MetricsRegistry;
  /** Live entities per type and shard on this node. */
  readonly entitiesByShard = new Map<string, Map<string, number>>();
  /** The last local shard starts and stops (oldest first, at most SHARD_EVENTS_MAX). */
  readonly shardEvents: ShardEvent[] = [];
  private readonly disposables: Disposable[] = [];
  /** Members removed from the cluster (their association events are ignored). */
  private readonly removed = new Set<string>();
  private disposed = false;

  constructor(
    private readonly node: ClusterNode,
    registry?: MetricsRegistry,
  ) {
    this.registry = registry ?? new MetricsRegistry();
    this.membership();
    this.membershipTraffic();
    this.downing();
    this.remoting();
    this.remoteBytes();
    this.sharding();
    this.shardingMoves();
    this.actors();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const d of this.disposables.splice(0)) d.dispose();
    this.node.system.core.asks.latencyObserver = undefined;
    this.node.system.core.recoveryObserver = undefined;
  }

  private membership(): void {
    const r = this.registry;
    const c = this.node.cluster;
    const members = r.gauge({
      name: "shardkit_cluster_members",
      help: "Members of the cluster by status, as this member sees them.",
      labelNames: ["status"],
    });
    const unreachable = r.gauge({
      name: "shardkit_cluster_unreachable_members",
      help: "Members marked unreachable by some monitor.",
    });
    const convergence = r.gauge({
      name: "shardkit_cluster_convergence",
      help: "1 when every reachable member has seen the current gossip, else 0.",
    });
    const leader = r.gauge({
      name: "shardkit_cluster_is_leader",
      help: "1 when this member is the leader.",
    });
    const events = r.counter({
      name: "shardkit_cluster_member_events_total",
      help: "Membership events seen (member-up, member-downed, unreachable-member, ...).",
      labelNames: ["event"],
    });
    const reachable = r.gauge({
      name: "shardkit_cluster_member_reachable",
      help: "Per other member: 1 when reachable, 0 when some monitor marks it unreachable.",
      labelNames: ["member"],
    });
    r.addCollector(() => {
      const s = c.state;
      const counts = new Map<string, number>(MEMBER_STATUSES.map((x) => [x, 0]));
      for (const m of s.members) counts.set(m.status, (counts.get(m.status) ?? 0) + 1);
      for (const [status, n] of counts) members.labels({ status }).set(n);
      unreachable.labels().set(s.unreachable.length);
      convergence.labels().set(s.convergence ? 1 : 0);
      const self = c.self;
      leader
        .labels()
        .set(
          s.leader !== undefined && s.leader.uid === self.uid && nodeOf(s.leader) === nodeOf(self)
            ? 1
            : 0,
        );
      const unreachableSet = new Set(s.unreachable.map((m) => nodeOf(m.uniqueAddress)));
      for (const m of s.members) {
        const n = nodeOf(m.uniqueAddress);
        if (n !== nodeOf(self)) reachable.labels({ member: n }).set(unreachableSet.has(n) ? 0 : 1);
      }
    });
    this.disposables.push(
      c.subscribe((e) => {
        events.labels({ event: e.type }).inc();
        if (e.type === "member-removed") this.memberGone(nodeOf(e.member.uniqueAddress));
      }),
    );
  }

  /** Drops every series about `member` (it left the cluster). */
  memberGone(member: string): void {
    if (this.removed.size >= REMOVED_MEMBERS_TRACKED_MAX) this.removed.clear();
    this.removed.add(member);
    this.registry.removeSeries("member", member);
  }

  /**
   * Membership messages and their bytes per kind, in and out (gossip, gossip-status,
   * heartbeats, the join conversation), as remoting counted them: the bytes are the
   * encoded message as the codec produced it, counted once where it is sent. Kinds show
   * up once a message of the kind was sent or received.
   */
  private membershipTraffic(): void {
    const r = this.registry;
    const kinds = this.node.remoting.stats.controlKinds;
    const messages = r.counter({
      name: "shardkit_cluster_membership_messages_total",
      help: "Membership messages (gossip, gossip-status, heartbeat, join, ...) by direction and kind.",
      labelNames: ["direction", "kind"],
    });
    const bytes = r.counter({
      name: "shardkit_cluster_membership_bytes_total",
      help: "Encoded bytes of membership messages (without framing) by direction and kind.",
      labelNames: ["direction", "kind"],
    });
    r.addCollector(() => {
      for (const [k, kind] of MEMBERSHIP_KIND_NAMES) {
        if ((kinds.messagesOut[k] as number) > 0 || (kinds.messagesIn[k] as number) > 0) {
          messages.labels({ direction: "out", kind }).set(kinds.messagesOut[k] as number);
          messages.labels({ direction: "in", kind }).set(kinds.messagesIn[k] as number);
          bytes.labels({ direction: "out", kind }).set(kinds.bytesOut[k] as number);
          bytes.labels({ direction: "in", kind }).set(kinds.bytesIn[k] as number);
        }
      }
    });
  }

  /**
   * The split brain resolver's decisions taken on this member (the leader of its side),
   * by strategy and decision; and the phi of each member this member monitors, computed
   * from its failure detector when scraped (the series of a member no longer monitored,
   * or gone, disappears with it).
   */
  private downing(): void {
    const r = this.registry;
    const c = this.node.cluster;
    const decisions = r.counter({
      name: "shardkit_cluster_downing_decisions_total",
      help: "Downing decisions taken on this member by the split brain resolver (or auto-down), by strategy and decision.",
      labelNames: ["strategy", "decision"],
    });
    const phi = r.gauge({
      name: "shardkit_cluster_member_phi",
      help: "Per member this member monitors: the phi of its failure detector (suspicion; unreachable at the threshold, 8 by default).",
      labelNames: ["member"],
    });
    const strategy = c.sbrSettings.activeStrategy;
    const clock = this.node.system.core.clock;
    r.addCollector(() => {
      for (const decision of DOWNING_DECISION_KINDS)
        decisions.labels({ strategy, decision }).set(c.downingDecisions.of(decision));
      phi.reset();
      const detectors = c.failureDetectors;
      if (detectors.size === 0) return;
      const now = clock.now();
      for (const m of c.state.members) {
        const d = detectors.get(uniqueAddressToString(m.uniqueAddress));
        if (d !== undefined) phi.labels({ member: nodeOf(m.uniqueAddress) }).set(d.phi(now));
      }
    });
  }

  private remoting(): void {
    const r = this.registry;
    const rem = this.node.remoting;
    const st = rem.stats;
    const messages = r.counter({
      name: "shardkit_remote_messages_total",
      help: "Remote messages by direction (in, out) and lane (user, system, control).",
      labelNames: ["direction", "lane"],
    });
    const writes = r.counter({
      name: "shardkit_remote_writes_total",
      help: "Socket writes (batches of frames).",
    });
    const dropped = r.counter({
      name: "shardkit_remote_dropped_total",
      help: "Outbound messages dropped: user queue overflow, control queue overflow.",
      labelNames: ["reason"],
    });
    const badInput = r.counter({
      name: "shardkit_remote_bad_input_total",
      help: "Inbound input refused: bad frames, undecodable messages, unknown manifests, unknown recipients.",
      labelNames: ["kind"],
    });
    const quarantines = r.counter({
      name: "shardkit_remote_quarantines_total",
      help: "Peer incarnations quarantined.",
    });
    const handshakeRejects = r.counter({
      name: "shardkit_remote_handshake_rejects_total",
      help: "Handshakes refused, sent to peers (out) or received from them (in).",
      labelNames: ["direction"],
    });
    const handshakeTimeouts = r.counter({
      name: "shardkit_remote_handshake_timeouts_total",
      help: "Handshakes that timed out.",
    });
    const inbound = r.counter({
      name: "shardkit_remote_inbound_connections_total",
      help: "Inbound connections accepted.",
    });
    const unauth = r.gauge({
      name: "shardkit_remote_unauthenticated_connections",
      help: "Inbound connections open that have not completed the handshake.",
    });
    const unauthRefused = r.counter({
      name: "shardkit_remote_unauthenticated_refused_total",
      help: "Inbound connections closed at once: the unauthenticated-connection caps were reached.",
    });
    const assocUp = r.gauge({
      name: "shardkit_remote_association_up",
      help: "Per peer member: 1 while the outbound association is established, 0 after it failed.",
      labelNames: ["member"],
    });
    const reconnects = r.counter({
      name: "shardkit_remote_association_failures_total",
      help: "Per peer member: failed connects and broken associations (each is followed by a reconnect with backoff).",
      labelNames: ["member", "cause"],
    });
    r.addCollector(() => {
      messages.labels({ direction: "out", lane: "user" }).set(st.userMessagesOut);
      messages.labels({ direction: "in", lane: "user" }).set(st.userMessagesIn);
      messages.labels({ direction: "out", lane: "system" }).set(st.systemMessagesOut);
      messages.labels({ direction: "in", lane: "system" }).set(st.systemMessagesIn);
      messages.labels({ direction: "out", lane: "control" }).set(st.controlFramesOut);
      messages.labels({ direction: "in", lane: "control" }).set(st.controlFramesIn);
      writes.labels().set(st.writes);
      dropped.labels({ reason: "outbound-overflow" }).set(st.outboundOverflow);
      dropped.labels({ reason: "control-dropped" }).set(st.controlDropped);
      badInput.labels({ kind: "frame" }).set(st.badFrames);
      badInput.labels({ kind: "message" }).set(st.badMessages);
      badInput.labels({ kind: "unknown-manifest" }).set(st.unknownManifests);
      badInput.labels({ kind: "unknown-recipient" }).set(st.unknownRecipients);
      quarantines.labels().set(st.quarantines);
      handshakeRejects.labels({ direction: "out" }).set(st.handshakeRejectsSent);
      handshakeRejects.labels({ direction: "in" }).set(st.handshakeRejectsReceived);
      handshakeTimeouts.labels().set(st.handshakeTimeouts);
      inbound.labels().set(st.inboundConnections);
      unauth.labels().set(st.unauthenticatedConnections);
      unauthRefused.labels().set(st.unauthenticatedRefused);
    });
    const system = this.node.system.name;
    this.disposables.push(
      rem.onAssociationEvent((e) => {
        const member = peerNode(system, e.hostPort);
        // a removed member's series stay removed (reconnect attempts to it are not news)
        if (this.removed.has(member)) return;
        if (e.type === "established") assocUp.labels({ member }).set(1);
        else if (e.type === "failed") {
          assocUp.labels({ member }).set(0);
          reconnects.labels({ member, cause: e.failure.cause }).inc();
        }
      }),
    );
  }

  /** Bytes per lane and direction (whole frames), reconnects, associations by state. */
  private remoteBytes(): void {
    const r = this.registry;
    const st = this.node.remoting.stats;
    const bytes = r.counter({
      name: "shardkit_remote_bytes_total",
      help: "Bytes of remote frames (length prefix and type included) by direction (in, out) and lane (user, system, control).",
      labelNames: ["direction", "lane"],
    });
    const reconnects = r.counter({
      name: "shardkit_remote_reconnects_total",
      help: "Outbound connection attempts after a failed connect or a broken association (each after its backoff).",
    });
    const peerReconnects = r.counter({
      name: "shardkit_remote_association_reconnects_total",
      help: "Per peer member: outbound connection attempts after a failed connect or a broken association.",
      labelNames: ["member"],
    });
    const system = this.node.system.name;
    const associations = r.gauge({
      name: "shardkit_remote_associations",
      help: "Outbound associations (one per peer address) by state: idle, connecting, handshaking, active, backoff.",
      labelNames: ["state"],
    });
    const remoting = this.node.remoting;
    r.addCollector(() => {
      bytes.labels({ direction: "out", lane: "user" }).set(st.userBytesOut);
      bytes.labels({ direction: "in", lane: "user" }).set(st.userBytesIn);
      bytes.labels({ direction: "out", lane: "system" }).set(st.systemBytesOut);
      bytes.labels({ direction: "in", lane: "system" }).set(st.systemBytesIn);
      bytes.labels({ direction: "out", lane: "control" }).set(st.controlBytesOut);
      bytes.labels({ direction: "in", lane: "control" }).set(st.controlBytesIn);
      reconnects.labels().set(st.reconnects);
      for (const [hostPort, n] of remoting.associationReconnects()) {
        const member = peerNode(system, hostPort);
        // a removed member's series stay removed (its association lives on)
        if (!this.removed.has(member)) peerReconnects.labels({ member }).set(n);
      }
      const states = remoting.associationStates();
      for (const state of ASSOCIATION_STATES)
        associations.labels({ state }).set(states.get(state) ?? 0);
    });
  }

  private sharding(): void {
    const r = this.registry;
    const shards = r.gauge({
      name: "shardkit_sharding_shards",
      help: "Shards hosted on this member, per entity type.",
      labelNames: ["type"],
    });
    const entities = r.gauge({
      name: "shardkit_sharding_entities",
      help: "Live entities on this member, per entity type.",
      labelNames: ["type"],
    });
    const regions = r.gauge({
      name: "shardkit_sharding_regions",
      help: "Regions (and proxies) started on this member.",
    });
    const shardStarts = r.counter({
      name: "shardkit_sharding_shard_starts_total",
      help: "Shards started on this member (allocations and hand-offs to it).",
      labelNames: ["type"],
    });
    const shardStops = r.counter({
      name: "shardkit_sharding_shard_stops_total",
      help: "Shards stopped on this member (hand-offs away from it, rebalances, shutdown).",
      labelNames: ["type"],
    });
    const activations = r.counter({
      name: "shardkit_sharding_entity_activations_total",
      help: "Entity incarnations started on this member.",
      labelNames: ["type"],
    });
    const stops = r.counter({
      name: "shardkit_sharding_entity_stops_total",
      help: "Entity incarnations stopped on this member (passivation, hand-off, failure).",
      labelNames: ["type"],
    });
    const sharding = ClusterSharding.get(this.node);
    const shardSeries = new Map<string, ValueSeries>();
    const entitySeries = new Map<string, ValueSeries>();
    const perType = <T>(cache: Map<string, T>, type: string, make: () => T): T => {
      let v = cache.get(type);
      if (v === undefined) {
        v = make();
        cache.set(type, v);
      }
      return v;
    };
    sharding.addLifecycleObserver({
      shardStarted: (type, shardId) => {
        perType(shardSeries, type, () => shards.labels({ type })).inc();
        shardStarts.labels({ type }).inc();
        this.byType(type).set(shardId, 0);
        this.shardEvent({ kind: "shard-started", type, shardId });
      },
      shardStopped: (type, shardId) => {
        perType(shardSeries, type, () => shards.labels({ type })).inc(-1);
        shardStops.labels({ type }).inc();
        this.byType(type).delete(shardId);
        this.shardEvent({ kind: "shard-stopped", type, shardId });
      },
      entityStarted: (type, _entityId, _node, shardId) => {
        perType(entitySeries, type, () => entities.labels({ type })).inc();
        activations.labels({ type }).inc();
        const m = this.byType(type);
        m.set(shardId, (m.get(shardId) ?? 0) + 1);
      },
      entityStopped: (type, _entityId, _node, shardId) => {
        perType(entitySeries, type, () => entities.labels({ type })).inc(-1);
        stops.labels({ type }).inc();
        const m = this.byType(type);
        const n = m.get(shardId);
        if (n !== undefined) m.set(shardId, Math.max(0, n - 1));
      },
    });
    r.addCollector(() => regions.labels().set(sharding.typeNames().length));
  }

  /**
   * What moves shards and entities: messages the regions and, apart, their shards buffer
   * (read from the regions' probes when scraped), passivations, GetShardHome round trips
   * (region side), and the hand-offs this member's coordinators finished, gave up
   * (timeout) or abandoned (the old home went away), all per type.
   */
  private shardingMoves(): void {
    const r = this.registry;
    const buffered = r.gauge({
      name: "shardkit_sharding_buffered_messages",
      help: "Messages the regions (and proxies) on this member hold: shard home unknown, shard moving or starting.",
      labelNames: ["type"],
    });
    const shardBuffered = r.gauge({
      name: "shardkit_sharding_shard_buffered_messages",
      help: "Messages the shards on this member hold: entity starting or recovering, shard awaiting its lease or recovering remembered entities, hand-off.",
      labelNames: ["type"],
    });
    const passivations = r.counter({
      name: "shardkit_sharding_passivations_total",
      help: "Entities asked to stop to passivate: passivate (the entity asked), idle, limit (active-entity limit).",
      labelNames: ["type", "reason"],
    });
    const homeSeconds = r.histogram({
      name: "shardkit_sharding_shard_home_duration_seconds",
      help: "Region side: from the first GetShardHome for a shard to the coordinator's answer naming its home.",
      labelNames: ["type"],
    });
    const handOffSeconds = r.histogram({
      name: "shardkit_sharding_hand_off_duration_seconds",
      help: "Coordinator side: hand-offs finished (the shard stopped at its old owner), from BeginHandOff, by reason (rebalance, shutdown).",
      labelNames: ["type", "reason"],
      buckets: HAND_OFF_BUCKETS_SECONDS,
    });
    const handOffTimeouts = r.counter({
      name: "shardkit_sharding_hand_off_timeouts_total",
      help: "Coordinator side: hand-offs aborted after handOffTimeoutMs (the shard stays where it was), by reason.",
      labelNames: ["type", "reason"],
    });
    const abandoned = r.counter({
      name: "shardkit_sharding_hand_offs_abandoned_total",
      help: "Coordinator side: hand-offs that ended unfinished because the old home's region went away, by reason (rebalance, shutdown) and cause (member-removed, member-unreachable, region-stopped).",
      labelNames: ["type", "reason", "cause"],
    });
    const probes = new Map<string, Set<RegionProbe>>();
    ClusterSharding.get(this.node).addLifecycleObserver({
      regionStarted: (type, _node, probe) => {
        const set = probes.get(type) ?? new Set<RegionProbe>();
        set.add(probe);
        probes.set(type, set);
      },
      regionStopped: (type, _node, probe) => {
        probes.get(type)?.delete(probe);
      },
      entityPassivated: (type, _entityId, _node, _shardId, reason) =>
        passivations.labels({ type, reason }).inc(),
      shardHomeReceived: (type, _shardId, _node, ms) =>
        homeSeconds.labels({ type }).observe(ms / 1000),
      handOffCompleted: (type, _shardId, _node, reason, ms) =>
        handOffSeconds.labels({ type, reason }).observe(ms / 1000),
      handOffTimedOut: (type, _shardId, _node, reason) =>
        handOffTimeouts.labels({ type, reason }).inc(),
      handOffAbandoned: (type, _shardId, _node, reason, cause) =>
        abandoned.labels({ type, reason, cause }).inc(),
    });
    r.addCollector(() => {
      for (const [type, set] of probes) {
        let n = 0;
        let inShards = 0;
        for (const p of set) {
          n += p.bufferedMessages;
          inShards += p.shardBufferedMessages;
        }
        buffered.labels({ type }).set(n);
        shardBuffered.labels({ type }).set(inShards);
      }
    });
  }

  private byType(type: string): Map<string, number> {
    let m = this.entitiesByShard.get(type);
    if (m === undefined) {
      m = new Map();
      this.entitiesByShard.set(type, m);
    }
    return m;
  }

  private shardEvent(e: Omit<ShardEvent, "atMs">): void {
    this.shardEvents.push({ atMs: this.node.system.core.clock.now(), ...e });
    if (this.shardEvents.length > SHARD_EVENTS_MAX) this.shardEvents.shift();
  }

  private actors(): void {
    const r = this.registry;
    const system = this.node.system;
    const asks = system.core.asks;
    const deadLetters = r.counter({
      name: "shardkit_dead_letters_total",
      help: "Messages that could not be delivered, by reason.",
      labelNames: ["reason"],
    });
    const unhandled = r.counter({
      name: "shardkit_unhandled_messages_total",
      help: "Messages a behavior did not handle.",
    });
    const failures = r.counter({
      name: "shardkit_actor_failures_total",
      help: "Actor failures (thrown errors) handled by supervision.",
    });
    const pending = r.gauge({
      name: "shardkit_asks_pending",
      help: "Asks waiting for their reply.",
    });
    const timeouts = r.counter({
      name: "shardkit_ask_timeouts_total",
      help: "Asks that timed out.",
    });
    const latency = r.histogram({
      name: "shardkit_ask_duration_seconds",
      help: "Time from an ask to its reply, failure or timeout.",
    });
    const latencySeries = latency.labels();
    asks.latencyObserver = (ms) => latencySeries.observe(ms / 1000);
    const recovery = r.histogram({
      name: "shardkit_persistence_recovery_duration_seconds",
      help: 'Recovery of an event-sourced entity (snapshot load and event replay), by entity type (a sharded type\'s name; "" for actors outside sharding) and outcome (recovered, failed).',
      labelNames: ["type", "outcome"],
    });
    const sharding = ClusterSharding.get(this.node);
    /** The recovered series per type ("" outside sharding): no label object per recovery. */
    const recovered = new Map<string, HistogramSeries>();
    system.core.recoveryObserver = (ms, outcome, path) => {
      const found = shardedEntityTypeOf(path);
      // only the name of a type started here (bounded); anything else counts as outside
      const type = found !== undefined && sharding.typeNames().includes(found) ? found : "";
      let series: HistogramSeries | undefined;
      if (outcome === "recovered") {
        series = recovered.get(type);
        if (series === undefined) {
          series = recovery.labels({ type, outcome });
          recovered.set(type, series);
        }
      } else series = recovery.labels({ type, outcome });
      series.observe(ms / 1000);
    };
    this.disposables.push(
      system.eventStream.subscribe("DeadLetter", (e) =>
        deadLetters.labels({ reason: e.reason }).inc(),
      ),
    );
    r.addCollector(() => {
      const s = system.stats;
      unhandled.labels().set(s.unhandled);
      failures.labels().set(s.failures);
      pending.labels().set(s.pendingAsks);
      timeouts.labels().set(asks.timeouts);
    });
  }
}
