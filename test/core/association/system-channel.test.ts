/**
 * Unit and property tests of the reliable system-message channel
 * (src/core/association/system-channel.ts; docs/remoting.md): sequence numbers, the
 * bounded buffer, cumulative acks, resend timing, reconnect (resetSent), a new peer
 * incarnation (clear), the receiver's deliver/duplicate/gap verdicts, and the age used
 * by the caller to give up. The property drives a sender and a receiver over a channel
 * that drops, duplicates, reorders and reconnects, with go-back-N resends, and checks
 * every message is delivered exactly once and in order.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  SystemMessageReceiver,
  SystemMessageSender,
} from "../../../src/core/association/system-channel.js";

const bytes = (n: number) => Uint8Array.of(n);
const seqs = (ms: readonly { seq: bigint }[]) => ms.map((m) => m.seq);

describe("SystemMessageSender", () => {
  it("numbers messages from 1 upwards by one, keeping payload and enqueue time", () => {
    const s = new SystemMessageSender(10);
    const a = s.enqueue(bytes(1), 100);
    const b = s.enqueue(bytes(2), 150);
    const c = s.enqueue(bytes(3), 150);
    expect([a?.seq, b?.seq, c?.seq]).toEqual([1n, 2n, 3n]);
    expect(a?.payload).toEqual(bytes(1));
    expect(b?.enqueuedAt).toBe(150);
    expect(a?.lastSentAt).toBe(-1);
    expect(s.size).toBe(3);
  });

  it("refuses a message when bufferMax are unacked (caller quarantines), keeps numbering", () => {
    const s = new SystemMessageSender(2);
    expect(s.enqueue(bytes(1), 0)?.seq).toBe(1n);
    expect(s.enqueue(bytes(2), 0)?.seq).toBe(2n);
    expect(s.enqueue(bytes(3), 0)).toBeUndefined();
    expect(s.size).toBe(2);
    // the refused message consumed no sequence number
    expect(s.ack(1n)).toBe(1);
    expect(s.enqueue(bytes(3), 0)?.seq).toBe(3n);
    expect(s.enqueue(bytes(4), 0)).toBeUndefined();
  });

  it("a cumulative ack drops every message up to and including it, and reports how many", () => {
    const s = new SystemMessageSender(10);
    for (let i = 1; i <= 5; i++) s.enqueue(bytes(i), 0);
    expect(s.ack(0n)).toBe(0);
    expect(s.size).toBe(5);
    expect(s.ack(3n)).toBe(3);
    expect(seqs(s.due(0, 1000))).toEqual([4n, 5n]);
    // an old (stale or duplicated) ack changes nothing: acks are monotonic
    expect(s.ack(2n)).toBe(0);
    expect(s.ack(3n)).toBe(0);
    expect(s.size).toBe(2);
    // an ack beyond what was sent empties the buffer without error
    expect(s.ack(99n)).toBe(2);
    expect(s.size).toBe(0);
    expect(s.ack(100n)).toBe(0);
  });

  it("due: never-sent messages at once, sent ones only after resendAfterMs (inclusive)", () => {
    const s = new SystemMessageSender(10);
    s.enqueue(bytes(1), 0);
    s.enqueue(bytes(2), 0);
    const first = s.due(1000, 500);
    expect(seqs(first)).toEqual([1n, 2n]);
    for (const m of first) m.lastSentAt = 1000;
    s.enqueue(bytes(3), 1200);
    expect(seqs(s.due(1200, 500))).toEqual([3n]);
    expect(seqs(s.due(1499, 500))).toEqual([3n]);
    // exactly resendAfterMs after the last send: due again
    expect(seqs(s.due(1500, 500))).toEqual([1n, 2n, 3n]);
    const m3 = s.due(1500, 500)[2];
    if (m3 !== undefined) m3.lastSentAt = 1500;
    expect(seqs(s.due(1999, 500))).toEqual([1n, 2n]);
  });

  it("due with a message sent at time 0 is not mistaken for never sent", () => {
    const s = new SystemMessageSender(10);
    const m = s.enqueue(bytes(1), 0);
    if (m === undefined) throw new Error("enqueue refused");
    m.lastSentAt = 0;
    expect(s.due(0, 100)).toEqual([]);
    expect(s.due(99, 100)).toEqual([]);
    expect(seqs(s.due(100, 100))).toEqual([1n]);
  });

  it("resetSent makes every pending message due at once (a new connection carries them all)", () => {
    const s = new SystemMessageSender(10);
    for (let i = 1; i <= 3; i++) s.enqueue(bytes(i), 0);
    for (const m of s.due(0, 1000)) m.lastSentAt = 0;
    expect(s.due(10, 1000)).toEqual([]);
    s.resetSent();
    expect(seqs(s.due(10, 1000))).toEqual([1n, 2n, 3n]);
    expect(s.due(10, 1000).every((m) => m.lastSentAt === -1)).toBe(true);
  });

  it("oldestAgeMs measures the oldest unacked message (0 when none): the give-up clock", () => {
    const s = new SystemMessageSender(10);
    expect(s.oldestAgeMs(5000)).toBe(0);
    s.enqueue(bytes(1), 100);
    s.enqueue(bytes(2), 400);
    expect(s.oldestAgeMs(1000)).toBe(900);
    // resending does not reset the age: give-up counts from the first enqueue
    for (const m of s.due(1000, 0)) m.lastSentAt = 1000;
    s.resetSent();
    expect(s.oldestAgeMs(1000)).toBe(900);
    s.ack(1n);
    expect(s.oldestAgeMs(1000)).toBe(600);
    s.ack(2n);
    expect(s.oldestAgeMs(1000)).toBe(0);
  });

  it("clear forgets everything and restarts numbering at 1 for a new peer incarnation", () => {
    const s = new SystemMessageSender(2);
    s.enqueue(bytes(1), 0);
    s.enqueue(bytes(2), 0);
    expect(s.enqueue(bytes(3), 0)).toBeUndefined();
    s.clear();
    expect(s.size).toBe(0);
    expect(s.oldestAgeMs(10)).toBe(0);
    expect(s.due(10, 0)).toEqual([]);
    expect(s.enqueue(bytes(9), 10)?.seq).toBe(1n);
    // a fresh receiver (the new incarnation) accepts it
    expect(new SystemMessageReceiver().receive(1n)).toBe("deliver");
  });
});

describe("SystemMessageReceiver", () => {
  it("delivers the expected number, acks cumulatively, flags duplicates and gaps", () => {
    const r = new SystemMessageReceiver();
    expect(r.ackSeq).toBe(0n);
    expect(r.receive(0n)).toBe("duplicate");
    expect(r.receive(2n)).toBe("gap");
    expect(r.ackSeq).toBe(0n);
    expect(r.receive(1n)).toBe("deliver");
    expect(r.ackSeq).toBe(1n);
    expect(r.receive(1n)).toBe("duplicate");
    expect(r.receive(3n)).toBe("gap");
    expect(r.receive(2n)).toBe("deliver");
    expect(r.receive(3n)).toBe("deliver");
    expect(r.ackSeq).toBe(3n);
    expect(r.receive(2n)).toBe("duplicate");
    expect(r.receive(5n)).toBe("gap");
    expect(r.ackSeq).toBe(3n);
  });
});

/** One step of the lossy-channel model. */
type Step =
  | { readonly kind: "enqueue" }
  | { readonly kind: "flush"; readonly advanceMs: number }
  | { readonly kind: "deliver"; readonly index: number; readonly duplicate: boolean }
  | { readonly kind: "drop"; readonly index: number }
  | { readonly kind: "ack-back" }
  | { readonly kind: "reconnect" };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ kind: "enqueue" }),
  fc.record({ kind: fc.constant("flush" as const), advanceMs: fc.integer({ min: 0, max: 300 }) }),
  fc.record({
    kind: fc.constant("deliver" as const),
    index: fc.nat({ max: 7 }),
    duplicate: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("drop" as const), index: fc.nat({ max: 7 }) }),
  fc.constant<Step>({ kind: "ack-back" }),
  fc.constant<Step>({ kind: "reconnect" }),
);

describe("system channel over a lossy, duplicating, reordering link", () => {
  it("delivers every accepted message exactly once and in order; acks drain the buffer", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
        const resendMs = 100;
        const sender = new SystemMessageSender(16);
        const receiver = new SystemMessageReceiver();
        let now = 0;
        let next = 0;
        const accepted: number[] = [];
        const delivered: number[] = [];
        let wire: { seq: bigint; payload: Uint8Array }[] = [];
        const flush = () => {
          for (const m of sender.due(now, resendMs)) {
            wire.push({ seq: m.seq, payload: m.payload });
            m.lastSentAt = now;
          }
        };
        const receive = (f: { seq: bigint; payload: Uint8Array }) => {
          const verdict = receiver.receive(f.seq);
          if (verdict === "deliver") delivered.push(f.payload[0] as number);
        };
        for (const s of steps) {
          if (s.kind === "enqueue") {
            const value = next++ % 256;
            if (sender.enqueue(bytes(value), now) !== undefined) accepted.push(value);
          } else if (s.kind === "flush") {
            now += s.advanceMs;
            flush();
          } else if (s.kind === "deliver" || s.kind === "drop") {
            if (wire.length === 0) continue;
            const i = s.index % wire.length;
            const f = wire[i] as { seq: bigint; payload: Uint8Array };
            if (s.kind === "deliver") {
              receive(f);
              if (!s.duplicate) wire.splice(i, 1);
            } else wire.splice(i, 1);
          } else if (s.kind === "ack-back") {
            sender.ack(receiver.ackSeq);
          } else {
            wire = [];
            sender.resetSent();
          }
          // never delivered out of order or twice, at any point
          expect(delivered).toEqual(accepted.slice(0, delivered.length));
        }
        // quiesce: a perfect link until everything is acked
        for (let round = 0; sender.size > 0; round++) {
          expect(round).toBeLessThan(100);
          now += resendMs;
          wire = [];
          flush();
          for (const f of wire) receive(f);
          sender.ack(receiver.ackSeq);
        }
        expect(delivered).toEqual(accepted);
        expect(receiver.ackSeq).toBe(BigInt(accepted.length));
      }),
      { seed: 0x5c4a11, numRuns: 300 },
    );
  });
});
