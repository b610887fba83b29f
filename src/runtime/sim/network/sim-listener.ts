/**
 * A listening socket of a simulated node. It accepts a connection when the handshake's
 * final ACK arrives (see VirtualConnection), provided it is still open and its transport
 * alive; otherwise the client sees a reset, as with a real closed listen socket.
 */
import type { Connection, HostPort, Listener } from "../../../ports/transport.js";
import type { EndpointOwner, SimEndpoint } from "./sim-endpoint.js";
import type { Acceptor } from "./virtual-connection.js";

/** What a listener needs from its transport. */
export interface ListenerOwner extends EndpointOwner {
  readonly nodeName: string;
  readonly isOpen: boolean;
  /** Next connection id of the owning transport. */
  allocateConnectionId(): number;
  adopt(endpoint: SimEndpoint): void;
  /** The listener stopped; forget it and free its port. */
  onListenerClosed(listener: SimListener): void;
}

/** A bound address accepting simulated connections. */
export class SimListener implements Listener, Acceptor {
  private open = true;

  constructor(
    readonly owner: ListenerOwner,
    readonly address: HostPort,
    private readonly onConnection: (connection: Connection) => void,
  ) {}

  get nodeName(): string {
    return this.owner.nodeName;
  }

  get isAccepting(): boolean {
    return this.open && this.owner.isOpen;
  }

  accept(endpoint: SimEndpoint): void {
    this.owner.adopt(endpoint);
    this.onConnection(endpoint);
  }

  close(): Promise<void> {
    this.stop();
    return Promise.resolve();
  }

  /** Stops accepting at once (close, transport close, crash). Idempotent. */
  stop(): void {
    if (!this.open) return;
    this.open = false;
    this.owner.onListenerClosed(this);
  }
}
