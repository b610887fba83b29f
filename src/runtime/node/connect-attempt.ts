/**
 * One outbound connect: dial, (TLS) handshake, then hand the socket to a Connection.
 *
 * Invariants:
 * - Settles exactly once: with the Connection built by `establish`, or with a
 *   TransportError whose reason follows the phase reached (see connect-failure.ts).
 * - One timer bounds the whole attempt, TLS included, and is always cleared.
 * - The socket always has an 'error' listener: `establish` attaches the connection's own
 *   synchronously, before this attempt removes its listeners, so no error can escape.
 * - `released` resolves once this attempt no longer owns a live socket (handed off, or
 *   closed after a failure), so closing the transport can wait for handles to go away.
 *
 * Why wait for a session ticket under TLS 1.3: there the client finishes its handshake
 * before the server has checked the client's certificate; a rejected client would see a
 * "successful" connect followed by a hang-up. Node's TLS server sends its session tickets
 * only after accepting the client, so the first ticket is the proof we wait for, and a
 * rejection surfaces as a "tls" connect failure where the caller expects it. The hand-off
 * happens on the next event-loop turn after that ticket (see onTlsSession).
 */
import { connect as netConnect, type Socket } from "node:net";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import type { Connection, HostPort } from "../../ports/transport.js";
import { type ConnectFailureCause, type ConnectPhase, connectFailure } from "./connect-failure.js";
import type { ResolvedTls } from "./tls-options.js";

/** What a connect attempt needs. */
export interface ConnectAttemptParams {
  readonly address: HostPort;
  readonly timeoutMs: number;
  readonly tls: ResolvedTls | undefined;
  /** Applies socket options (no-delay, keep-alive) right after the socket is created. */
  readonly configure: (socket: Socket) => void;
  /** Builds the Connection; must attach its own socket listeners synchronously. */
  readonly establish: (socket: Socket) => Connection;
}

/** A connect in progress; `result` settles once. */
export class ConnectAttempt {
  readonly result: Promise<Connection>;
  readonly released: Promise<void>;

  private readonly socket: Socket;
  private readonly timer: ReturnType<typeof setTimeout>;
  private phase: ConnectPhase = "tcp";
  private settled = false;
  private resolve: (connection: Connection) => void = () => {};
  private reject: (error: Error) => void = () => {};
  private release: () => void = () => {};
  private readonly onError = (error: Error): void => this.fail({ type: "error", error });
  private readonly onClose = (): void => this.onSocketClose();
  private readonly onConnect = (): void => this.onTcpConnect();
  private readonly onSecureConnect = (): void => this.onTlsHandshakeDone();
  private readonly onSession = (): void => this.onTlsSession();

  constructor(private readonly params: ConnectAttemptParams) {
    this.result = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.released = new Promise((resolve) => {
      this.release = resolve;
    });
    this.socket = openSocket(params.address, params.tls);
    params.configure(this.socket);
    this.socket.on("error", this.onError);
    this.socket.on("close", this.onClose);
    this.socket.once("connect", this.onConnect);
    if (params.tls !== undefined) {
      this.socket.once("secureConnect", this.onSecureConnect);
      this.socket.once("session", this.onSession);
    }
    const timeoutMs = params.timeoutMs;
    this.timer = setTimeout(() => this.fail({ type: "timeout", timeoutMs }), timeoutMs);
  }

  /** Abandons the attempt (transport closing): rejects with reason "closed". */
  abort(): void {
    this.fail({ type: "aborted" });
  }

  private onTcpConnect(): void {
    if (this.params.tls === undefined) this.succeed();
    else this.phase = "tls-handshake";
  }

  private onTlsHandshakeDone(): void {
    if ((this.socket as TLSSocket).getProtocol() === "TLSv1.3") this.phase = "tls-verify";
    else this.succeed();
  }

  private onTlsSession(): void {
    // 'session' is emitted from inside OpenSSL's read; a write made before that returns
    // (even from a microtask or nextTick) is silently lost, so hand over a turn later.
    if (this.phase === "tls-verify") setImmediate(() => this.succeed());
  }

  private onSocketClose(): void {
    if (!this.settled) this.fail({ type: "hang-up" });
    this.release();
  }

  private succeed(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const connection = this.params.establish(this.socket);
    this.detach();
    this.release();
    this.resolve(connection);
  }

  private fail(cause: ConnectFailureCause): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.socket.destroy();
    this.reject(connectFailure(this.params.address, this.phase, cause));
  }

  private detach(): void {
    this.socket.off("error", this.onError);
    this.socket.off("close", this.onClose);
    this.socket.off("connect", this.onConnect);
    this.socket.off("secureConnect", this.onSecureConnect);
    this.socket.off("session", this.onSession);
  }
}

function openSocket(address: HostPort, tls: ResolvedTls | undefined): Socket {
  const { host, port } = address;
  if (tls === undefined) return netConnect({ host, port });
  return tlsConnect({
    host,
    port,
    secureContext: tls.clientContext,
    rejectUnauthorized: tls.rejectUnauthorized,
    ...(tls.servername === undefined ? {} : { servername: tls.servername }),
  });
}
