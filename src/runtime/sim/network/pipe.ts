/**
 * One direction of a simulated connection: the segments in flight from one side to the
 * other, delivered strictly in the order they were sent.
 *
 * Invariants:
 * - Order: a segment's arrival is max(its sampled arrival, the previous segment's
 *   arrival), and only the head is ever delivered, so jitter, clogs and partitions can
 *   delay a direction but never reorder it or open a gap (TCP semantics). Reordering
 *   exists only between different connections.
 * - One delivery event at a time, for the head; one segment per event, so the promise
 *   continuations of each delivery settle before the next (as with real sockets).
 * - While the direction is blocked by a partition the head is held (TCP retransmits
 *   lost packets, so for the application they are late, not missing). On heal the pipe
 *   resumes one sampled one-way delay later (the retransmission); the connection's
 *   partition timer resets it if the block lasts too long (see VirtualConnection).
 * - While the link is clogged the head waits until the clog ends.
 */
import { Deque } from "../../../base/deque.js";
import type { Disposable } from "../../../base/disposable.js";
import type { Link } from "./link.js";
import type { NetEvents } from "./net-events.js";
import type { Segment, SegmentKind } from "./segment.js";

/** Receives each segment at its delivery time. */
export type SegmentSink = (segment: Segment) => void;

/** What a pipe needs besides the clock: whether its link is currently blocked. */
export interface PipeHost extends NetEvents {
  isBlocked(link: Link): boolean;
}

/** The in-flight segments of one connection direction. */
export class Pipe {
  private readonly inFlight = new Deque<Segment>();
  /** Latest arrival of a live queued or delivered segment. */
  private lastArrival = 0;
  /** Nothing is delivered before this (retransmission after a heal). */
  private notBefore = 0;
  private held = false;
  private event: Disposable | undefined;

  constructor(
    readonly link: Link,
    private readonly host: PipeHost,
    private readonly sink: SegmentSink,
  ) {}

  /** Queues a segment whose last byte leaves at `txEnd`; returns it. */
  push(kind: SegmentKind, bytes: Uint8Array, txEnd: number, lost: boolean): Segment {
    const arrival = Math.max(txEnd + this.link.sampleDelayMs(), this.lastArrival);
    this.lastArrival = arrival;
    const segment: Segment = { kind, bytes, txEnd, arrival, lost, dead: false };
    this.inFlight.push(segment);
    this.ensureScheduled();
    return segment;
  }

  /** Forgets dead segments so later ones are not delayed behind them. */
  compact(): void {
    const live = [...this.inFlight].filter((s) => !s.dead);
    this.inFlight.clear();
    for (const s of live) this.inFlight.push(s);
    this.lastArrival = live.reduce((t, s) => Math.max(t, s.arrival), 0);
    this.reschedule();
  }

  /** Drops everything in flight and stops delivering. */
  clear(): void {
    for (const s of this.inFlight) s.dead = true;
    this.inFlight.clear();
    this.event?.dispose();
    this.event = undefined;
  }

  /** After a partition change: a held pipe whose link is open again resumes. */
  maybeResume(): void {
    if (!this.held || this.host.isBlocked(this.link)) return;
    this.held = false;
    this.notBefore = this.host.now + this.link.sampleDelayMs();
    this.ensureScheduled();
  }

  private reschedule(): void {
    this.event?.dispose();
    this.event = undefined;
    this.ensureScheduled();
  }

  private ensureScheduled(): void {
    if (this.event !== undefined || this.held) return;
    const head = this.liveHead();
    if (head === undefined) return;
    const at = Math.max(head.arrival, this.notBefore, this.link.clogUntil, this.host.now);
    this.event = this.host.scheduleAt(at, () => this.onDue());
  }

  private onDue(): void {
    this.event = undefined;
    const head = this.liveHead();
    if (head === undefined) return;
    const now = this.host.now;
    if (this.host.isBlocked(this.link)) {
      this.held = true;
      return;
    }
    if (this.link.clogUntil > now || this.notBefore > now || head.arrival > now) {
      this.ensureScheduled();
      return;
    }
    this.inFlight.shift();
    this.sink(head);
    this.ensureScheduled();
  }

  private liveHead(): Segment | undefined {
    let head = this.inFlight.peek();
    while (head?.dead) {
      this.inFlight.shift();
      head = this.inFlight.peek();
    }
    return head;
  }
}
