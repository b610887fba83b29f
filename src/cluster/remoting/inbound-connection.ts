/**
 * InboundConnection: a connection a peer opened to us. It must start with a valid
 * HANDSHAKE_REQ within handshakeTimeoutMs; then it carries USER, SYSTEM and CONTROL
 * frames from that peer, and we write back HANDSHAKE_ACK/REJECT and SYSTEM_ACKs.
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
import { FrameType, FrameWriter } from "../../protocol/framing.js";
import {
  decodeHandshakeHello,
  encodeHandshakeReject,
  type HandshakeHello,
  PROTOCOL_VERSION,
  type RejectReason,
} from "../../protocol/handshake.js";
import { checkHandshake, rejectForDecodeError } from "../../protocol/handshake-check.js";
import { decodeSystemMessage, encodeSystemAck } from "../../protocol/system-message.js";
import { UserEnvelopeReader, type UserEnvelopeView } from "../../protocol/user-envelope-reader.js";
import type { RemotingContext } from "./remoting-context.js";
import { formatNode, parseNode, type WireNode } from "./wire-path.js";

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
  inboundClosed(connection: InboundConnection): void;
}

export class InboundConnection {
  private peer: Peer | null = null;
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
    this.decoder = new FrameDecoder({ frameSizeMaxBytes: host.settings.frameSizeMaxBytes });
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

  private get remoteLabel(): string {
    const p = this.peer;
    return p === null ? `${this.conn.remote.host}:${this.conn.remote.port}` : p.node.hostPort;
  }

  private onData(chunk: Uint8Array): void {
    if (this.closed) return;
    const error = this.decoder.pushTo(chunk, this.frameSink);
    if (error !== undefined && !this.closed) {
      this.host.stats.badFrames++;
      this.fail(describeFrameDecodeError(error));
    }
  }

  private onFrame(type: number, payload: Uint8Array): void {
    if (this.peer === null) {
      if (type === FrameType.HANDSHAKE_REQ) this.onHandshake(payload);
      else {
        this.host.stats.badFrames++;
        this.fail(`frame type ${type} before the handshake`);
      }
      return;
    }
    switch (type) {
      case FrameType.USER:
        this.onUser(this.peer, payload, 0, payload.length);
        return;
      case FrameType.SYSTEM:
        this.onSystem(this.peer, payload);
        return;
      case FrameType.CONTROL:
        this.host.stats.controlFramesIn++;
        this.host.onControl(this.peer, payload);
        return;
      default:
        this.host.stats.badFrames++;
        this.fail(`unexpected frame type ${type} on an inbound connection`);
    }
  }

  private onHandshake(payload: Uint8Array): void {
    const hello = decodeHandshakeHello(payload);
    const decision = hello.ok
      ? checkHandshake(this.host.handshakeLocal, hello.value, this.host.proofVerifier)
      : rejectForDecodeError(hello.error, this.remoteLabel);
    if (decision.type === "reject") {
      this.host.stats.handshakeRejectsSent++;
      this.host.error("refusing inbound connection", {
        from: this.remoteLabel,
        reason: decision.logMessage,
      });
      this.reject(decision.reason);
      return;
    }
    const req = hello.ok ? hello.value : undefined;
    if (req === undefined) return;
    const node = parseNode(formatNode(req.systemName, req.address.host, req.address.port));
    if (node === undefined) {
      this.fail("handshake carries an invalid address");
      return;
    }
    this.peer = { node, uid: req.uid };
    this.handshakeTimer?.dispose();
    this.handshakeTimer = null;
    this.writer.append(FrameType.HANDSHAKE_ACK, this.host.handshakeAck(req as HandshakeHello));
    this.conn.send(this.writer.take());
    this.host.peerIncarnation(node, req.uid);
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
    this.host.stats.userMessagesIn++;
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
