/**
 * Reliable delivery of system messages (watch, unwatch, terminated, cluster control)
 * between two node incarnations, over connections that may drop: the sender numbers
 * every message, keeps it until a cumulative ack covers it and resends on reconnect and
 * periodically; the receiver delivers each sequence number exactly once, in order, and
 * acks cumulatively. A gap (only possible across reconnects) is dropped: the sender
 * resends everything unacked from the first missing number (go-back-N).
 *
 * Invariants: seq starts at 1 and increases by 1; the sender's buffer is bounded by
 * `bufferMax` (overflow is the caller's signal to quarantine); ack is monotonic.
 */
import { Deque } from "../../base/deque.js";

export interface PendingSystemMessage {
  readonly seq: bigint;
  readonly payload: Uint8Array;
  /** When it was first enqueued (ms), for give-up. */
  readonly enqueuedAt: number;
  /** When it was last written (ms), for resend; -1 = never. */
  lastSentAt: number;
}

export class SystemMessageSender {
  private nextSeq = 1n;
  private readonly unacked = new Deque<PendingSystemMessage>();

  constructor(private readonly bufferMax: number) {}

  get size(): number {
    return this.unacked.length;
  }

  /** Numbers a message; returns undefined when the buffer is full (caller quarantines). */
  enqueue(payload: Uint8Array, nowMs: number): PendingSystemMessage | undefined {
    if (this.unacked.length >= this.bufferMax) return undefined;
    const m: PendingSystemMessage = {
      seq: this.nextSeq++,
      payload,
      enqueuedAt: nowMs,
      lastSentAt: -1,
    };
    this.unacked.push(m);
    return m;
  }

  /** Drops every message up to and including `cumulativeSeq`; returns how many. */
  ack(cumulativeSeq: bigint): number {
    let n = 0;
    for (
      let head = this.unacked.peek();
      head !== undefined && head.seq <= cumulativeSeq;
      head = this.unacked.peek()
    ) {
      this.unacked.shift();
      n++;
    }
    return n;
  }

  /** Messages to (re)send now: never sent, or last sent at least `resendAfterMs` ago. */
  due(nowMs: number, resendAfterMs: number): PendingSystemMessage[] {
    const out: PendingSystemMessage[] = [];
    for (const m of this.unacked)
      if (m.lastSentAt < 0 || nowMs - m.lastSentAt >= resendAfterMs) out.push(m);
    return out;
  }

  /** Marks every pending message as unsent (a new connection must carry them all). */
  resetSent(): void {
    for (const m of this.unacked) m.lastSentAt = -1;
  }

  /** Age of the oldest unacked message (0 when none). */
  oldestAgeMs(nowMs: number): number {
    const head = this.unacked.peek();
    return head === undefined ? 0 : nowMs - head.enqueuedAt;
  }

  /**
   * Forgets everything and restarts numbering at 1: the peer incarnation is gone, and a
   * new one starts with a fresh receiver that expects seq 1.
   */
  clear(): void {
    this.unacked.clear();
    this.nextSeq = 1n;
  }
}

export type ReceiveVerdict = "deliver" | "duplicate" | "gap";

export class SystemMessageReceiver {
  private expected = 1n;

  /** Decides what to do with an arriving sequence number; "deliver" advances. */
  receive(seq: bigint): ReceiveVerdict {
    if (seq === this.expected) {
      this.expected++;
      return "deliver";
    }
    return seq < this.expected ? "duplicate" : "gap";
  }

  /** The cumulative ack to send: everything up to here was delivered. */
  get ackSeq(): bigint {
    return this.expected - 1n;
  }
}
