/**
 * One `connect` in flight: the TCP three-way handshake over the simulated links.
 *
 * SYN (client -> server, one sampled delay) -> the server host answers: RST when nothing
 * listens (connect-refused), RST when the link's connectFailProbability fires (an
 * injected handshake reset), SYN-ACK otherwise (server -> client, one sampled delay) ->
 * the client's connect resolves and its final ACK opens the connection on the server
 * (see VirtualConnection). A packet that meets a partition vanishes. As TCP does, the
 * client sends its SYN again while no answer came: after SYN_RTO_INITIAL_MS, then after
 * twice as long each time (1 s, 2 s, 4 s, ...), so an attempt started during a partition
 * completes soon after the partition heals; otherwise it ends by its timeout
 * (connect-timeout). An unknown host never answers.
 *
 * If the client's process crashes meanwhile the attempt is abandoned: its promise never
 * settles, exactly like code in a dead process.
 */
import type { Disposable } from "../../../base/disposable.js";
import type { TransportError } from "../../../base/errors.js";
import type { HostPort } from "../../../ports/transport.js";
import { connectRefused, connectTimeout, formatAddress, handshakeReset } from "./net-errors.js";
import type { SimEndpoint } from "./sim-endpoint.js";
import type { SimListener } from "./sim-listener.js";

/**
 * The first SYN retransmission timeout (ms), doubled at each retransmission: the initial
 * RTO of RFC 6298 and Linux.
 */
export const SYN_RTO_INITIAL_MS = 1000;

/** What an attempt needs from the network. */
export interface AttemptHost {
  schedule(delayMs: number, fn: () => void): Disposable;
  record(kind: string, detail: unknown): void;
  nodeOfHost(host: string): string | undefined;
  listenerAt(address: HostPort): SimListener | undefined;
  /** Sends a handshake packet; `onArrive` runs unless a partition swallows it. */
  sendPacket(from: string, to: string, onArrive: () => void): void;
  drawConnectFail(from: string, to: string): boolean;
}

/** Callbacks of the `connect` promise and the owning transport. */
export interface AttemptOwner {
  readonly nodeName: string;
  /** Creates the connection after the SYN-ACK and returns the client end. */
  establish(listener: SimListener): SimEndpoint;
  resolve(endpoint: SimEndpoint): void;
  reject(error: TransportError): void;
  /** The attempt ended (either way); stop tracking it. */
  ended(attempt: ConnectAttempt): void;
}

/** A pending client handshake. */
export class ConnectAttempt {
  private done = false;
  private timer: Disposable | undefined;
  private retransmit: Disposable | undefined;

  constructor(
    private readonly host: AttemptHost,
    private readonly owner: AttemptOwner,
    private readonly target: HostPort,
    private readonly timeoutMs: number,
  ) {}

  /** Sends the SYN and starts the timeout. */
  start(): void {
    if (this.timeoutMs !== Number.POSITIVE_INFINITY) {
      this.timer = this.host.schedule(this.timeoutMs, () =>
        this.fail(connectTimeout(this.target, this.timeoutMs)),
      );
    }
    const server = this.host.nodeOfHost(this.target.host);
    if (server === undefined) return;
    this.sendSyn(server, SYN_RTO_INITIAL_MS);
  }

  /** Sends a SYN, and again after `rtoMs` (doubled each time) until an answer came. */
  private sendSyn(server: string, rtoMs: number): void {
    this.host.sendPacket(this.owner.nodeName, server, () => this.onSyn(server));
    this.retransmit = this.host.schedule(rtoMs, () => {
      if (!this.done) this.sendSyn(server, rtoMs * 2);
    });
  }

  /** Fails the attempt (timeout, refusal, transport closed). */
  fail(error: TransportError): void {
    if (this.done) return;
    this.end();
    this.host.record("connect-failed", {
      from: this.owner.nodeName,
      to: formatAddress(this.target),
      reason: error.reason,
    });
    this.owner.reject(error);
  }

  /** The owning process crashed: never settle, never act again. */
  abandon(): void {
    this.end();
  }

  private onSyn(server: string): void {
    if (this.done) return;
    const client = this.owner.nodeName;
    const listener = this.host.listenerAt(this.target);
    const reply = (fn: () => void) => this.host.sendPacket(server, client, fn);
    if (listener === undefined || !listener.isAccepting) {
      reply(() => this.fail(connectRefused(this.target)));
    } else if (this.host.drawConnectFail(client, server)) {
      reply(() => this.fail(handshakeReset(this.target)));
    } else {
      reply(() => this.onSynAck(listener));
    }
  }

  private onSynAck(listener: SimListener): void {
    if (this.done) return;
    this.end();
    this.owner.resolve(this.owner.establish(listener));
  }

  private end(): void {
    this.done = true;
    this.timer?.dispose();
    this.timer = undefined;
    this.retransmit?.dispose();
    this.retransmit = undefined;
    this.owner.ended(this);
  }
}
