/**
 * The real Transport: TCP via node:net, or mutual TLS via node:tls.
 *
 * Invariants:
 * - The transport owns every listener, connect attempt and connection it created and
 *   tracks each until its handle is closed; `close()` stops them all and resolves only
 *   when none is left (no leaked sockets or servers, docs/architecture.md, house rule 5).
 * - Failures are typed: connect/listen reject with TransportError and a stable reason
 *   ("connect-refused", "connect-timeout", "tls", "listen-failed", "closed", "other").
 * - After `close()` has been called, listen and connect reject with reason "closed" and
 *   anything still arriving (a late accept or handshake) is destroyed.
 *
 * Backpressure is drain-based (see tcp-connection.ts): `send` never blocks or copies,
 * it reports when the queue is above `sendHighWaterMarkBytes`.
 */
import type { Socket } from "node:net";
import { TransportError } from "../../base/errors.js";
import { RateLimiter } from "../../base/rate-limiter.js";
import type { Connection, HostPort, Listener, Transport } from "../../ports/transport.js";
import { ConnectAttempt } from "./connect-attempt.js";
import { NodeClock } from "./node-clock.js";
import { TcpConnection } from "./tcp-connection.js";
import { TcpListener } from "./tcp-listener.js";
import {
  type ResolvedTcpTransportOptions,
  resolveConnectTimeoutMs,
  resolveTcpTransportOptions,
  type TcpTransportOptions,
} from "./tcp-transport-options.js";

/** Inbound-problem log lines allowed per interval (rejected handshakes, accept errors). */
export const TRANSPORT_LOG_BURST_MAX = 10;
/** Window of {@link TRANSPORT_LOG_BURST_MAX}. */
export const TRANSPORT_LOG_INTERVAL_MS = 60_000;

const PORT_MAX = 65_535;

/** Transport over node:net / node:tls. */
export class TcpTransport implements Transport {
  private readonly options: ResolvedTcpTransportOptions;
  private readonly clock = new NodeClock();
  private readonly logLimiter = new RateLimiter(TRANSPORT_LOG_BURST_MAX, TRANSPORT_LOG_INTERVAL_MS);
  private readonly connections = new Set<TcpConnection>();
  private readonly attempts = new Set<ConnectAttempt>();
  private readonly listeners = new Set<TcpListener>();
  private readonly pendingListens = new Set<Promise<unknown>>();
  private nextConnectionId = 1;
  private closing: Promise<void> | undefined;

  /** Validates `options`; throws ConfigError naming the bad `transport.*` key. */
  constructor(options: TcpTransportOptions = {}) {
    this.options = resolveTcpTransportOptions(options);
  }

  /** "tls" with TLS options, else undefined (plain TCP). */
  get protection(): "tls" | undefined {
    return this.options.tls === undefined ? undefined : "tls";
  }

  /** Connections currently open (inbound and outbound). */
  get openConnections(): number {
    return this.connections.size;
  }

  listen(address: HostPort, onConnection: (connection: Connection) => void): Promise<Listener> {
    if (this.closing !== undefined) return Promise.reject(closedError("listen"));
    const invalid = invalidAddress(address, 0);
    if (invalid !== undefined)
      return Promise.reject(new TransportError("listen-failed", invalid, { address }));
    const pending = this.startListener(address, onConnection);
    this.pendingListens.add(pending);
    const forget = (): void => {
      this.pendingListens.delete(pending);
    };
    pending.then(forget, forget);
    return pending;
  }

  connect(address: HostPort, options?: { readonly timeoutMs?: number }): Promise<Connection> {
    if (this.closing !== undefined) return Promise.reject(closedError("connect"));
    const invalid = invalidAddress(address, 1);
    if (invalid !== undefined)
      return Promise.reject(new TransportError("other", invalid, { address }));
    let timeoutMs: number;
    try {
      timeoutMs = resolveConnectTimeoutMs(options?.timeoutMs, this.options.connectTimeoutMs);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.startConnect(address, timeoutMs);
  }

  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async startListener(
    address: HostPort,
    onConnection: (connection: Connection) => void,
  ): Promise<Listener> {
    const listener = await TcpListener.start({
      address,
      tls: this.options.tls,
      handshakeTimeoutMs: this.options.connectTimeoutMs,
      configure: (socket) => this.configure(socket),
      accept: (socket) => this.onAccepted(socket, onConnection),
      logger: this.options.logger,
      logLimiter: this.logLimiter,
      nowMs: () => this.clock.now(),
    });
    if (this.closing !== undefined) {
      await listener.shutdown();
      throw closedError("listen");
    }
    this.listeners.add(listener);
    void listener.serverClosed.then(() => this.listeners.delete(listener));
    return listener;
  }

  private async startConnect(address: HostPort, timeoutMs: number): Promise<Connection> {
    const attempt = new ConnectAttempt({
      address: { host: address.host, port: address.port },
      timeoutMs,
      tls: this.options.tls,
      configure: (socket) => this.configure(socket),
      establish: (socket) => this.track(socket),
    });
    this.attempts.add(attempt);
    void attempt.released.then(() => this.attempts.delete(attempt));
    return attempt.result;
  }

  private onAccepted(socket: Socket, onConnection: (connection: Connection) => void): void {
    if (this.closing !== undefined) {
      socket.destroy();
      return;
    }
    onConnection(this.track(socket));
  }

  private track(socket: Socket): TcpConnection {
    const connection = new TcpConnection(this.nextConnectionId++, socket, this.options, (c) =>
      this.connections.delete(c),
    );
    this.connections.add(connection);
    return connection;
  }

  private configure(socket: Socket): void {
    socket.setNoDelay(this.options.noDelay);
    if (this.options.keepAliveMs > 0) socket.setKeepAlive(true, this.options.keepAliveMs);
  }

  private async closeAll(): Promise<void> {
    await Promise.allSettled(this.pendingListens);
    for (const attempt of this.attempts) attempt.abort();
    for (const connection of this.connections) connection.destroy();
    await Promise.all([
      ...[...this.attempts].map((attempt) => attempt.released),
      ...[...this.connections].map((connection) => connection.closed),
      ...[...this.listeners].map((listener) => listener.shutdown()),
    ]);
  }
}

function closedError(operation: string): TransportError {
  return new TransportError("closed", `cannot ${operation}: transport is closed`);
}

/** Why `address` is unusable, or undefined when it is fine. */
function invalidAddress(address: HostPort, portMin: number): string | undefined {
  const ok =
    typeof address === "object" &&
    address !== null &&
    typeof address.host === "string" &&
    address.host.length > 0 &&
    Number.isInteger(address.port) &&
    address.port >= portMin &&
    address.port <= PORT_MAX;
  if (ok) return undefined;
  const allowed = `a host and a port in [${portMin}, ${PORT_MAX}]`;
  return `invalid address ${JSON.stringify(address)}: need ${allowed}`;
}
