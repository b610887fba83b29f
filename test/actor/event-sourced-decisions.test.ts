/**
 * The decisions of an event-sourced incarnation (actor/event-sourced/
 * event-sourced-decisions.ts), driven step by step: command admission per phase, the
 * PoisonPill, effect plans, snapshot points, failed appends, and the encoding of one
 * append. The driver (event-sourced-behavior.ts) is tested end to end in
 * event-sourced.test.ts.
 */
import { describe, expect, it } from "vitest";
import { Effect } from "../../src/actor/event-sourced/effect.js";
import {
  admitCommand,
  effectPlan,
  journalEventsOf,
  persistFailureVerdict,
  poisonPillDecision,
  snapshotDue,
} from "../../src/actor/event-sourced/event-sourced-decisions.js";
import { FencedWriteError, JournalConflictError } from "../../src/ports/journal.js";

describe("admitCommand", () => {
  it("handles a command while running, whatever is stashed", () => {
    expect(admitCommand("running", 0, 5, 10)).toEqual({ kind: "handle" });
    expect(admitCommand("running", 10, 5, 10)).toEqual({ kind: "handle" });
  });

  it("stashes while recovering up to recoveryStashMax, then overflows at that bound", () => {
    expect(admitCommand("recovering", 0, 5, 10)).toEqual({ kind: "stash" });
    expect(admitCommand("recovering", 4, 5, 10)).toEqual({ kind: "stash" });
    expect(admitCommand("recovering", 5, 5, 10)).toEqual({ kind: "overflow", limit: 5 });
  });

  it("stashes while an append is in flight up to the stash capacity", () => {
    expect(admitCommand("persisting", 5, 5, 10)).toEqual({ kind: "stash" });
    expect(admitCommand("persisting", 9, 5, 10)).toEqual({ kind: "stash" });
    expect(admitCommand("persisting", 10, 5, 10)).toEqual({ kind: "overflow", limit: 10 });
  });
});

describe("poisonPillDecision", () => {
  it("stops at once when running, waits in the stash otherwise", () => {
    expect(poisonPillDecision("running", false)).toBe("stop");
    expect(poisonPillDecision("running", true)).toBe("stop");
    expect(poisonPillDecision("recovering", false)).toBe("stash");
    expect(poisonPillDecision("persisting", false)).toBe("stash");
  });

  it("remembers to stop when idle when the stash is full", () => {
    expect(poisonPillDecision("recovering", true)).toBe("stop-when-idle");
    expect(poisonPillDecision("persisting", true)).toBe("stop-when-idle");
  });
});

describe("effectPlan", () => {
  it("tells the four plans apart", () => {
    expect(effectPlan(Effect.unhandled())).toBe("unhandled");
    expect(effectPlan(Effect.stash())).toBe("stash");
    expect(effectPlan(Effect.none())).toBe("side-effects");
    expect(effectPlan(Effect.stop())).toBe("side-effects");
    expect(effectPlan(Effect.persist(["a"]))).toBe("persist");
    expect(effectPlan(Effect.persist(["a", "b"]).thenStop())).toBe("persist");
    expect(effectPlan(Effect.persist([]))).toBe("side-effects");
  });
});

describe("snapshotDue", () => {
  it("is due when the sequence number crosses a multiple of the interval", () => {
    expect(snapshotDue(0, 3, 3)).toBe(true);
    expect(snapshotDue(2, 4, 3)).toBe(true);
    expect(snapshotDue(3, 5, 3)).toBe(false);
    expect(snapshotDue(5, 12, 3)).toBe(true);
    expect(snapshotDue(0, 2, 3)).toBe(false);
  });

  it("is never due without an interval", () => {
    expect(snapshotDue(0, 1_000, undefined)).toBe(false);
  });
});

describe("persistFailureVerdict", () => {
  it("stops for good on a fenced write or a journal conflict", () => {
    const fenced = new FencedWriteError({ key: "shard-1", token: 3 }, 4, "Account|a");
    expect(persistFailureVerdict(fenced)).toEqual({ kind: "stop", reason: "fenced" });
    expect(persistFailureVerdict(new JournalConflictError("Account|a", 7, 8))).toEqual({
      kind: "stop",
      reason: "conflict",
    });
  });

  it("fails (to be restarted) on anything else", () => {
    expect(persistFailureVerdict(new Error("disk full"))).toEqual({ kind: "fail" });
    expect(persistFailureVerdict("timeout")).toEqual({ kind: "fail" });
    expect(persistFailureVerdict(undefined)).toEqual({ kind: "fail" });
  });
});

describe("journalEventsOf", () => {
  const encode = (e: string) => ({ serializerId: 9, bytes: new TextEncoder().encode(e) });

  it("encodes each event with one timestamp, tags only when the tagger gives some", () => {
    const out = journalEventsOf(["a", "bb"], encode, undefined, 1_234);
    expect(out).toEqual([
      { serializerId: 9, bytes: new TextEncoder().encode("a"), timestampMs: 1_234 },
      { serializerId: 9, bytes: new TextEncoder().encode("bb"), timestampMs: 1_234 },
    ]);
    expect(Object.hasOwn(out[0] as object, "tags")).toBe(false);
    const tagged = journalEventsOf(["a", "bb"], encode, (e) => [`len${e.length}`], 5);
    expect(tagged.map((e) => e.tags)).toEqual([["len1"], ["len2"]]);
  });
});
