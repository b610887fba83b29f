/**
 * The Transport of one simulated node (one process incarnation): listeners, connect
 * attempts and the open connection ends it owns.
 *
 * Lifecycle: open -> closed (close(): listeners stop, attempts fail with "closed", ends
 * are destroyed) or open -> dead (the node crashed: listeners vanish, attempts never
 * settle, ends vanish and peers get RST — see SimNetwork.crash). A restarted node gets a
 * new transport; a dead one never comes back.
 *
 * Connection ids are per transport, in creation order, so they are deterministic.
 */
import { fail } from "../../../base/assert.js";
import { TransportError } from "../../../base/errors.js";
import type { Connection, HostPort, Listener, Transport } from "../../../ports/transport.js";
import { type AttemptHost, ConnectAttempt } from "./connect-attempt.js";
import { formatAddress, listenFailed, transportClosed } from "./net-errors.js";
import { isValidPort, type PortTable } from "./port-table.js";
import type { EndpointOwner, SimEndpoint } from "./sim-endpoint.js";
import { type ListenerOwner, SimListener } from "./sim-listener.js";

/** Hosts a listener may bind besides the node's own host. */
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(["0.0.0.0", "::"]);

/** What a transport needs from the network. */
export interface TransportHost extends AttemptHost {
  readonly connectTimeoutMs: number;
  ports(host: string): PortTable<SimListener>;
  /** Creates the connection for a completed handshake; returns the client end. */
  establish(client: SimTransport, target: HostPort, listener: SimListener): SimEndpoint;
  /** The transport closed; it owns nothing any more. */
  transportClosed(transport: SimTransport): void;
}

type TransportState = "open" | "closed" | "dead";

/** A simulated node's Transport. */
export class SimTransport implements Transport, ListenerOwner, EndpointOwner {
  private lifecycle: TransportState = "open";
  private nextConnectionId = 1;
  private readonly listeners = new Set<SimListener>();
  private readonly attempts = new Set<ConnectAttempt>();
  private readonly endpoints = new Set<SimEndpoint>();

  constructor(
    private readonly net: TransportHost,
    readonly nodeName: string,
    readonly host: string,
  ) {}

  /** Nothing outside the simulated world can reach its ports. */
  readonly protection = "isolated" as const;

  get isOpen(): boolean {
    return this.lifecycle === "open";
  }

  /** Open connection ends owned by this transport. */
  get openConnections(): number {
    return this.endpoints.size;
  }

  /** Next connection id of this transport. */
  allocateConnectionId(): number {
    return this.nextConnectionId++;
  }

  adopt(endpoint: SimEndpoint): void {
    if (endpoint.state !== "closed") this.endpoints.add(endpoint);
  }

  forget(endpoint: SimEndpoint): void {
    this.endpoints.delete(endpoint);
  }

  onListenerClosed(listener: SimListener): void {
    this.listeners.delete(listener);
    this.net.ports(this.host).unbind(listener.address.port, listener);
    this.net.record("unlisten", { node: this.nodeName, address: formatAddress(listener.address) });
  }

  listen(address: HostPort, onConnection: (connection: Connection) => void): Promise<Listener> {
    if (!this.isOpen) return Promise.reject(transportClosed(this.nodeName, "listen"));
    try {
      return Promise.resolve(this.bind(address, onConnection));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  connect(address: HostPort, options?: { readonly timeoutMs?: number }): Promise<Connection> {
    const timeoutMs = options?.timeoutMs ?? this.net.connectTimeoutMs;
    if (!(timeoutMs >= 0)) fail(`connect timeoutMs must be >= 0: ${timeoutMs}`);
    if (!this.isOpen) return Promise.reject(transportClosed(this.nodeName, "connect"));
    if (!isValidPort(address.port) || address.port === 0) {
      return Promise.reject(
        new TransportError("other", `invalid address ${formatAddress(address)}`, {
          address: formatAddress(address),
        }),
      );
    }
    return new Promise<Connection>((resolve, reject) =>
      this.startAttempt(address, timeoutMs, resolve, reject),
    );
  }

  close(): Promise<void> {
    if (this.lifecycle !== "open") return Promise.resolve();
    this.lifecycle = "closed";
    this.net.record("transport-close", { node: this.nodeName });
    for (const listener of [...this.listeners]) listener.stop();
    for (const attempt of [...this.attempts]) {
      attempt.fail(transportClosed(this.nodeName, "connect"));
    }
    for (const endpoint of [...this.endpoints]) endpoint.destroy();
    this.net.transportClosed(this);
    return Promise.resolve();
  }

  /**
   * The process crashed: listeners vanish and pending connects never settle. Open ends
   * are killed by the network (it also knows the ends not yet accepted).
   */
  kill(): void {
    if (this.lifecycle === "dead") return;
    this.lifecycle = "dead";
    for (const listener of [...this.listeners]) listener.stop();
    for (const attempt of [...this.attempts]) attempt.abandon();
  }

  private bind(address: HostPort, onConnection: (connection: Connection) => void): SimListener {
    if (address.host !== this.host && !WILDCARD_HOSTS.has(address.host)) {
      throw listenFailed(address, `${this.nodeName} has host ${this.host}`);
    }
    if (!isValidPort(address.port)) throw listenFailed(address, "invalid port");
    const ports = this.net.ports(this.host);
    const port = address.port === 0 ? ports.allocate() : address.port;
    if (port === undefined) throw listenFailed(address, "no free port");
    if (address.port !== 0 && !ports.isFree(port)) throw listenFailed(address, "address in use");
    const listener = new SimListener(this, { host: address.host, port }, onConnection);
    ports.bind(port, listener);
    this.listeners.add(listener);
    this.net.record("listen", { node: this.nodeName, address: formatAddress(listener.address) });
    return listener;
  }

  private startAttempt(
    target: HostPort,
    timeoutMs: number,
    resolve: (connection: Connection) => void,
    reject: (error: TransportError) => void,
  ): void {
    const attempt = new ConnectAttempt(
      this.net,
      {
        nodeName: this.nodeName,
        establish: (listener) => this.net.establish(this, target, listener),
        resolve,
        reject,
        ended: (a) => this.attempts.delete(a),
      },
      target,
      timeoutMs,
    );
    this.attempts.add(attempt);
    attempt.start();
  }
}
