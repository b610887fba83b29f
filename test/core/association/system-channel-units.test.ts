/**
 * The system-message channel of an association (src/core/association): the sender numbers,
 * buffers up to its bound, drops on cumulative ack, resends what is due and restarts
 * numbering for a new peer incarnation; the receiver delivers each number exactly once and
 * in order (go-back-N on a gap). Plus the reconnect backoff. A property drives a sender and
 * a receiver over a lossy, duplicating, reconnecting link.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backoffMs } from "../../../src/core/association/backoff.js";
import {
  SystemMessageReceiver,
  SystemMessageSender,
} from "../../../src/core/association/system-channel.js";

const bytes = (n: number) => new Uint8Array([n]);

describe("SystemMessageSender", () => {
  it("numbers messages from 1, keeps them in order and refuses past bufferMax", () => {
    const s = new SystemMessageSender(3);
    expect(s.size).toBe(0);
    const a = s.enqueue(bytes(1), 10);
    const b = s.enqueue(bytes(2), 11);
    const c = s.enqueue(bytes(3), 12);
    expect([a?.seq, b?.seq, c?.seq]).toEqual([1n, 2n, 3n]);
    expect(a).toMatchObject({ payload: bytes(1), enqueuedAt: 10, lastSentAt: -1 });
    expect(s.size).toBe(3);
    expect(s.enqueue(bytes(4), 13)).toBeUndefined();
    expect(s.size).toBe(3);
    // Room again after an ack; numbering goes on where it was, the refused one took no number.
    expect(s.ack(1n)).toBe(1);
    expect(s.enqueue(bytes(4), 14)?.seq).toBe(4n);
  });

  it("acks cumulatively: drops up to and including the number, counts them, ignores old acks", () => {
    const s = new SystemMessageSender(10);
    for (let i = 1; i <= 5; i++) s.enqueue(bytes(i), i);
    expect(s.ack(0n)).toBe(0);
    expect(s.ack(3n)).toBe(3);
    expect(s.size).toBe(2);
    expect(s.ack(2n)).toBe(0); // older than what was already acked
    expect(s.ack(3n)).toBe(0);
    expect(s.due(100, 1_000).map((m) => m.seq)).toEqual([4n, 5n]);
    expect(s.ack(99n)).toBe(2);
    expect(s.size).toBe(0);
    expect(s.ack(100n)).toBe(0);
  });

  it("is due when never sent, or sent at least resendAfterMs ago (boundary included)", () => {
    const s = new SystemMessageSender(10);
    const a = s.enqueue(bytes(1), 0)!;
    const b = s.enqueue(bytes(2), 0)!;
    const c = s.enqueue(bytes(3), 0)!;
    expect(s.due(0, 100)).toEqual([a, b, c]);
    a.lastSentAt = 0;
    b.lastSentAt = 50;
    // c never sent: always due.
    expect(s.due(99, 100)).toEqual([c]);
    expect(s.due(100, 100)).toEqual([a, c]);
    expect(s.due(149, 100)).toEqual([a, c]);
    expect(s.due(150, 100)).toEqual([a, b, c]);
    // Sent at time 0 exactly is "sent", not "never sent".
    c.lastSentAt = 0;
    expect(s.due(99, 100)).toEqual([]);
  });

  it("resetSent marks every pending message unsent, so a new connection carries them all", () => {
    const s = new SystemMessageSender(10);
    for (let i = 1; i <= 3; i++) s.enqueue(bytes(i), 0);
    for (const m of s.due(0, 1_000)) m.lastSentAt = 5;
    expect(s.due(6, 1_000)).toEqual([]);
    s.resetSent();
    expect(s.due(6, 1_000).map((m) => [m.seq, m.lastSentAt])).toEqual([
      [1n, -1],
      [2n, -1],
      [3n, -1],
    ]);
  });

  it("reports the age of the oldest unacked message, 0 when none", () => {
    const s = new SystemMessageSender(10);
    expect(s.oldestAgeMs(1_000)).toBe(0);
    s.enqueue(bytes(1), 100);
    s.enqueue(bytes(2), 400);
    expect(s.oldestAgeMs(1_000)).toBe(900);
    s.ack(1n);
    expect(s.oldestAgeMs(1_000)).toBe(600);
    s.ack(2n);
    expect(s.oldestAgeMs(1_000)).toBe(0);
  });

  it("clear forgets everything and restarts numbering at 1 for a new peer incarnation", () => {
    const s = new SystemMessageSender(2);
    s.enqueue(bytes(1), 0);
    s.enqueue(bytes(2), 0);
    s.clear();
    expect(s.size).toBe(0);
    expect(s.due(0, 1)).toEqual([]);
    expect(s.oldestAgeMs(50)).toBe(0);
    expect(s.enqueue(bytes(3), 1)?.seq).toBe(1n);
    expect(s.enqueue(bytes(4), 1)?.seq).toBe(2n);
  });
});

describe("SystemMessageReceiver", () => {
  it("delivers the expected number, calls older ones duplicates and newer ones gaps", () => {
    const r = new SystemMessageReceiver();
    expect(r.ackSeq).toBe(0n);
    expect(r.receive(2n)).toBe("gap");
    expect(r.ackSeq).toBe(0n);
    expect(r.receive(1n)).toBe("deliver");
    expect(r.ackSeq).toBe(1n);
    expect(r.receive(1n)).toBe("duplicate");
    expect(r.receive(0n)).toBe("duplicate");
    expect(r.receive(2n)).toBe("deliver");
    expect(r.receive(4n)).toBe("gap");
    expect(r.receive(3n)).toBe("deliver");
    expect(r.ackSeq).toBe(3n);
  });
});

describe("sender and receiver over a lossy, duplicating, reconnecting link (property)", () => {
  type Step =
    | { kind: "enqueue" }
    | { kind: "tick"; ms: number }
    | { kind: "deliver"; index: number }
    | { kind: "drop"; index: number }
    | { kind: "duplicate"; index: number }
    | { kind: "ack" }
    | { kind: "reconnect" };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.constant<Step>({ kind: "enqueue" }),
    fc.integer({ min: 1, max: 300 }).map<Step>((ms) => ({ kind: "tick", ms })),
    fc.nat(20).map<Step>((index) => ({ kind: "deliver", index })),
    fc.nat(20).map<Step>((index) => ({ kind: "drop", index })),
    fc.nat(20).map<Step>((index) => ({ kind: "duplicate", index })),
    fc.constant<Step>({ kind: "ack" }),
    fc.constant<Step>({ kind: "reconnect" }),
  );

  it("delivers every enqueued message exactly once, in order, once the link heals", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
        const resendAfterMs = 100;
        const sender = new SystemMessageSender(1_000);
        const receiver = new SystemMessageReceiver();
        let now = 0;
        let enqueued = 0;
        let acked = 0;
        let inFlight: { seq: bigint; payload: Uint8Array }[] = [];
        const delivered: number[] = [];
        const flush = () => {
          for (const m of sender.due(now, resendAfterMs)) {
            m.lastSentAt = now;
            inFlight.push({ seq: m.seq, payload: m.payload });
          }
        };
        const arrive = (i: number) => {
          const m = inFlight[i];
          if (m === undefined) return;
          inFlight.splice(i, 1);
          if (receiver.receive(m.seq) === "deliver") delivered.push(m.payload[0]!);
        };
        for (const s of steps) {
          switch (s.kind) {
            case "enqueue":
              sender.enqueue(bytes(++enqueued % 256), now);
              flush();
              break;
            case "tick":
              now += s.ms;
              flush();
              break;
            case "deliver":
              arrive(s.index % Math.max(1, inFlight.length));
              break;
            case "drop":
              inFlight.splice(s.index % Math.max(1, inFlight.length), 1);
              break;
            case "duplicate": {
              const m = inFlight[s.index % Math.max(1, inFlight.length)];
              if (m !== undefined) inFlight.push(m);
              break;
            }
            case "ack":
              sender.ack(receiver.ackSeq);
              acked = Number(receiver.ackSeq);
              break;
            case "reconnect":
              inFlight = [];
              sender.resetSent();
              flush();
              break;
          }
          expect(delivered).toEqual(Array.from(delivered, (_, i) => (i + 1) % 256));
          expect(sender.size).toBe(enqueued - acked);
        }
        // Heal: deliver in order, ack, until nothing is left.
        for (let round = 0; round < enqueued + 2 && sender.size > 0; round++) {
          inFlight = [];
          sender.resetSent();
          flush();
          while (inFlight.length > 0) arrive(0);
          sender.ack(receiver.ackSeq);
        }
        expect(sender.size).toBe(0);
        expect(receiver.ackSeq).toBe(BigInt(enqueued));
        expect(delivered).toEqual(Array.from({ length: enqueued }, (_, i) => (i + 1) % 256));
      }),
      { numRuns: 200 },
    );
  });
});

describe("backoffMs", () => {
  const s = { minMs: 100, maxMs: 10_000, randomFactor: 0.5 };

  it("doubles from minMs per attempt without jitter, capped at maxMs", () => {
    expect([0, 1, 2, 3, 6, 7, 8].map((n) => backoffMs(s, n, 0))).toEqual([
      100, 200, 400, 800, 6_400, 10_000, 10_000,
    ]);
  });

  it("adds up to randomFactor of jitter, still capped at maxMs", () => {
    expect(backoffMs(s, 0, 0.5)).toBe(125);
    expect(backoffMs(s, 2, 0.999)).toBeCloseTo(400 * 1.4995, 6);
    expect(backoffMs(s, 6, 0.5)).toBe(8_000);
    expect(backoffMs(s, 6, 0.9)).toBe(9_280); // 6400 · 1.45
    expect(backoffMs({ ...s, randomFactor: 1 }, 6, 0.75)).toBe(10_000); // 6400 · 1.75, capped
    expect(backoffMs(s, 100, 0.9)).toBe(10_000);
  });

  it("stays finite for huge attempt numbers (exponent capped)", () => {
    const big = { minMs: 1, maxMs: Number.MAX_VALUE, randomFactor: 0 };
    expect(backoffMs(big, 1_000, 0)).toBe(2 ** 30);
    expect(backoffMs(big, 30, 0)).toBe(2 ** 30);
    expect(backoffMs(big, 29, 0)).toBe(2 ** 29);
  });
});
