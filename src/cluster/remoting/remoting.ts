/**
 * Remoting: makes actors on different Node processes talk as if local. It owns the
 * transport listener, one OutboundAssociation per peer address, the inbound connections,
 * the serializer registry (refs inside messages travel as address + path and resolve on
 * arrival), remote death watch (with heartbeats to watched nodes) and the quarantine list.
 *
 * Node identity is host:port plus a random uid per incarnation. A quarantined incarnation
 * can never talk to this node again (its handshakes are refused); a restarted peer is a
 * new incarnation and associates afresh.
 */
import { ActorCell } from "../../actor/actor-cell.js";
import type { ActorRef } from "../../actor/actor-ref.js";
import type { ActorSystem } from "../../actor/actor-system.js";
import { AskRef } from "../../actor/ask.js";
import type { DeadLetterReason } from "../../actor/event-stream.js";
import {
  type InternalRef,
  isInternalRef,
  refKey,
  type SystemMessage,
} from "../../actor/internal.js";
import type { SystemCore } from "../../actor/system-core.js";
import type { Disposable } from "../../base/disposable.js";
import { ConfigError, InvalidAddressError, ShardkitError } from "../../base/errors.js";
import { RateLimiter } from "../../base/rate-limiter.js";
import { SystemMessageReceiver } from "../../core/association/system-channel.js";
import { PhiAccrualFailureDetector } from "../../core/failure-detector/phi-accrual.js";
import type { Crypto } from "../../ports/crypto.js";
import type { LogFields, Logger } from "../../ports/logger.js";
import type { Connection, Listener, Transport } from "../../ports/transport.js";
import { SerializationError } from "../../protocol/errors.js";
import { UnknownManifestError } from "../../protocol/evolution.js";
import { checkFrameSize, type FramePayload, framePayloadLength } from "../../protocol/framing.js";
import { HANDSHAKE_NONCE_BYTES, type NodeAddress } from "../../protocol/handshake.js";
import { type HandshakePolicy, normalizeHost } from "../../protocol/handshake-check.js";
import {
  HANDSHAKE_TLS_BINDING_BYTES,
  HANDSHAKE_TLS_EXPORTER_LABEL,
  type HandshakeIdentity,
} from "../../protocol/handshake-proof.js";
import type { RefCodec, WireRefData } from "../../protocol/serialization.js";
import { SerializerRegistry } from "../../protocol/serializer-registry.js";
import type { UserEnvelopeView } from "../../protocol/user-envelope-reader.js";
import { encodeUserPayload } from "../../protocol/user-payload.js";
import type { AssociationEvent, AssociationListener } from "./association-failure.js";
import { InboundConnection, type InboundHost, type Peer } from "./inbound-connection.js";
import { type AssociationState, OutboundAssociation } from "./outbound-association.js";
import { RemoteActorRef } from "./remote-actor-ref.js";
import { decodeRemoteSystemMessage, encodeRemoteSystemMessage } from "./remote-system-message.js";
import { type RemotingSettings, remotingSecrets, remotingSettings } from "./remoting-settings.js";
import { newRemotingStats, type RemotingStats } from "./remoting-stats.js";
import {
  ASK_PATH_PREFIX,
  askIdOfPath,
  formatActorPath,
  formatNode,
  parseActorPath,
  parseNode,
  type WireNode,
} from "./wire-path.js";

export interface RemotingOptions {
  readonly transport: Transport;
  readonly settings?: Partial<RemotingSettings>;
  /** Needed when `settings.secret` is set (HMAC) — runtime/node's `nodeCrypto`. */
  readonly crypto?: Crypto;
  /** Register user serializers here before messages flow. */
  readonly configureSerializers?: (registry: SerializerRegistry) => void;
}

/** Control kinds 0..15 are remoting's own; others are registered by cluster components. */
const CONTROL_WATCH_HEARTBEAT = 1;
const CONTROL_WATCH_HEARTBEAT_RSP = 2;
export const CONTROL_KIND_USER_MIN = 16;

export type ControlHandler = (peer: Peer, payload: Uint8Array) => void;

interface WatchRecord {
  readonly watcher: InternalRef;
  readonly watchee: RemoteActorRef;
}

/** A message could not be sent because it cannot be serialized or framed. */
export class RemoteSendError extends ShardkitError {
  constructor(recipient: string, cause: unknown) {
    super(
      "REMOTE_SEND_FAILED",
      `cannot send to ${recipient}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        recipient,
        cause,
      },
    );
  }
}

export class Remoting implements InboundHost {
  readonly settings: Readonly<RemotingSettings>;
  readonly stats: RemotingStats = newRemotingStats();
  readonly registry: SerializerRegistry;
  readonly localUid: bigint;
  readonly handshakePolicy: HandshakePolicy;
  private readonly core: SystemCore;
  private readonly log: Logger;
  private readonly associations = new Map<string, OutboundAssociation>();
  private readonly inbound = new Set<InboundConnection>();
  /**
   * The authenticated inbound connections by the peer's `host:port` (a handshake asks
   * where a live association with a claimed address is; a large cluster has hundreds).
   */
  private readonly inboundByHostPort = new Map<string, Set<InboundConnection>>();
  /** Inbound connections that have not completed the handshake, by source host. */
  private readonly unauthenticated = new Map<InboundConnection, string>();
  private readonly unauthenticatedByHost = new Map<string, number>();
  private readonly receivers = new Map<string, SystemMessageReceiver>();
  private readonly quarantined = new Map<string, number>();
  private readonly incarnations = new Map<string, bigint>();
  private readonly watches = new Map<string, Map<string, WatchRecord>>();
  private readonly watchDetectors = new Map<string, PhiAccrualFailureDetector>();
  private readonly controlHandlers = new Map<number, ControlHandler>();
  private readonly recipientCache = new Map<string, InternalRef>();
  /** Parsed node addresses of refs inside inbound messages (see nodeOf). */
  private readonly nodeCache = new Map<string, WireNode>();
  private readonly badInputLimiter: RateLimiter;
  private readonly associationListeners = new Set<AssociationListener>();
  private listener: Listener | null = null;
  private localNode!: WireNode;
  private localNodeString = "";
  private heartbeatTimer: { dispose(): void } | null = null;
  private closed = false;

  private constructor(
    private readonly system: ActorSystem,
    readonly transport: Transport,
    settings: Readonly<RemotingSettings>,
    private readonly crypto: Crypto | undefined,
  ) {
    this.settings = settings;
    this.core = system.core;
    this.log = system.log.child({ component: "remoting" });
    this.localUid = BigInt(Math.floor(this.random.next() * 2 ** 52)) + 1n;
    this.registry = new SerializerRegistry({ refCodec: this.refCodec() });
    this.badInputLimiter = new RateLimiter(
      settings.badInputLogBurstMax,
      settings.badInputLogIntervalMs,
    );
    const secrets = remotingSecrets(settings);
    if (secrets.length > 0 && crypto === undefined)
      throw new ConfigError(
        "remoting.secret",
        "(set)",
        "no secret, or a crypto port (`crypto` option) to compute the handshake proof",
      );
    this.handshakePolicy = {
      systemName: system.name,
      secrets: secrets.map((secret) => new TextEncoder().encode(secret)),
      ...(crypto !== undefined ? { hmac: crypto.hmacSha256 } : {}),
      isTombstoned: (address, uid) => this.isQuarantined(`${address.host}:${address.port}`, uid),
      liveAssociationHost: (address) => this.liveAssociationHost(address),
    };
  }

  /** Starts remoting for `system`: listens, binds the system's address, returns when ready. */
  static async start(system: ActorSystem, options: RemotingOptions): Promise<Remoting> {
    const settings = remotingSettings(options.settings);
    checkProtected(settings, options.transport);
    const r = new Remoting(system, options.transport, settings, options.crypto);
    options.configureSerializers?.(r.registry);
    r.listener = await options.transport.listen({ host: settings.host, port: settings.port }, (c) =>
      r.onInbound(c),
    );
    const port = r.listener.address.port;
    r.localNode = {
      systemName: system.name,
      host: settings.canonicalHost,
      port,
      hostPort: `${settings.canonicalHost}:${port}`,
    };
    r.localNodeString = formatNode(system.name, settings.canonicalHost, port);
    system.core.bindAddress(r.localNode.hostPort);
    r.armHeartbeats();
    system.whenTerminated.then(() => r.shutdown());
    r.log.info("remoting started", { address: r.localNodeString, uid: String(r.localUid) });
    return r;
  }

  // ------------------------------------------------------------------ public API

  /** This node as `system@host:port`. */
  get address(): string {
    return this.localNodeString;
  }
  get node(): WireNode {
    return this.localNode;
  }

  /**
   * A ref to an actor on another (or this) node by address (`system@host:port`) and path
   * (`/user/name`); without `#uid` any incarnation at that path receives it.
   */
  actorRefFor<M>(nodeAddress: string, path: string): ActorRef<M> {
    const node = parseNode(nodeAddress);
    const p = parseActorPath(path.includes("#") ? path : `${path}#0`);
    if (node === undefined || p === undefined)
      throw new InvalidAddressError(
        `${nodeAddress}${path}`,
        "expected a node address and an actor path",
      );
    if (node.hostPort === this.localNode.hostPort && node.systemName === this.localNode.systemName)
      return (this.core.resolveLocal(p.elements, p.uid) ?? this.missingLocal(path)) as ActorRef<M>;
    return new RemoteActorRef(
      this.core,
      this,
      node,
      p.elements,
      p.uid,
      formatActorPath(p.elements, p.uid),
    );
  }

  registerControlHandler(kind: number, handler: ControlHandler): void {
    if (!Number.isInteger(kind) || kind < CONTROL_KIND_USER_MIN || kind > 255)
      throw new ConfigError("control kind", kind, `an integer in [${CONTROL_KIND_USER_MIN}, 255]`);
    this.controlHandlers.set(kind, handler);
  }

  /**
   * Sends a CONTROL frame (unreliable, prioritised lane) of `kind` to `node`; `urgent`
   * frames (heartbeat replies) are written before the other queued control frames. The
   * payload (or its parts) must not be modified afterwards: it is queued as it is.
   */
  sendControl(node: WireNode, kind: number, payload: FramePayload, urgent = false): void {
    const kinds = this.stats.controlKinds;
    kinds.messagesOut[kind] = (kinds.messagesOut[kind] as number) + 1;
    kinds.bytesOut[kind] = (kinds.bytesOut[kind] as number) + framePayloadLength(payload);
    this.association(node).sendControl(kind, payload, urgent);
  }

  /** How many outbound associations are in each state now (read by the metrics). */
  associationStates(): Map<AssociationState, number> {
    const counts = new Map<AssociationState, number>();
    for (const a of this.associations.values())
      counts.set(a.currentState, (counts.get(a.currentState) ?? 0) + 1);
    return counts;
  }

  /**
   * Reconnect attempts per peer (`host:port`), for the associations that made any (read by
   * the metrics at scrape time; their sum is `stats.reconnects`).
   */
  associationReconnects(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [hostPort, a] of this.associations)
      if (a.reconnects > 0) out.set(hostPort, a.reconnects);
    return out;
  }

  /** Stops listening and closes every connection. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.heartbeatTimer?.dispose();
    for (const a of this.associations.values()) a.close();
    for (const c of [...this.inbound]) c.destroy();
    await this.listener?.close();
    await this.transport.close();
  }

  // ------------------------------------------------------------------ RemotingContext

  get clock() {
    return this.core.clock;
  }
  get scheduler() {
    return this.core.scheduler;
  }
  get random() {
    return this.core.random;
  }
  get localSystemName(): string {
    return this.system.name;
  }

  get selfIdentity(): HandshakeIdentity {
    return {
      systemName: this.system.name,
      address: { host: this.localNode.host, port: this.localNode.port },
      uid: this.localUid,
    };
  }

  handshakeNonce(): Uint8Array {
    return this.crypto?.randomBytes(HANDSHAKE_NONCE_BYTES) ?? this.seededNonce();
  }

  channelBinding(conn: Connection): Uint8Array {
    return (
      conn.exportKeyingMaterial?.(HANDSHAKE_TLS_BINDING_BYTES, HANDSHAKE_TLS_EXPORTER_LABEL) ??
      NO_BINDING
    );
  }

  peerIncarnation(node: WireNode, uid: bigint): void {
    const known = this.incarnations.get(node.hostPort);
    this.incarnations.set(node.hostPort, uid);
    if (known !== undefined && known !== uid)
      this.incarnationGone(node, known, "peer restarted with a new uid");
    // a peer that reached us is up: our way back to it need not wait out a backoff
    this.associations.get(node.hostPort)?.peerReachable();
  }

  incarnationGone(node: WireNode, uid: bigint, reason: string): void {
    this.log.info("peer incarnation gone", { peer: node.hostPort, uid: String(uid), reason });
    this.receivers.delete(`${node.hostPort}#${uid}`);
    this.addressTerminated(node.hostPort);
  }

  quarantine(node: WireNode, uid: bigint, reason: string): void {
    const key = `${node.hostPort}#${uid}`;
    if (this.quarantined.has(key)) return;
    this.quarantined.set(key, this.clock.now() + this.settings.quarantineRetentionMs);
    this.stats.quarantines++;
    this.log.warn("quarantined peer incarnation: it can never talk to this node again", {
      peer: node.hostPort,
      uid: String(uid),
      reason,
    });
    const assoc = this.associations.get(node.hostPort);
    if (assoc !== undefined && assoc.remoteUid === uid)
      for (const _ of assoc.reset())
        this.core.deadLetter(
          "(serialized message)",
          `shardkit://${formatNode(node.systemName, node.host, node.port)}`,
          "stopped",
        );
    for (const c of [...(this.inboundByHostPort.get(node.hostPort) ?? [])])
      if (c.remotePeer?.uid === uid) c.destroy();
    this.receivers.delete(key);
    this.addressTerminated(node.hostPort);
  }

  /**
   * Calls `listener` on every failed outbound association attempt (with its cause) and
   * on every established one (the cluster's join diagnostics use it).
   */
  onAssociationEvent(listener: AssociationListener): Disposable {
    this.associationListeners.add(listener);
    return { dispose: () => this.associationListeners.delete(listener) };
  }

  associationEvent(event: AssociationEvent): void {
    for (const l of [...this.associationListeners]) {
      try {
        l(event);
      } catch (error) {
        this.log.error("association listener threw", { error });
      }
    }
  }

  badInput(what: string, peer: string, detail: string): void {
    if (this.badInputLimiter.tryAcquire(this.clock.now()) >= 0)
      this.log.warn(what, { peer, detail });
  }

  debug(message: string, fields?: LogFields): void {
    this.log.debug(message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.log.warn(message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.log.error(message, fields);
  }

  // ------------------------------------------------------------------ outbound

  sendUser(ref: RemoteActorRef, message: unknown): void {
    if (this.closed) {
      this.core.deadLetter(message, ref, "stopped");
      return;
    }
    let payload: Uint8Array;
    try {
      payload = encodeUserPayload(this.registry, ref.recipientField, message);
      checkFrameSize(payload.length, this.settings.frameSizeMaxBytes);
    } catch (error) {
      this.sendFailed(message, ref, new RemoteSendError(ref.path.toString(), error));
      return;
    }
    if (!this.association(ref.node).sendUser(payload)) {
      this.stats.outboundOverflow++;
      this.core.deadLetter(message, ref, "queue-overflow");
    }
  }

  sendSystemFor(ref: RemoteActorRef, m: SystemMessage): void {
    switch (m.k) {
      case "watch":
        this.addWatch(m.watcher, ref);
        this.sendRemoteSystem(ref.node, {
          t: "watch",
          watchee: ref.wirePath,
          watcher: this.wirePathOf(m.watcher),
        });
        return;
      case "unwatch":
        this.removeWatch(m.watcher, ref);
        this.sendRemoteSystem(ref.node, {
          t: "unwatch",
          watchee: ref.wirePath,
          watcher: this.wirePathOf(m.watcher),
        });
        return;
      case "terminated":
        this.sendRemoteSystem(ref.node, {
          t: "terminated",
          watchee: this.wirePathOf(m.ref),
          watcher: ref.wirePath,
          failed: m.failed,
        });
        return;
      default:
        return;
    }
  }

  private sendRemoteSystem(
    node: WireNode,
    msg: Parameters<typeof encodeRemoteSystemMessage>[1],
  ): void {
    if (this.closed) return;
    const payload = encodeRemoteSystemMessage(this.registry, msg);
    if (!this.association(node).sendSystem(payload)) {
      const uid = this.incarnations.get(node.hostPort);
      if (uid !== undefined) this.quarantine(node, uid, "system message buffer overflow");
    }
  }

  private sendFailed(message: unknown, ref: InternalRef, error: RemoteSendError): void {
    this.badInput("message cannot be sent", ref.path.toString(), error.message);
    this.core.deadLetter(message, ref, "send-failed", error);
  }

  private association(node: WireNode): OutboundAssociation {
    let a = this.associations.get(node.hostPort);
    if (a === undefined) {
      a = new OutboundAssociation(this, node);
      this.associations.set(node.hostPort, a);
    }
    return a;
  }

  // ------------------------------------------------------------------ inbound

  private onInbound(conn: Connection): void {
    if (this.closed) {
      conn.destroy();
      return;
    }
    const host = normalizeHost(conn.remote.host);
    const fromHost = this.unauthenticatedByHost.get(host) ?? 0;
    const s = this.settings;
    const full =
      this.unauthenticated.size >= s.unauthenticatedConnectionsMax
        ? `unauthenticatedConnectionsMax=${s.unauthenticatedConnectionsMax}`
        : fromHost >= s.unauthenticatedConnectionsPerHostMax
          ? `unauthenticatedConnectionsPerHostMax=${s.unauthenticatedConnectionsPerHostMax}`
          : undefined;
    if (full !== undefined) {
      this.stats.unauthenticatedRefused++;
      this.badInput(
        "refusing inbound connection",
        `${conn.remote.host}:${conn.remote.port}`,
        `too many connections that have not completed the handshake (${full})`,
      );
      conn.destroy();
      return;
    }
    const c = new InboundConnection(this, conn);
    this.inbound.add(c);
    this.unauthenticated.set(c, host);
    this.unauthenticatedByHost.set(host, fromHost + 1);
    this.stats.unauthenticatedConnections = this.unauthenticated.size;
  }

  inboundAuthenticated(c: InboundConnection): void {
    this.endUnauthenticated(c);
    const hostPort = c.remotePeer?.node.hostPort;
    if (hostPort === undefined) return;
    const same = this.inboundByHostPort.get(hostPort);
    if (same === undefined) this.inboundByHostPort.set(hostPort, new Set([c]));
    else same.add(c);
  }

  inboundClosed(c: InboundConnection): void {
    this.inbound.delete(c);
    this.endUnauthenticated(c);
    const hostPort = c.remotePeer?.node.hostPort;
    if (hostPort === undefined) return;
    const same = this.inboundByHostPort.get(hostPort);
    same?.delete(c);
    if (same?.size === 0) this.inboundByHostPort.delete(hostPort);
  }

  private endUnauthenticated(c: InboundConnection): void {
    const host = this.unauthenticated.get(c);
    if (host === undefined) return;
    this.unauthenticated.delete(c);
    const n = (this.unauthenticatedByHost.get(host) ?? 1) - 1;
    if (n <= 0) this.unauthenticatedByHost.delete(host);
    else this.unauthenticatedByHost.set(host, n);
    this.stats.unauthenticatedConnections = this.unauthenticated.size;
  }

  /** Where a live association with `address` was reached (see HandshakePolicy). */
  private liveAssociationHost(address: NodeAddress): string | undefined {
    const hostPort = `${address.host}:${address.port}`;
    const out = this.associations.get(hostPort)?.remoteHost;
    if (out !== undefined) return out;
    for (const c of this.inboundByHostPort.get(hostPort) ?? []) return c.remoteHost;
    return undefined;
  }

  receiverFor(peer: Peer): SystemMessageReceiver {
    const key = `${peer.node.hostPort}#${peer.uid}`;
    let r = this.receivers.get(key);
    if (r === undefined) {
      r = new SystemMessageReceiver();
      this.receivers.set(key, r);
    }
    return r;
  }

  onUserEnvelope(_peer: Peer, env: UserEnvelopeView): boolean {
    let message: unknown;
    try {
      message = this.registry.deserializeRange(
        env.serializerId,
        env.source,
        env.messageStart,
        env.messageEnd,
      );
    } catch (error) {
      if (error instanceof SerializationError && error.cause instanceof UnknownManifestError) {
        // A well-formed message of a type this member does not know (yet): a peer on
        // another version, not an attack. Dead-lettered with the typed cause; the
        // connection stays.
        this.stats.unknownManifests++;
        this.core.deadLetter(
          undefined,
          `${this.core.address}${env.recipient}`,
          "unknown-manifest",
          error.cause,
        );
        return true;
      }
      this.stats.badMessages++;
      this.badInput(
        "undecodable message",
        env.recipient,
        error instanceof Error ? error.message : String(error),
      );
      return false;
    }
    const target =
      env.recipientAskId > 0
        ? this.core.asks.exportedById(env.recipientAskId)
        : this.resolveRecipient(env.recipient);
    if (target === undefined) {
      this.stats.unknownRecipients++;
      this.core.deadLetter(message, `${this.core.address}${env.recipient}`, "stopped");
    } else target.tell(message);
    return true;
  }

  onSystemPayload(peer: Peer, payload: Uint8Array): boolean {
    const m = decodeRemoteSystemMessage(this.registry, payload);
    if (m === undefined) return false;
    switch (m.t) {
      case "watch":
      case "unwatch": {
        const watchee = this.resolveRecipient(m.watchee);
        const watcher = this.remoteRefAt(peer.node, m.watcher);
        if (watcher === undefined) return false;
        if (watchee !== undefined) watchee.sendSystem({ k: m.t, watcher });
        else if (m.t === "watch")
          this.sendRemoteSystem(peer.node, {
            t: "terminated",
            watchee: m.watchee,
            watcher: m.watcher,
            failed: false,
          });
        return true;
      }
      case "terminated": {
        const watchee = this.remoteRefAt(peer.node, m.watchee);
        if (watchee === undefined) return false;
        const watcher = this.resolveRecipient(m.watcher);
        if (watcher === undefined) return true;
        // Deliver with the ref object the watcher used: it may have watched "any
        // incarnation" (uid 0) while the notification names the actual uid.
        const watched = this.takeWatchRecord(watcher, watchee) ?? watchee;
        watcher.sendSystem({ k: "terminated", ref: watched, failed: m.failed, error: undefined });
        return true;
      }
    }
  }

  onControl(peer: Peer, payload: Uint8Array): void {
    const kind = payload[0];
    if (kind !== undefined) {
      const kinds = this.stats.controlKinds;
      kinds.messagesIn[kind] = (kinds.messagesIn[kind] as number) + 1;
      kinds.bytesIn[kind] = (kinds.bytesIn[kind] as number) + payload.length - 1;
    }
    if (kind === CONTROL_WATCH_HEARTBEAT) {
      this.sendControl(peer.node, CONTROL_WATCH_HEARTBEAT_RSP, new Uint8Array(0));
      return;
    }
    if (kind === CONTROL_WATCH_HEARTBEAT_RSP) {
      this.watchDetectors.get(peer.node.hostPort)?.heartbeat(this.clock.now());
      return;
    }
    const handler = kind === undefined ? undefined : this.controlHandlers.get(kind);
    if (handler === undefined) {
      this.badInput("unknown control kind", peer.node.hostPort, String(kind));
      return;
    }
    handler(peer, payload.subarray(1));
  }

  // ------------------------------------------------------------------ remote death watch

  private addWatch(watcher: InternalRef, watchee: RemoteActorRef): void {
    const hp = watchee.node.hostPort;
    let m = this.watches.get(hp);
    if (m === undefined) {
      m = new Map();
      this.watches.set(hp, m);
      this.watchDetectors.set(
        hp,
        new PhiAccrualFailureDetector({
          threshold: this.settings.watchFailureDetectorThreshold,
          acceptableHeartbeatPauseMs: this.settings.watchAcceptableHeartbeatPauseMs,
          firstHeartbeatEstimateMs: this.settings.watchHeartbeatIntervalMs,
        }),
      );
    }
    m.set(`${refKey(watcher)} ${refKey(watchee)}`, { watcher, watchee });
  }

  private removeWatch(watcher: InternalRef, watchee: RemoteActorRef): void {
    const hp = watchee.node.hostPort;
    const m = this.watches.get(hp);
    if (m === undefined) return;
    m.delete(`${refKey(watcher)} ${refKey(watchee)}`);
    if (m.size === 0) {
      this.watches.delete(hp);
      this.watchDetectors.delete(hp);
    }
  }

  /** Removes and returns the watch record of `watcher` on `watchee` (uid 0 = any). */
  private takeWatchRecord(
    watcher: InternalRef,
    watchee: RemoteActorRef,
  ): RemoteActorRef | undefined {
    const m = this.watches.get(watchee.node.hostPort);
    if (m === undefined) return undefined;
    const wk = refKey(watcher);
    const path = watchee.elements.join("/");
    for (const [key, rec] of m) {
      const w = rec.watchee;
      if (refKey(rec.watcher) !== wk || w.elements.join("/") !== path) continue;
      if (w.uid !== 0 && w.uid !== watchee.uid) continue;
      m.delete(key);
      if (m.size === 0) {
        this.watches.delete(watchee.node.hostPort);
        this.watchDetectors.delete(watchee.node.hostPort);
      }
      return w;
    }
    return undefined;
  }

  /** Every remote actor on `hostPort` is gone: their watchers get Terminated. */
  private addressTerminated(hostPort: string): void {
    const m = this.watches.get(hostPort);
    this.watches.delete(hostPort);
    this.watchDetectors.delete(hostPort);
    if (m === undefined) return;
    for (const { watcher, watchee } of m.values())
      watcher.sendSystem({ k: "terminated", ref: watchee, failed: false, error: undefined });
  }

  private armHeartbeats(): void {
    this.heartbeatTimer = this.scheduler.schedule(this.settings.watchHeartbeatIntervalMs, () => {
      if (this.closed) return;
      this.heartbeatTick();
      this.armHeartbeats();
    });
  }

  private heartbeatTick(): void {
    const now = this.clock.now();
    for (const [hp, detector] of [...this.watchDetectors]) {
      const node = parseNode(`${this.system.name}@${hp}`);
      if (node === undefined) continue;
      if (detector.isMonitoring && !detector.isAvailable(now)) {
        const uid = this.incarnations.get(hp);
        this.log.warn("watched node is unreachable; its actors are considered terminated", {
          peer: hp,
        });
        if (uid !== undefined) this.quarantine(node, uid, "remote watch failure detector");
        else this.addressTerminated(hp);
        continue;
      }
      this.sendControl(node, CONTROL_WATCH_HEARTBEAT, new Uint8Array(0));
      if (!detector.isMonitoring) detector.heartbeat(now);
    }
  }

  // ------------------------------------------------------------------ refs

  private refCodec(): RefCodec {
    const remoting = this;
    return {
      isRef: (v) => isInternalRef(v),
      encode: (ref) => this.encodeRef(ref as InternalRef),
      decode: (data) => this.decodeRef(data),
      askId: (ref) => {
        if (!(ref instanceof AskRef)) return -1;
        this.core.asks.export(ref);
        return ref.id;
      },
      get localAddress() {
        return remoting.localNodeString;
      },
    };
  }

  private encodeRef(ref: InternalRef): WireRefData {
    if (ref instanceof RemoteActorRef)
      return {
        address: formatNode(ref.node.systemName, ref.node.host, ref.node.port),
        path: ref.wirePath,
      };
    if (ref instanceof AskRef) this.core.asks.export(ref);
    return { address: this.localNodeString, path: this.wirePathOf(ref) };
  }

  private decodeRef(data: WireRefData): InternalRef {
    // The reply-to ref of a remote ask (every ask that arrives carries one): its elements
    // are known from the id, so the path is not split (RemoteActorRef builds them on use).
    const askId = data.address === this.localNodeString ? -1 : askIdOfPath(data.path);
    if (askId >= 0) {
      const node = this.nodeOf(data.address);
      if (node === undefined) throw new InvalidAddressError(data.address, "not a node address");
      return new RemoteActorRef(this.core, this, node, undefined, askId, data.path);
    }
    const p = parseActorPath(data.path);
    if (p === undefined) throw new InvalidAddressError(data.path, "not an actor path");
    if (data.address === this.localNodeString)
      return this.core.resolveLocal(p.elements, p.uid) ?? this.missingLocal(data.path);
    const node = this.nodeOf(data.address);
    if (node === undefined) throw new InvalidAddressError(data.address, "not a node address");
    return new RemoteActorRef(this.core, this, node, p.elements, p.uid, data.path);
  }

  /**
   * parseNode with a cache: every ask that arrives carries its reply-to ref, whose node
   * is one of a few peers. Bounded by recipientCacheMax (cleared when full).
   */
  private nodeOf(address: string): WireNode | undefined {
    const cached = this.nodeCache.get(address);
    if (cached !== undefined) return cached;
    const node = parseNode(address);
    if (node === undefined) return undefined;
    if (this.nodeCache.size >= this.settings.recipientCacheMax) this.nodeCache.clear();
    this.nodeCache.set(address, node);
    return node;
  }

  private wirePathOf(ref: InternalRef): string {
    if (ref instanceof RemoteActorRef) return ref.wirePath;
    // formatActorPath(["temp", `$ask${id}`], id) without building the ActorPath: every
    // ask that leaves this node carries one.
    if (ref instanceof AskRef) return `${ASK_PATH_PREFIX}${ref.id}#${ref.id}`;
    const p = ref.path;
    return formatActorPath(p.elements, p.uid);
  }

  private remoteRefAt(node: WireNode, wirePath: string): RemoteActorRef | undefined {
    const p = parseActorPath(wirePath);
    return p === undefined
      ? undefined
      : new RemoteActorRef(this.core, this, node, p.elements, p.uid, wirePath);
  }

  private resolveRecipient(wirePath: string): InternalRef | undefined {
    const cached = this.recipientCache.get(wirePath);
    if (cached !== undefined && !cached.isTerminated) return cached;
    // A reply to an ask of this node (`/temp/$ask<id>#<id>`, one path per ask, so never
    // cached): looked up by its id, without splitting the path. Other spellings of a
    // temp path (uid 0) take the general way below.
    const askId = askIdOfPath(wirePath);
    if (askId >= 0) return this.core.asks.exportedById(askId);
    const p = parseActorPath(wirePath);
    if (p === undefined) return undefined;
    const ref = this.core.resolveLocal(p.elements, p.uid);
    if (ref instanceof ActorCell) {
      if (this.recipientCache.size >= this.settings.recipientCacheMax) this.recipientCache.clear();
      this.recipientCache.set(wirePath, ref);
    }
    return ref;
  }

  /** A stand-in for a local actor that no longer exists: everything sent is a dead letter. */
  private missingLocal(path: string): InternalRef {
    const core = this.core;
    const full = `${core.address}${path}`;
    return new MissingLocalRef(core, full);
  }

  private isQuarantined(hostPort: string, uid: bigint): boolean {
    const key = `${hostPort}#${uid}`;
    const until = this.quarantined.get(key);
    if (until === undefined) return false;
    if (until < this.clock.now()) {
      this.quarantined.delete(key);
      return false;
    }
    return true;
  }

  private seededNonce(): Uint8Array {
    const n = new Uint8Array(16);
    for (let i = 0; i < 16; i++) n[i] = this.random.nextInt(256);
    return n;
  }
}

const NO_BINDING = new Uint8Array(0);

function isLoopback(host: string): boolean {
  const h = normalizeHost(host);
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Safe default: a node reachable from other machines must authenticate its peers. With
 * neither a secret nor TLS, anyone who can reach the port could join and send messages,
 * so binding a non-loopback address needs `insecure: true` said out loud.
 */
function checkProtected(settings: Readonly<RemotingSettings>, transport: Transport): void {
  if (settings.insecure || isLoopback(settings.host)) return;
  if (remotingSecrets(settings).length > 0 || transport.protection !== undefined) return;
  throw new ConfigError(
    "remoting.secret",
    "(unset)",
    `a cluster secret (remoting.secret: a string of at least 16 characters, the same on every member) or TLS (the transport's tls options) when listening on the non-loopback address ${settings.host}; without either, anyone who can reach the port can join the cluster. Set remoting.insecure: true only on a network you trust completely (docs/security.md)`,
  );
}

/** Dead-letters everything; stands for a local actor path that resolves to nothing. */
class MissingLocalRef implements InternalRef<unknown> {
  constructor(
    readonly core: SystemCore,
    private readonly full: string,
  ) {}
  get path() {
    return this.core.deadLetters.path;
  }
  get isTerminated(): boolean {
    return true;
  }
  tell(message: unknown): void {
    this.core.deadLetter(message, this.full, "stopped" as DeadLetterReason);
  }
  sendSystem(message: SystemMessage): void {
    if (message.k === "watch")
      message.watcher.sendSystem({ k: "terminated", ref: this, failed: false, error: undefined });
  }
}
