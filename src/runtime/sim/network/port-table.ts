/**
 * The ports of one simulated host: which are listened on, which are taken by the local
 * side of outbound connections, and a deterministic ephemeral allocator.
 *
 * Ephemeral ports (for port 0 listeners and outbound connections) are handed out
 * round-robin from 49152-65535, skipping ports in use, exactly like a simple kernel —
 * so the same sequence of calls always yields the same ports.
 */

const EPHEMERAL_MIN = 49_152;
const PORT_MAX = 65_535;

/** Port bookkeeping of one host; `L` is the listener type. */
export class PortTable<L> {
  private readonly listeners = new Map<number, L>();
  private readonly used = new Set<number>();
  private nextEphemeral = EPHEMERAL_MIN;

  /** The listener on `port`, if any. */
  listenerAt(port: number): L | undefined {
    return this.listeners.get(port);
  }

  /** Whether `port` is neither listened on nor used by a connection. */
  isFree(port: number): boolean {
    return !this.used.has(port);
  }

  /** Binds a listener to a free port. */
  bind(port: number, listener: L): void {
    this.used.add(port);
    this.listeners.set(port, listener);
  }

  /** Unbinds `listener` from `port` (no-op when another listener holds it). */
  unbind(port: number, listener: L): void {
    if (this.listeners.get(port) !== listener) return;
    this.listeners.delete(port);
    this.used.delete(port);
  }

  /** Takes the next free ephemeral port, or undefined when all are in use. */
  allocate(): number | undefined {
    for (let tries = 0; tries <= PORT_MAX - EPHEMERAL_MIN; tries++) {
      const port = this.nextEphemeral;
      this.nextEphemeral = port === PORT_MAX ? EPHEMERAL_MIN : port + 1;
      if (!this.used.has(port)) {
        this.used.add(port);
        return port;
      }
    }
    return undefined;
  }

  /** Returns a port taken by `allocate` for an outbound connection. */
  release(port: number): void {
    if (!this.listeners.has(port)) this.used.delete(port);
  }
}

/** Whether `port` is a valid port number to listen on (0 = pick one). */
export function isValidPort(port: number): boolean {
  return Number.isInteger(port) && port >= 0 && port <= PORT_MAX;
}
