/**
 * A simulated TCP connection: two ends (client, server) and two pipes (one per
 * direction), plus the partition timer.
 *
 * Invariants:
 * - Each direction is an ordered, gap-free stream (see pipe.ts); a fault never removes
 *   bytes from the middle of a live stream — it ends the connection instead. So loss
 *   (`lossProbability`) is modelled as a reset of the whole connection when the lost
 *   segment would have arrived, on both sides at once; duplication never happens inside
 *   a stream (message duplication arises above, when remoting resends after a reset).
 * - The server end is "pending" until the `open` segment (the handshake's final ACK)
 *   arrives; only then does the listener see the connection. Data from the client
 *   follows `open` in the same pipe, so it can never reach the server before the accept.
 * - While either direction is blocked by a partition a timer runs; if the block lasts
 *   `partitionResetAfterMs` both ends are closed with a timeout error (both kernels give
 *   up retransmitting). Healing first cancels the timer and resumes held pipes.
 * - When both ends are closed the connection is finished: pending events are cancelled
 *   and the network forgets it.
 */
import type { Disposable } from "../../../base/disposable.js";
import type { CloseReason, HostPort } from "../../../ports/transport.js";
import type { Link } from "./link.js";
import {
  connectionReset,
  describeCloseReason,
  formatAddress,
  type ResetCause,
} from "./net-errors.js";
import type { NetEvents } from "./net-events.js";
import { Pipe, type PipeHost } from "./pipe.js";
import { NO_BYTES, type Segment } from "./segment.js";
import {
  CLIENT,
  type EndpointOwner,
  type EndpointWire,
  otherSide,
  SERVER,
  type Side,
  SimEndpoint,
} from "./sim-endpoint.js";

/** What a connection needs from the network. */
export interface ConnectionHost extends PipeHost {
  readonly partitionResetAfterMs: number;
  readonly sendBufferHighWaterBytes: number;
  readonly recordSegments: boolean;
  schedule(delayMs: number, fn: () => void): Disposable;
  record(kind: string, detail: unknown): void;
  /** The connection is finished. */
  forget(connection: VirtualConnection): void;
}

/** Who accepts the connection on the server side. */
export interface Acceptor {
  /** Whether the listener still accepts (open, owning transport alive). */
  readonly isAccepting: boolean;
  accept(endpoint: SimEndpoint): void;
}

/** One end's identity when the connection is created. */
export interface EndSpec {
  readonly id: number;
  readonly nodeName: string;
  readonly local: HostPort;
  readonly remote: HostPort;
  readonly owner: EndpointOwner;
}

/** A connection between two simulated nodes. */
export class VirtualConnection implements EndpointWire {
  readonly ends: readonly [SimEndpoint, SimEndpoint];
  /** pipes[side] carries bytes sent by ends[side]. */
  private readonly pipes: readonly [Pipe, Pipe];
  private partitionTimer: Disposable | undefined;
  private finished = false;

  constructor(
    private readonly host: ConnectionHost,
    readonly no: number,
    links: readonly [Link, Link],
    specs: readonly [EndSpec, EndSpec],
    private readonly acceptor: Acceptor,
  ) {
    this.ends = [
      new SimEndpoint(this, CLIENT, { ...specs[CLIENT], state: "open" }),
      new SimEndpoint(this, SERVER, { ...specs[SERVER], state: "pending" }),
    ];
    this.pipes = [
      new Pipe(links[CLIENT], host, (segment) => this.onArrive(SERVER, segment)),
      new Pipe(links[SERVER], host, (segment) => this.onArrive(CLIENT, segment)),
    ];
  }

  get events(): NetEvents {
    return this.host;
  }

  get sendBufferHighWaterBytes(): number {
    return this.host.sendBufferHighWaterBytes;
  }

  /** Completes the handshake from the client's side: the final ACK goes out. */
  start(): void {
    const [client, server] = this.ends;
    this.host.record("open", {
      conn: this.no,
      client: `${client.nodeName} ${formatAddress(client.local)}`,
      server: `${server.nodeName} ${formatAddress(server.local)}`,
    });
    this.pipes[CLIENT].push("open", NO_BYTES, this.host.now, false);
    this.onPartitionChanged();
  }

  transmit(side: Side, kind: "data" | "fin", bytes: Uint8Array): Segment {
    const link = this.pipes[side].link;
    const txEnd = link.reserve(this.host.now, bytes.length);
    const lost = kind === "data" && link.drawLoss();
    return this.pipes[side].push(kind, bytes, txEnd, lost);
  }

  pushControl(side: Side, kind: "fin" | "rst"): void {
    this.pipes[side].push(kind, NO_BYTES, this.host.now, false);
  }

  compact(side: Side): void {
    this.pipes[side].compact();
  }

  onEndClosed(side: Side, reason: CloseReason | undefined): void {
    const end = this.ends[side];
    const how = reason === undefined ? "silent" : describeCloseReason(reason);
    this.host.record("close", { conn: this.no, node: end.nodeName, reason: how });
    if (this.ends[otherSide(side)].state === "closed") this.finish();
  }

  /** Closes both ends with an error (loss, partition timeout). */
  reset(cause: ResetCause): void {
    if (this.finished) return;
    this.host.record("reset", { conn: this.no, fault: cause });
    const reason: CloseReason = { type: "error", error: connectionReset(this.no, cause) };
    for (const end of this.ends) {
      end.becomeClosed(reason, end.state === "pending" ? "silent" : "now");
    }
  }

  /** The process of `side` died: its end vanishes, its kernel sends RST to the peer. */
  killSide(side: Side): void {
    if (this.ends[side].state === "closed") return;
    this.ends[side].becomeClosed(undefined, "silent");
    if (!this.finished) this.pushControl(side, "rst");
  }

  /** Starts or stops the partition timer and resumes unblocked pipes. */
  onPartitionChanged(): void {
    if (this.finished) return;
    const blocked = this.pipes.some((pipe) => this.host.isBlocked(pipe.link));
    if (blocked && this.partitionTimer === undefined) {
      this.partitionTimer = this.host.schedule(this.host.partitionResetAfterMs, () => {
        this.partitionTimer = undefined;
        this.reset("partition-timeout");
      });
    } else if (!blocked && this.partitionTimer !== undefined) {
      this.partitionTimer.dispose();
      this.partitionTimer = undefined;
    }
    for (const pipe of this.pipes) pipe.maybeResume();
  }

  private onArrive(to: Side, segment: Segment): void {
    const receiver = this.ends[to];
    switch (segment.kind) {
      case "open":
        this.onOpen();
        return;
      case "data":
        if (segment.lost) this.reset("segment-lost");
        else this.onData(receiver, segment.bytes);
        return;
      case "fin":
        receiver.onPeerFin();
        return;
      case "rst":
        receiver.becomeClosed(
          { type: "error", error: connectionReset(this.no, "peer-reset") },
          receiver.state === "pending" ? "silent" : "now",
        );
        return;
    }
  }

  private onData(receiver: SimEndpoint, bytes: Uint8Array): void {
    if (this.host.recordSegments) {
      this.host.record("segment", { conn: this.no, to: receiver.nodeName, bytes: bytes.length });
    }
    receiver.onPeerData(bytes);
  }

  /** The handshake's final ACK reached the server: accept, or reset if nobody accepts. */
  private onOpen(): void {
    const server = this.ends[SERVER];
    if (server.state !== "pending") return;
    if (!this.acceptor.isAccepting) {
      this.host.record("accept-refused", { conn: this.no });
      this.killSide(SERVER);
      return;
    }
    server.becomeOpen();
    this.host.record("accept", { conn: this.no, node: server.nodeName });
    this.acceptor.accept(server);
  }

  private finish(): void {
    this.finished = true;
    this.partitionTimer?.dispose();
    this.partitionTimer = undefined;
    for (const pipe of this.pipes) pipe.clear();
    this.host.forget(this);
  }
}
