/**
 * Transport port: reliable, ordered byte streams between nodes (TCP semantics). Remoting
 * frames its own messages on top; the transport knows nothing of frames or actors.
 * runtime/node implements it with node:net (optionally node:tls); runtime/sim with a
 * virtual network whose faults (latency, loss, partitions, ...) come from the seed.
 *
 * Loss and duplication in the simulated network apply to whole connections (a dropped
 * connection, a reset), never to bytes inside a live stream: a live connection is always
 * an ordered, gap-free byte stream, exactly as TCP promises.
 */

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** Why a connection closed. */
export type CloseReason =
  | { readonly type: "local" } // close() was called here
  | { readonly type: "remote" } // the peer closed it
  | { readonly type: "error"; readonly error: Error }; // reset, timeout, TLS failure, ...

export interface ConnectionHandlers {
  /** Bytes in order. The chunk may be reused after the call returns: copy to keep it. */
  onData(chunk: Uint8Array): void;
  /** The send buffer dropped below its high-water mark after `send` returned false. */
  onDrain(): void;
  /** Called exactly once; no other callback follows it. */
  onClose(reason: CloseReason): void;
}

export interface Connection {
  /** Unique per transport instance, for logs. */
  readonly id: number;
  /** The address this side bound (local) and the peer's socket address (remote). */
  readonly local: HostPort;
  readonly remote: HostPort;
  /**
   * Installs the handlers. Data arriving before this call is buffered and delivered
   * right after it. Must be called once.
   */
  setHandlers(handlers: ConnectionHandlers): void;
  /**
   * Queues bytes for sending, without copying them (as a Node socket does): the caller
   * must not modify them afterwards. Returns false when the send buffer is above its
   * high-water mark (the bytes are still queued): the caller should wait for onDrain.
   */
  send(bytes: Uint8Array): boolean;
  /** Bytes queued but not yet handed to the network. */
  readonly bufferedBytes: number;
  /** Closes gracefully after queued bytes are flushed; idempotent. */
  close(): void;
  /** Closes at once, dropping queued bytes; idempotent. */
  destroy(): void;
  /**
   * TLS keying-material exporter (RFC 5705 / 8446 §7.5) of this connection: `length`
   * bytes both ends compute alike and nobody else can. Undefined on a connection that is
   * not TLS. The handshake binds its proofs to the session with it.
   */
  exportKeyingMaterial?(length: number, label: string): Uint8Array | undefined;
}

export interface Listener {
  /** The bound address (the actual port when 0 was requested). */
  readonly address: HostPort;
  /** Stops accepting; existing connections stay open. */
  close(): Promise<void>;
}

/**
 * What protects a transport's connections from whoever can reach its port: "tls" (mutual
 * TLS: peers are authenticated and traffic is encrypted), "isolated" (an in-process
 * network nothing outside can reach, the simulator's). Undefined: nothing (plain TCP).
 */
export type TransportProtection = "tls" | "isolated";

export interface Transport {
  /** See {@link TransportProtection}; undefined for plain TCP. */
  readonly protection?: TransportProtection;
  /** Accepts inbound connections on host:port (port 0 = any free port). */
  listen(address: HostPort, onConnection: (connection: Connection) => void): Promise<Listener>;
  /** Opens a connection; rejects with a TransportError when it cannot be established. */
  connect(address: HostPort, options?: { readonly timeoutMs?: number }): Promise<Connection>;
  /** Closes every listener and connection this transport owns. */
  close(): Promise<void>;
}
