/**
 * One end of a simulated connection: the `Connection` a node's code holds.
 *
 * Lifecycle: pending (server end between handshake and accept) -> open -> closing
 * (close() called, FIN queued behind the send buffer) -> closed. Once closed the end
 * sends nothing, receives nothing, and its single onClose is queued (or, when its
 * process crashed, nothing is ever delivered again).
 *
 * Why: the port promises TCP semantics (ordered bytes, drain-based backpressure, one
 * close notification); this class holds the per-end part of that promise, while the
 * VirtualConnection moves segments between the two ends.
 */
import type {
  CloseReason,
  Connection,
  ConnectionHandlers,
  HostPort,
} from "../../../ports/transport.js";
import { Inbox } from "./inbox.js";
import type { NetEvents } from "./net-events.js";
import { NO_BYTES, type Segment } from "./segment.js";
import { SendBuffer } from "./send-buffer.js";

/** Which end of a connection: 0 = the connecting client, 1 = the accepting server. */
export type Side = 0 | 1;
/** The end that called `connect`. */
export const CLIENT: Side = 0;
/** The end that accepted. */
export const SERVER: Side = 1;

/** The other end. */
export function otherSide(side: Side): Side {
  return side === CLIENT ? SERVER : CLIENT;
}

/** Lifecycle state of one end. */
export type EndpointState = "pending" | "open" | "closing" | "closed";

/** How a close is notified: in this network event, in a later one, or never (crash). */
export type CloseMode = "now" | "later" | "silent";

/** What an end needs from its connection. */
export interface EndpointWire {
  readonly no: number;
  readonly events: NetEvents;
  readonly sendBufferHighWaterBytes: number;
  /** Queues a segment behind the link's transmitter. */
  transmit(side: Side, kind: "data" | "fin", bytes: Uint8Array): Segment;
  /** Sends a control segment at once (not behind queued bytes). */
  pushControl(side: Side, kind: "fin" | "rst"): void;
  /** Forgets segments of `side` dropped before transmission. */
  compact(side: Side): void;
  onEndClosed(side: Side, reason: CloseReason | undefined): void;
}

/** Whoever tracks open ends (the owning transport). */
export interface EndpointOwner {
  forget(endpoint: SimEndpoint): void;
}

/** Identity of an end. */
export interface EndpointInit {
  readonly id: number;
  readonly nodeName: string;
  readonly local: HostPort;
  readonly remote: HostPort;
  readonly owner: EndpointOwner;
  readonly state: "pending" | "open";
}

/** A simulated connection end. */
export class SimEndpoint implements Connection {
  readonly id: number;
  readonly nodeName: string;
  readonly local: HostPort;
  readonly remote: HostPort;
  private readonly owner: EndpointOwner;
  private lifecycle: EndpointState;
  private readonly inbox: Inbox;
  private readonly sendBuffer: SendBuffer;
  private needsDrain = false;

  constructor(
    private readonly wire: EndpointWire,
    readonly side: Side,
    init: EndpointInit,
  ) {
    this.id = init.id;
    this.nodeName = init.nodeName;
    this.local = init.local;
    this.remote = init.remote;
    this.owner = init.owner;
    this.lifecycle = init.state;
    this.inbox = new Inbox(wire.events);
    this.sendBuffer = new SendBuffer(wire.events, (segment) => this.onTransmitted(segment));
  }

  /** Current lifecycle state. */
  get state(): EndpointState {
    return this.lifecycle;
  }

  get bufferedBytes(): number {
    return this.sendBuffer.bufferedBytes;
  }

  setHandlers(handlers: ConnectionHandlers): void {
    this.inbox.install(handlers);
  }

  send(bytes: Uint8Array): boolean {
    if (this.lifecycle !== "open") return false;
    // No copy: the bytes are the caller's to leave alone from now on (ports/transport.ts),
    // as with a Node socket, which keeps a reference until it writes them.
    this.sendBuffer.add(this.wire.transmit(this.side, "data", bytes));
    if (this.sendBuffer.bufferedBytes <= this.wire.sendBufferHighWaterBytes) return true;
    this.needsDrain = true;
    return false;
  }

  close(): void {
    if (this.lifecycle !== "open") return;
    this.lifecycle = "closing";
    this.sendBuffer.add(this.wire.transmit(this.side, "fin", NO_BYTES));
  }

  destroy(): void {
    if (this.lifecycle !== "open" && this.lifecycle !== "closing") return;
    this.dropUnsent();
    this.wire.pushControl(this.side, "fin");
    this.becomeClosed({ type: "local" }, "later");
  }

  /** The accept completed (server end). */
  becomeOpen(): void {
    if (this.lifecycle === "pending") this.lifecycle = "open";
  }

  /** Bytes arrived from the peer (network event). */
  onPeerData(bytes: Uint8Array): void {
    if (this.lifecycle === "open" || this.lifecycle === "closing") {
      this.inbox.deliverNow({ type: "data", bytes });
    }
  }

  /** The peer's FIN arrived (network event). */
  onPeerFin(): void {
    this.becomeClosed({ type: this.lifecycle === "closing" ? "local" : "remote" }, "now");
  }

  /**
   * Closes this end. `now`/`later`: notify in this network event or a later one;
   * `silent`: the process is gone, nothing is delivered (reason undefined).
   */
  becomeClosed(reason: CloseReason | undefined, mode: CloseMode): void {
    if (this.lifecycle === "closed") return;
    this.lifecycle = "closed";
    this.dropUnsent();
    if (reason === undefined || mode === "silent") this.inbox.silence();
    else if (mode === "now") this.inbox.deliverNow({ type: "close", reason });
    else {
      this.inbox.dropData();
      this.inbox.deliverLater({ type: "close", reason });
    }
    this.owner.forget(this);
    this.wire.onEndClosed(this.side, mode === "silent" ? undefined : reason);
  }

  private dropUnsent(): void {
    this.sendBuffer.dropAll();
    this.wire.compact(this.side);
  }

  private onTransmitted(segment: Segment): void {
    if (segment.kind === "fin") {
      this.becomeClosed({ type: "local" }, "now");
      return;
    }
    if (!this.needsDrain) return;
    if (this.sendBuffer.bufferedBytes > this.wire.sendBufferHighWaterBytes) return;
    this.needsDrain = false;
    this.inbox.deliverNow({ type: "drain" });
  }
}
