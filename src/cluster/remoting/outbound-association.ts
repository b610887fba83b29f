/**
 * OutboundAssociation: this node's sending side towards one peer address (host:port).
 * One lazily opened connection per peer; on it we send HANDSHAKE_REQ, answer the peer's
 * HANDSHAKE_ACK with HANDSHAKE_CONFIRM (protocol/handshake-check.ts), then send USER,
 * SYSTEM and CONTROL frames, and read back HANDSHAKE_ACK/REJECT and SYSTEM_ACK.
 *
 * - Lanes: control and system frames are written before user frames on every flush, and
 *   user frames only while the socket is not backpressured, so heartbeats and system
 *   messages are never stuck behind a bulk queue we still hold. Within the control lane,
 *   urgent frames (heartbeat replies: a busy member must still answer its failure
 *   detectors) are written before the others.
 * - Coalescing: sends only enqueue; one flush per event-loop turn (Scheduler.defer)
 *   writes every queued frame in one `send`.
 * - Bounds: user queue `outboundQueueMax` (overflow -> dead letters, counted), control
 *   queue `controlQueueMax` (overflow drops the oldest), system buffer
 *   `systemMessageBufferMax` (overflow quarantines the peer).
 * - Reconnect: capped exponential backoff with jitter while there is work; user messages
 *   queued across a reconnect keep their order; unacknowledged system messages are
 *   resent on every new connection to the same incarnation.
 * - Incarnations: the peer's uid is learned from HANDSHAKE_ACK. A different uid means the
 *   peer restarted: the old incarnation is reported gone and its system state dropped.
 */
import { Deque } from "../../base/deque.js";
import type { Disposable } from "../../base/disposable.js";
import { backoffMs } from "../../core/association/backoff.js";
import { SystemMessageSender } from "../../core/association/system-channel.js";
import type { CloseReason, Connection } from "../../ports/transport.js";
import { describeFrameDecodeError, FrameDecoder } from "../../protocol/frame-decoder.js";
import { type FramePayload, FrameType, FrameWriter } from "../../protocol/framing.js";
import {
  decodeHandshakeHello,
  decodeHandshakeReject,
  describePeer,
  encodeHandshakeConfirm,
  encodeHandshakeHello,
  encodeHandshakeReject,
  PROTOCOL_VERSION,
} from "../../protocol/handshake.js";
import {
  type InitiatorState,
  onHandshakeAck,
  startHandshake,
} from "../../protocol/handshake-check.js";
import { decodeSystemAck, encodeSystemMessage } from "../../protocol/system-message.js";
import {
  type AssociationFailure,
  connectFailureOf,
  handshakeFailureOf,
} from "./association-failure.js";
import { quarantinedBy, type RemotingContext } from "./remoting-context.js";
import type { WireNode } from "./wire-path.js";

/** Where an outbound association is (idle: nothing to send and no connection). */
/** First frame buffer of an outbound association (grows, see FrameWriter). */
const OUTBOUND_BUFFER_SIZE_INITIAL_BYTES = 4096;

export type AssociationState = "idle" | "connecting" | "handshaking" | "active" | "backoff";

/** Every state, in lifecycle order (the metrics show each). */
export const ASSOCIATION_STATES: readonly AssociationState[] = [
  "idle",
  "connecting",
  "handshaking",
  "active",
  "backoff",
];

type State = AssociationState;

/** A queued CONTROL frame: its kind byte and body. */
interface ControlFrame {
  readonly kind: number;
  readonly payload: FramePayload;
}

export class OutboundAssociation {
  private state: State = "idle";
  private conn: Connection | null = null;
  private decoder: FrameDecoder | null = null;
  private readonly userQueue = new Deque<Uint8Array>();
  private readonly controlQueue = new Deque<ControlFrame>();
  /** Control frames written ahead of the others (heartbeat replies). */
  private readonly urgentQueue = new Deque<ControlFrame>();
  private readonly system: SystemMessageSender;
  private readonly writer: FrameWriter;
  /** Peer incarnation learned at handshake; survives reconnects to the same incarnation. */
  remoteUid: bigint | undefined;
  /** Reconnect attempts of this association (its part of RemotingStats.reconnects). */
  reconnects = 0;
  private attempt = 0;
  private flushScheduled = false;
  private timer: Disposable | null = null;
  private handshake: InitiatorState | undefined;
  private backpressured = false;
  private closedForGood = false;
  private readonly flushBound = () => this.flush();

  constructor(
    private readonly ctx: RemotingContext,
    readonly node: WireNode,
  ) {
    this.system = new SystemMessageSender(ctx.settings.systemMessageBufferMax);
    // Small first buffer: every association starts with a handshake of about 100 bytes,
    // and many (heartbeats, gossip) never send more than a few KiB at once; a bulk
    // sender's later batches are sized from the last one (FrameWriter).
    this.writer = new FrameWriter({
      frameSizeMaxBytes: ctx.settings.frameSizeMaxBytes,
      bufferSizeInitialBytes: OUTBOUND_BUFFER_SIZE_INITIAL_BYTES,
    });
  }

  get isActive(): boolean {
    return this.state === "active";
  }
  get currentState(): AssociationState {
    return this.state;
  }
  get queuedUserMessages(): number {
    return this.userQueue.length;
  }
  get unackedSystemMessages(): number {
    return this.system.size;
  }
  /** The socket address the active connection reached, if active. */
  get remoteHost(): string | undefined {
    return this.state === "active" ? this.conn?.remote.host : undefined;
  }

  // ------------------------------------------------------------------ sending

  /** Queues an encoded USER payload; false when the queue is full (caller dead-letters). */
  sendUser(payload: Uint8Array): boolean {
    if (this.userQueue.length >= this.ctx.settings.outboundQueueMax) return false;
    this.userQueue.push(payload);
    this.kick();
    return true;
  }

  /**
   * Queues a CONTROL payload (unreliable lane; oldest dropped on overflow); `urgent`
   * ones (heartbeat replies) go out before the other control frames.
   */
  sendControl(kind: number, payload: FramePayload, urgent = false): void {
    const q = urgent ? this.urgentQueue : this.controlQueue;
    if (q.length >= this.ctx.settings.controlQueueMax) {
      q.shift();
      this.ctx.stats.controlDropped++;
    }
    q.push({ kind, payload });
    this.kick();
  }

  /** Queues a system message for reliable delivery; false = buffer overflow. */
  sendSystem(payload: Uint8Array): boolean {
    if (this.system.enqueue(payload, this.ctx.clock.now()) === undefined) return false;
    this.kick();
    if (this.state === "active" && this.timer === null) this.armResendTimer();
    return true;
  }

  private kick(): void {
    if (this.closedForGood) return;
    if (this.state === "idle") this.connect();
    else if (this.state === "active") this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    this.ctx.scheduler.defer(this.flushBound);
  }

  /** Writes queued frames: control, then due system messages, then user messages. */
  flush(): void {
    this.flushScheduled = false;
    const conn = this.conn;
    if (this.state !== "active" || conn === null) return;
    const w = this.writer;
    const stats = this.ctx.stats;
    // per lane: frames and bytes as the differences of the writer's counts (per flush,
    // not per message; the writer's batch starts empty here)
    for (let c = this.urgentQueue.shift(); c !== undefined; c = this.urgentQueue.shift())
      w.appendTagged(FrameType.CONTROL, c.kind, c.payload);
    for (let c = this.controlQueue.shift(); c !== undefined; c = this.controlQueue.shift())
      w.appendTagged(FrameType.CONTROL, c.kind, c.payload);
    stats.controlFramesOut += w.pendingFrames;
    stats.controlBytesOut += w.pendingBytes;
    let frames = w.pendingFrames;
    let bytes = w.pendingBytes;
    const now = this.ctx.clock.now();
    for (const m of this.system.due(now, this.ctx.settings.systemMessageResendIntervalMs)) {
      w.append(FrameType.SYSTEM, encodeSystemMessage(m.seq, m.payload));
      m.lastSentAt = now;
    }
    stats.systemMessagesOut += w.pendingFrames - frames;
    stats.systemBytesOut += w.pendingBytes - bytes;
    frames = w.pendingFrames;
    bytes = w.pendingBytes;
    if (!this.backpressured) {
      const budget = this.ctx.settings.flushBytesMax;
      for (
        let u = this.userQueue.peek();
        u !== undefined && w.pendingBytes < budget;
        u = this.userQueue.peek()
      ) {
        this.userQueue.shift();
        w.append(FrameType.USER, u);
      }
    }
    stats.userMessagesOut += w.pendingFrames - frames;
    stats.userBytesOut += w.pendingBytes - bytes;
    if (w.pendingBytes === 0) return;
    stats.writes++;
    if (!conn.send(w.take())) this.backpressured = true;
    if (!this.backpressured && this.userQueue.length > 0) this.scheduleFlush();
  }

  // ------------------------------------------------------------------ connection lifecycle

  private connect(): void {
    this.state = "connecting";
    const { host, port } = this.node;
    this.ctx.transport
      .connect({ host, port }, { timeoutMs: this.ctx.settings.connectTimeoutMs })
      .then(
        (conn) => this.onConnected(conn),
        (error: unknown) => this.onConnectFailed(error),
      );
  }

  private onConnected(conn: Connection): void {
    if (this.closedForGood) {
      conn.destroy();
      return;
    }
    this.conn = conn;
    const s = this.ctx.settings;
    this.decoder = new FrameDecoder({
      frameSizeMaxBytes: Math.min(s.handshakeFrameSizeMaxBytes, s.frameSizeMaxBytes),
    });
    this.state = "handshaking";
    conn.setHandlers({
      onData: (chunk) => this.onData(conn, chunk),
      onDrain: () => {
        this.backpressured = false;
        this.scheduleFlush();
      },
      onClose: (reason) => this.onClosed(conn, reason),
    });
    const { req, state } = startHandshake(this.ctx.selfIdentity, this.ctx.handshakeNonce());
    this.handshake = state;
    this.writer.append(FrameType.HANDSHAKE_REQ, encodeHandshakeHello(req));
    conn.send(this.writer.take());
    this.armTimer(this.ctx.settings.handshakeTimeoutMs, () => {
      if (this.state !== "handshaking" || this.conn !== conn) return;
      this.ctx.warn("handshake timed out", { peer: this.node.hostPort });
      this.failed({
        cause: "handshake-timeout",
        detail: `no answer within ${this.ctx.settings.handshakeTimeoutMs} ms`,
      });
      conn.destroy();
    });
  }

  private onConnectFailed(error: unknown): void {
    if (this.closedForGood) return;
    this.ctx.debug("connect failed", { peer: this.node.hostPort, error });
    this.failed(connectFailureOf(error));
    this.enterBackoff();
  }

  private onData(conn: Connection, chunk: Uint8Array): void {
    if (this.conn !== conn || this.decoder === null) return;
    const { frames, error } = this.decoder.push(chunk);
    for (const f of frames) {
      if (this.conn !== conn) return;
      this.onFrame(conn, f.type, f.payload);
    }
    if (error !== undefined) {
      this.ctx.badInput("bad frame from peer", this.node.hostPort, describeFrameDecodeError(error));
      conn.destroy();
    }
  }

  private onFrame(conn: Connection, type: number, payload: Uint8Array): void {
    switch (type) {
      case FrameType.HANDSHAKE_ACK:
        if (this.state === "handshaking") this.onHandshakeAck(conn, payload);
        else {
          this.ctx.badInput("unexpected handshake ack", this.node.hostPort, "already associated");
          conn.destroy();
        }
        return;
      case FrameType.HANDSHAKE_REJECT: {
        const r = decodeHandshakeReject(payload);
        const why = r.ok ? `${r.value.reason} (by ${describePeer(r.value)})` : "malformed reject";
        this.ctx.error("peer refused the handshake", { peer: this.node.hostPort, reason: why });
        this.ctx.stats.handshakeRejectsReceived++;
        if (r.ok) quarantinedBy(this.ctx, r.value);
        this.failed(
          r.ok
            ? handshakeFailureOf(
                r.value.reason,
                `refused by ${describePeer(r.value)}: ${r.value.reason}`,
              )
            : { cause: "handshake-refused", detail: why },
        );
        conn.destroy();
        return;
      }
      case FrameType.SYSTEM_ACK: {
        const a = decodeSystemAck(payload);
        if (a.ok) this.system.ack(a.value);
        else {
          this.ctx.badInput("malformed system ack", this.node.hostPort, a.error.detail);
          conn.destroy();
        }
        return;
      }
      default:
        this.ctx.badInput(
          "unexpected frame on outbound connection",
          this.node.hostPort,
          `type ${type}`,
        );
        conn.destroy();
    }
  }

  private onHandshakeAck(conn: Connection, payload: Uint8Array): void {
    const hello = decodeHandshakeHello(payload);
    if (!hello.ok) {
      this.ctx.badInput("malformed handshake ack", this.node.hostPort, hello.error.detail);
      conn.destroy();
      return;
    }
    const state = this.handshake;
    const decision =
      state === undefined
        ? undefined
        : onHandshakeAck(
            this.ctx.handshakePolicy,
            state,
            hello.value,
            this.ctx.channelBinding(conn),
          );
    if (decision === undefined || decision.type === "reject") {
      this.ctx.error("refusing peer", {
        peer: this.node.hostPort,
        reason: decision?.logMessage ?? "handshake ack before a request",
      });
      this.ctx.stats.handshakeRejectsSent++;
      if (decision === undefined) conn.destroy();
      else {
        this.failed(handshakeFailureOf(decision.reason, decision.logMessage));
        // Tell the acceptor why, so both logs show the refusal; then close.
        this.writer.append(
          FrameType.HANDSHAKE_REJECT,
          encodeHandshakeReject({
            protocolVersion: PROTOCOL_VERSION,
            reason: decision.reason,
            ...this.ctx.selfIdentity,
          }),
        );
        conn.send(this.writer.take());
        conn.close();
      }
      return;
    }
    this.handshake = undefined;
    // CONFIRM goes first: the acceptor delivers nothing of ours before it verifies it.
    this.writer.append(FrameType.HANDSHAKE_CONFIRM, encodeHandshakeConfirm(decision.confirm));
    conn.send(this.writer.take());
    this.decoder?.setFrameSizeMax(this.ctx.settings.frameSizeMaxBytes);
    const uid = decision.peer.uid;
    // A new uid means the peer restarted: system messages for the old incarnation are void.
    if (this.remoteUid !== undefined && this.remoteUid !== uid) this.system.clear();
    this.remoteUid = uid;
    this.ctx.peerIncarnation(this.node, uid);
    this.state = "active";
    this.attempt = 0;
    this.backpressured = false;
    this.cancelTimer();
    this.system.resetSent();
    if (this.system.size > 0) this.armResendTimer();
    this.ctx.associationEvent?.({ type: "established", hostPort: this.node.hostPort });
    this.flush();
  }

  private failed(failure: AssociationFailure): void {
    this.ctx.associationEvent?.({ type: "failed", hostPort: this.node.hostPort, failure });
  }

  private onClosed(conn: Connection, reason: CloseReason): void {
    if (this.conn !== conn) return;
    this.conn = null;
    this.decoder = null;
    this.cancelTimer();
    if (this.closedForGood) return;
    this.ctx.debug("outbound connection closed", {
      peer: this.node.hostPort,
      reason: reason.type === "error" ? reason.error.message : reason.type,
    });
    this.enterBackoff();
  }

  /**
   * The peer just completed a handshake on a connection it opened to this node: it is up
   * (again). A reconnect waiting out its backoff starts now, with a fresh attempt count, so
   * what is queued for a restarted peer (e.g. the answer to its InitJoin) does not wait for
   * a timer armed while it was down: the backoff may have grown to reconnectBackoffMaxMs.
   */
  peerReachable(): void {
    if (this.state !== "backoff" || this.closedForGood) return;
    this.cancelTimer();
    this.attempt = 0;
    this.reconnectIfPending();
  }

  /** Out of backoff: reconnects when anything is queued, else goes idle. */
  private reconnectIfPending(): void {
    if (
      this.userQueue.length > 0 ||
      this.system.size > 0 ||
      this.controlQueue.length > 0 ||
      this.urgentQueue.length > 0
    ) {
      this.ctx.stats.reconnects++;
      this.reconnects++;
      this.connect();
    } else this.state = "idle";
  }

  private enterBackoff(): void {
    this.state = "backoff";
    const s = this.ctx.settings;
    const delay = backoffMs(
      {
        minMs: s.reconnectBackoffMinMs,
        maxMs: s.reconnectBackoffMaxMs,
        randomFactor: s.reconnectBackoffRandomFactor,
      },
      this.attempt++,
      this.ctx.random.next(),
    );
    this.armTimer(delay, () => {
      if (this.state !== "backoff") return;
      this.checkGiveUp();
      if (this.closedForGood) return;
      this.reconnectIfPending();
    });
  }

  /**
   * While active and a system message is unacknowledged: resend what is due and check the
   * give-up limit, once per systemMessageResendIntervalMs. Armed when the first one is
   * queued (sendSystem) or when the association becomes active with some queued; it stops
   * when none is left, so an association without system messages (most of a large
   * cluster's: gossip and heartbeats only) has no timer.
   */
  private armResendTimer(): void {
    this.armTimer(this.ctx.settings.systemMessageResendIntervalMs, () => {
      if (this.state !== "active") return;
      this.checkGiveUp();
      if (this.closedForGood || this.system.size === 0) return;
      this.scheduleFlush();
      this.armResendTimer();
    });
  }

  private checkGiveUp(): void {
    const age = this.system.oldestAgeMs(this.ctx.clock.now());
    if (age < this.ctx.settings.giveUpSystemMessageAfterMs || this.remoteUid === undefined) return;
    this.ctx.quarantine(
      this.node,
      this.remoteUid,
      `system message unacknowledged for ${Math.round(age)} ms`,
    );
  }

  private armTimer(delayMs: number, fn: () => void): void {
    this.cancelTimer();
    this.timer = this.ctx.scheduler.schedule(delayMs, () => {
      this.timer = null;
      fn();
    });
  }

  private cancelTimer(): void {
    this.timer?.dispose();
    this.timer = null;
  }

  /** Drops everything queued (returning user payloads for dead-lettering) and resets. */
  reset(): Uint8Array[] {
    const dropped: Uint8Array[] = [];
    for (let u = this.userQueue.shift(); u !== undefined; u = this.userQueue.shift())
      dropped.push(u);
    this.controlQueue.clear();
    this.urgentQueue.clear();
    this.system.clear();
    this.remoteUid = undefined;
    this.cancelTimer();
    const conn = this.conn;
    this.conn = null;
    this.decoder = null;
    this.state = "idle";
    conn?.destroy();
    return dropped;
  }

  /** Stops for good (remoting shutting down). */
  close(): void {
    this.closedForGood = true;
    this.reset();
  }
}
