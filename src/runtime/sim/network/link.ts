/**
 * A directed link between two simulated nodes (from -> to): its fault config, its own
 * seeded random stream, its transmitter and its clog.
 *
 * Invariants:
 * - The transmitter is shared by every connection from `from` to `to`: a segment's
 *   transmission starts when the previous one (of any connection) has left, and takes
 *   size / bandwidth ms. `busyUntil` never decreases except when the sender crashes
 *   (everything it had queued is gone).
 * - Each link draws from its own stream, derived from (world seed, from, to), and only
 *   when the config makes a draw necessary (jitter > 0, p > 0). Traffic on one link
 *   therefore never shifts the random choices of another, and a fault-free config
 *   consumes no randomness at all.
 */
import type { Random } from "../../../ports/random.js";
import type { LinkConfig } from "./sim-network-settings.js";

/** One direction between two nodes. */
export class Link {
  /** Segments arriving before this world time wait until it (see SimNetwork.clog). */
  clogUntil = 0;
  private busyUntil = 0;

  constructor(
    readonly from: string,
    readonly to: string,
    public config: LinkConfig,
    private readonly random: Random,
  ) {}

  /** One-way delay of a segment or packet: latency plus uniform jitter. */
  sampleDelayMs(): number {
    const { latencyMs, jitterMs } = this.config;
    return jitterMs === 0 ? latencyMs : latencyMs + this.random.next() * jitterMs;
  }

  /** Whether a data segment is lost (its connection resets). */
  drawLoss(): boolean {
    return this.draw(this.config.lossProbability);
  }

  /** Whether a connect attempt fails during its handshake. */
  drawConnectFail(): boolean {
    return this.draw(this.config.connectFailProbability);
  }

  /** Queues `size` bytes on the transmitter; returns when their last byte has left. */
  reserve(nowMs: number, size: number): number {
    const start = Math.max(nowMs, this.busyUntil);
    const bandwidth = this.config.bandwidthBytesPerMs;
    const end = bandwidth === Number.POSITIVE_INFINITY ? start : start + size / bandwidth;
    this.busyUntil = end;
    return end;
  }

  /** Frees the transmitter (the sender crashed; what it had queued is gone). */
  releaseTransmitter(nowMs: number): void {
    this.busyUntil = Math.min(this.busyUntil, nowMs);
  }

  private draw(probability: number): boolean {
    return probability > 0 && this.random.next() < probability;
  }
}
