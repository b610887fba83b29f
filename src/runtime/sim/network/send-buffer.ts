/**
 * The send buffer of one connection end: segments handed to `send`/`close` whose last
 * byte has not yet left the link's transmitter (bandwidth queueing).
 *
 * `bufferedBytes` is the backpressure signal of the Transport port. With unlimited
 * bandwidth data leaves at once and is never buffered (no event either); a FIN is always
 * tracked, because the end's local close completes when its FIN has been transmitted.
 * Transmission times are non-decreasing (one FIFO transmitter per link), so one event
 * for the head suffices.
 */
import { Deque } from "../../../base/deque.js";
import type { Disposable } from "../../../base/disposable.js";
import type { NetEvents } from "./net-events.js";
import type { Segment } from "./segment.js";

/** Untransmitted segments of one connection end. */
export class SendBuffer {
  private readonly queue = new Deque<Segment>();
  private bytes = 0;
  private event: Disposable | undefined;

  constructor(
    private readonly events: NetEvents,
    private readonly onTransmitted: (segment: Segment) => void,
  ) {}

  /** Bytes queued but not yet transmitted. */
  get bufferedBytes(): number {
    return this.bytes;
  }

  /** Tracks a segment until its transmission ends. */
  add(segment: Segment): void {
    if (segment.kind === "data" && segment.txEnd <= this.events.now) return;
    this.queue.push(segment);
    this.bytes += segment.bytes.length;
    this.ensureScheduled();
  }

  /** Drops every untransmitted segment (marks them dead so the pipe skips them). */
  dropAll(): void {
    const now = this.events.now;
    for (const segment of this.queue) if (segment.txEnd > now) segment.dead = true;
    this.queue.clear();
    this.bytes = 0;
    this.event?.dispose();
    this.event = undefined;
  }

  private ensureScheduled(): void {
    const head = this.queue.peek();
    if (this.event !== undefined || head === undefined) return;
    this.event = this.events.scheduleAt(Math.max(head.txEnd, this.events.now), () => this.onDue());
  }

  private onDue(): void {
    this.event = undefined;
    const now = this.events.now;
    let head = this.queue.peek();
    while (head !== undefined && head.txEnd <= now) {
      this.queue.shift();
      this.bytes -= head.bytes.length;
      this.onTransmitted(head);
      head = this.queue.peek();
    }
    this.ensureScheduled();
  }
}
