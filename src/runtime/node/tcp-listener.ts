/**
 * A listening node:net (or node:tls) server, adapted to the Transport port's Listener.
 *
 * Invariants:
 * - Only sockets that completed the handshake (for TLS: with a client certificate that
 *   verifies) reach `accept`; a failed TLS handshake is destroyed here and logged at a
 *   bounded rate, because anyone can make a server produce them.
 * - Every accepted TCP socket is tracked until it closes, so `shutdown` can also destroy
 *   sockets still in their TLS handshake, which no Connection owns yet.
 * - `close` stops accepting at once (the port is released synchronously); existing
 *   connections stay open. `serverClosed` resolves when Node's server handle and all its
 *   sockets are gone.
 *
 * Why `serverClosed` waits two event-loop turns after the server's 'close' event: Node
 * emits it on the next tick while libuv finishes closing the server handle only in the
 * loop's close phase (sockets, by contrast, emit 'close' from that callback). Without the
 * wait a caller of `TcpTransport.close()` could still see a live TCPServerWrap.
 */
import { createServer as createNetServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import type { RateLimiter } from "../../base/rate-limiter.js";
import type { Logger } from "../../ports/logger.js";
import type { HostPort, Listener } from "../../ports/transport.js";
import { errorCode, listenFailure } from "./connect-failure.js";
import { type ResolvedTls, tlsServerOptions } from "./tls-options.js";

/** What a listener needs from its transport. */
export interface TcpListenerParams {
  readonly address: HostPort;
  readonly tls: ResolvedTls | undefined;
  readonly handshakeTimeoutMs: number;
  /** Applies socket options to every accepted TCP socket. */
  readonly configure: (socket: Socket) => void;
  /** Receives each socket that is ready for use (TLS: verified). */
  readonly accept: (socket: Socket) => void;
  readonly logger: Logger;
  /** Bounds logging of rejected handshakes and accept errors. */
  readonly logLimiter: RateLimiter;
  readonly nowMs: () => number;
}

/** A bound server socket. Create with {@link TcpListener.start}. */
export class TcpListener implements Listener {
  readonly serverClosed: Promise<void>;
  private readonly sockets = new Set<Socket>();
  private closing: Promise<void> | undefined;
  private bound: HostPort;

  private constructor(
    private readonly server: Server,
    private readonly params: TcpListenerParams,
  ) {
    this.bound = params.address;
    this.serverClosed = new Promise<void>((resolve) => server.once("close", resolve)).then(
      handleCloseSettled,
    );
    server.on("connection", (socket: Socket) => this.onTcpConnection(socket));
    if (params.tls === undefined) server.on("connection", params.accept);
    else {
      server.on("secureConnection", params.accept);
      server.on("tlsClientError", (error: Error, socket: TLSSocket) =>
        this.onTlsClientError(error, socket),
      );
    }
  }

  /** Binds `params.address`; rejects with TransportError "listen-failed". */
  static start(params: TcpListenerParams): Promise<TcpListener> {
    const server =
      params.tls === undefined
        ? createNetServer()
        : createTlsServer(tlsServerOptions(params.tls, params.handshakeTimeoutMs));
    const listener = new TcpListener(server, params);
    return new Promise((resolve, reject) => {
      const onListenError = (error: Error): void => reject(listenFailure(params.address, error));
      server.once("error", onListenError);
      server.listen({ host: params.address.host, port: params.address.port }, () => {
        server.off("error", onListenError);
        server.on("error", (error: Error) => listener.onServerError(error));
        listener.bound = boundAddress(server, params.address);
        resolve(listener);
      });
    });
  }

  get address(): HostPort {
    return this.bound;
  }

  close(): Promise<void> {
    this.closing ??= this.stopAccepting();
    return this.closing;
  }

  /** Stops accepting, destroys every socket it accepted, waits until all are gone. */
  async shutdown(): Promise<void> {
    void this.close();
    for (const socket of this.sockets) socket.destroy();
    await this.serverClosed;
  }

  private async stopAccepting(): Promise<void> {
    this.server.close();
    if (this.sockets.size === 0) await this.serverClosed;
  }

  private onTcpConnection(socket: Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    this.params.configure(socket);
  }

  private onTlsClientError(error: Error, socket: TLSSocket): void {
    socket.destroy();
    this.logLimited("rejected inbound TLS connection", {
      remote: `${socket.remoteAddress ?? "?"}:${socket.remotePort ?? "?"}`,
      errorCode: errorCode(error),
      error: error.message,
    });
  }

  private onServerError(error: Error): void {
    this.logLimited("listener error", { errorCode: errorCode(error), error: error.message });
  }

  private logLimited(message: string, fields: Record<string, unknown>): void {
    const suppressed = this.params.logLimiter.tryAcquire(this.params.nowMs());
    if (suppressed < 0) return;
    const { host, port } = this.bound;
    this.params.logger.warn(message, { listener: `${host}:${port}`, suppressed, ...fields });
  }
}

/** Resolves after libuv's close phase has run at least once (see the module comment). */
function handleCloseSettled(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

function boundAddress(server: Server, requested: HostPort): HostPort {
  const info = server.address();
  if (info === null || typeof info === "string") return requested;
  return { host: info.address, port: info.port };
}
