/**
 * InboundConnection: a connection a peer opened to us. It must complete the handshake
 * (REQ, our ACK with a fresh nonce, its CONFIRM; protocol/handshake-check.ts) within
 * handshakeTimeoutMs; then it carries USER, SYSTEM and CONTROL frames from that peer,
 * and we write back HANDSHAKE_ACK/REJECT and SYSTEM_ACKs.
 *
 * Before the handshake completes, frames above handshakeFrameSizeMaxBytes are refused
 * (the decoder never buffers more than that for an unauthenticated peer) and nothing the
 * peer sends reaches an actor.
 *
 * Bad input (garbage, truncated or oversized frames, unknown frame types or serializer
 * ids, a wrong handshake) closes this connection only; it is logged at a rate limit and
 * counted, and nothing else is disturbed. System messages are delivered exactly once per
 * peer incarnation (the receiver state outlives the connection) and acked cumulatively,
 * one ack per flush.
 */
import type { Disposable } from "../../base/disposable.js";
import type { SystemMessageReceiver } from "../../core/association/system-channel.js";
import type { CloseReason, Connection } from "../../ports/transport.js";
import {
  describeFrameDecodeError,
  FrameDecoder,
  type FrameSink,
} from "../../protocol/frame-decoder.js";
import {
  FRAME_LENGTH_PREFIX_BYTES,
  FRAME_TYPE_BYTES,
  FrameType,
  FrameWriter,
} from "../../protocol/framing.js";
import {
  decodeHandshakeConfirm,
  decodeHandshakeHello,
  decodeHandshakeReject,
  describePeer,
  encodeHandshakeHello,
  encodeHandshakeReject,
  PROTOCOL_VERSION,
  type RejectReason,
} from "../../protocol/handshake.js";
import {
  type AcceptorChallenge,
  type HandshakeRefusal,
  onHandshakeConfirm,
  onHandshakeRequest,
  rejectForDecodeError,
} from "../../protocol/handshake-check.js";
import { decodeSystemMessage, encodeSystemAck } from "../../protocol/system-message.js";
import { UserEnvelopeReader, type UserEnvelopeView } from "../../protocol/user-envelope-reader.js";
import { quarantinedBy, type RemotingContext } from "./remoting-context.js";
import { formatNode, parseNode, type WireNode } from "./wire-path.js";

/** What a frame adds to its payload on the wire (the byte counts of remoting.stats). */
const FRAME_OVERHEAD_BYTES = FRAME_LENGTH_PREFIX_BYTES + FRAME_TYPE_BYTES;

/** A handshaked peer incarnation. */
export interface Peer {
  readonly node: WireNode;
  readonly uid: bigint;
}

export interface InboundHost extends RemotingContext {
  readonly localSystemName: string;
  readonly localUid: bigint;
  /**
   * Handles a USER envelope; false means the bytes were bad (close the connection). The
   * view is reused for the next message: read it before returning.
   */
  onUserEnvelope(peer: Peer, envelope: UserEnvelopeView): boolean;
  /** Handles a delivered system message payload; false = bad payload. */
  onSystemPayload(peer: Peer, payload: Uint8Array): boolean;
  onControl(peer: Peer, payload: Uint8Array): void;
  receiverFor(peer: Peer): SystemMessageReceiver;
  /** The connection completed the handshake (it no longer counts as unauthenticated). */
  inboundAuthenticated(connection: InboundConnection): void;
  inboundClosed(connection: InboundConnection): void;
}

export class InboundConnection {
  private peer: Peer | null = null;
  /** Set between our ACK and the peer's CONFIRM. */
  private challenge: AcceptorChallenge | null = null;
  private readonly decoder: FrameDecoder;
  private readonly writer: FrameWriter;
  private handshakeTimer: Disposable | null;
  private ackScheduled = false;
  private closed = false;
  /** Created with the first USER frame: one reused decoder per connection. */
  private envelopes: UserEnvelopeReader | undefined;
  /**
   * USER frames after the handshake (the bulk) go straight to `onUser` as a range of the
   * chunk: no view or frame object per message. Everything else takes `onFrame`.
   */
  private readonly frameSink: FrameSink = {
    onFrame: (type, source, start, end) => {
      if (this.closed) return;
      const peer = this.peer;
      if (type === FrameType.USER && peer !== null) this.onUser(peer, source, start, end);
      else this.onFrame(type, source.subarray(start, end));
    },
  };

  constructor(
    private readonly host: InboundHost,
    private readonly conn: Connection,
  ) {
    const s = host.settings;
    this.decoder = new FrameDecoder({
      frameSizeMaxBytes: Math.min(s.handshakeFrameSizeMaxBytes, s.frameSizeMaxBytes),
    });
    // This side only writes the handshake answer and acks: a small buffer suffices.
    this.writer = new FrameWriter({
      frameSizeMaxBytes: host.settings.frameSizeMaxBytes,
      bufferSizeInitialBytes: 4096,
    });
    host.stats.inboundConnections++;
    conn.setHandlers({
      onData: (chunk) => this.onData(chunk),
      onDrain: () => {},
      onClose: (reason) => this.onClose(reason),
    });
    this.handshakeTimer = host.scheduler.schedule(host.settings.handshakeTimeoutMs, () => {
      this.handshakeTimer = null;
      if (this.peer !== null || this.closed) return;
      host.stats.handshakeTimeouts++;
      this.fail("no handshake within handshakeTimeoutMs");
    });
  }

  get remotePeer(): Peer | null {
    return this.peer;
  }

  /** The socket address the connection comes from. */
  get remoteHost(): string {
    return this.conn.remote.host;
  }

  private get remoteLabel(): string {
    const p = this.peer;
    return p === null ? `${this.conn.remote.host}:${this.conn.remote.port}` : p.node.hostPort;
  }

  private onData(chunk: Uint8Array): void {
    if (this.closed) return;
    const error = this.decoder.pushTo(chunk, this.frameSink);
    if (error !== undefined && !this.closed) {
      this.host.stats.badFrames++;
      const stage =
        this.peer === null ? " (the handshakeFrameSizeMaxBytes bound: before the handshake)" : "";
      this.fail(`${describeFrameDecodeError(error)}${stage}`);
    }
  }

  private onFrame(type: number, payload: Uint8Array): void {
    if (this.peer === null) {
      if (type === FrameType.HANDSHAKE_REQ && this.challenge === null) this.onRequest(payload);
      else if (type === FrameType.HANDSHAKE_CONFIRM && this.challenge !== null)
        this.onConfirm(this.challenge, payload);
      else if (type === FrameType.HANDSHAKE_REJECT && this.challenge !== null)
        this.onRefused(payload);
      else {
        this.host.stats.badFrames++;
        this.fail(`frame type ${type} before the handshake completed`);
      }
      return;
    }
    switch (type) {
      case FrameType.USER:
        this.onUser(this.peer, payload, 0, payload.length);
        return;
      case FrameType.SYSTEM:
        this.host.stats.systemBytesIn += FRAME_OVERHEAD_BYTES + payload.length;
        this.onSystem(this.peer, payload);
        return;
      case FrameType.CONTROL:
        this.host.stats.controlFramesIn++;
        this.host.stats.controlBytesIn += FRAME_OVERHEAD_BYTES + payload.length;
        this.host.onControl(this.peer, payload);
        return;
      default:
        this.host.stats.badFrames++;
        this.fail(`unexpected frame type ${type} on an inbound connection`);
    }
  }

  private onRequest(payload: Uint8Array): void {
    const hello = decodeHandshakeHello(payload);
    if (!hello.ok) {
      this.refuse(rejectForDecodeError(hello.error, this.remoteLabel));
      return;
    }
    const step = onHandshakeRequest(
      this.host.handshakePolicy,
      this.host.selfIdentity,
      hello.value,
      {
        nonce: this.host.handshakeNonce(),
        binding: this.host.channelBinding(this.conn),
        sourceHost: this.conn.remote.host,
      },
    );
    if (step.type === "reject") {
      this.refuse(step);
      return;
    }
    this.challenge = step.state;
    this.writer.append(FrameType.HANDSHAKE_ACK, encodeHandshakeHello(step.ack));
    this.conn.send(this.writer.take());
  }

  private onConfirm(challenge: AcceptorChallenge, payload: Uint8Array): void {
    const confirm = decodeHandshakeConfirm(payload);
    if (!confirm.ok) {
      this.refuse(rejectForDecodeError(confirm.error, this.remoteLabel));
      return;
    }
    const step = onHandshakeConfirm(this.host.handshakePolicy, challenge, confirm.value);
    if (step.type === "reject") {
      this.refuse(step);
      return;
    }
    const { systemName, address, uid } = step.peer;
    const node = parseNode(formatNode(systemName, address.host, address.port));
    if (node === undefined) {
      this.fail("handshake carries an invalid address");
      return;
    }
    this.challenge = null;
    this.peer = { node, uid };
    this.handshakeTimer?.dispose();
    this.handshakeTimer = null;
    this.decoder.setFrameSizeMax(this.host.settings.frameSizeMaxBytes);
    this.host.inboundAuthenticated(this);
    this.host.peerIncarnation(node, uid);
  }

  /** The connecting side refused our ACK (wrong secret, version, system, tombstone). */
  private onRefused(payload: Uint8Array): void {
    const r = decodeHandshakeReject(payload);
    this.host.stats.handshakeRejectsReceived++;
    if (r.ok) quarantinedBy(this.host, r.value);
    this.host.badInput(
      "peer refused the handshake",
      this.remoteLabel,
      r.ok ? `${r.value.reason} (by ${describePeer(r.value)})` : "malformed reject",
    );
    this.closed = true;
    this.conn.destroy();
  }

  private refuse(decision: HandshakeRefusal): void {
    this.host.stats.handshakeRejectsSent++;
    this.host.badInput("refusing inbound connection", this.remoteLabel, decision.logMessage);
    this.reject(decision.reason);
  }

  private reject(reason: RejectReason): void {
    const payload = encodeHandshakeReject({
      protocolVersion: PROTOCOL_VERSION,
      reason,
      systemName: this.host.localSystemName,
      address: { host: this.host.settings.canonicalHost, port: this.conn.local.port },
      uid: this.host.localUid,
    });
    this.writer.append(FrameType.HANDSHAKE_REJECT, payload);
    this.conn.send(this.writer.take());
    this.closed = true;
    this.conn.close();
  }

  /** A USER payload: `source[start, end)`. */
  private onUser(peer: Peer, source: Uint8Array, start: number, end: number): void {
    this.envelopes ??= new UserEnvelopeReader();
    const env = this.envelopes;
    const error = env.read(source, start, end);
    if (error !== undefined) {
      this.host.stats.badMessages++;
      this.fail(`malformed user envelope: ${error.detail}`);
      return;
    }
    const stats = this.host.stats;
    stats.userMessagesIn++;
    stats.userBytesIn += FRAME_OVERHEAD_BYTES + end - start;
    const ok = this.host.onUserEnvelope(peer, env);
    env.release();
    if (!ok) this.fail("undecodable user message");
  }

  private onSystem(peer: Peer, payload: Uint8Array): void {
    const m = decodeSystemMessage(payload);
    if (!m.ok) {
      this.host.stats.badMessages++;
      this.fail(`malformed system message: ${m.error.detail}`);
      return;
    }
    const receiver = this.host.receiverFor(peer);
    const verdict = receiver.receive(m.value.seq);
    if (verdict === "deliver") {
      this.host.stats.systemMessagesIn++;
      if (!this.host.onSystemPayload(peer, m.value.message)) {
        this.fail("undecodable system message");
        return;
      }
    }
    this.scheduleAck(receiver);
  }

  private scheduleAck(receiver: SystemMessageReceiver): void {
    if (this.ackScheduled) return;
    this.ackScheduled = true;
    this.host.scheduler.defer(() => {
      this.ackScheduled = false;
      if (this.closed) return;
      this.writer.append(FrameType.SYSTEM_ACK, encodeSystemAck(receiver.ackSeq));
      this.conn.send(this.writer.take());
    });
  }

  private fail(reason: string): void {
    if (this.closed) return;
    this.host.badInput("closing inbound connection", this.remoteLabel, reason);
    this.closed = true;
    this.conn.destroy();
  }

  private onClose(_reason: CloseReason): void {
    if (!this.closed && this.decoder.bufferedBytes > 0) {
      this.host.stats.badFrames++;
      this.host.badInput(
        "inbound connection closed",
        this.remoteLabel,
        "closed in the middle of a frame",
      );
    }
    this.closed = true;
    this.handshakeTimer?.dispose();
    this.handshakeTimer = null;
    this.host.inboundClosed(this);
  }

  /** Closes at once (remoting shutting down, or the peer was quarantined). */
  destroy(): void {
    this.closed = true;
    this.conn.destroy();
  }
}
