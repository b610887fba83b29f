/**
 * Unit tests of the coordinator's bookkeeping parts on their own: the hand-off tracker
 * (only the current attempt's acks and ShardStopped, from the expected sender, in the
 * expected phase, count), the persist queue (one batch at a time, decision order, retry
 * with doubling backoff) and the waiting GetShardHome requests (bounded, arrival order).
 * The machine's scripts and properties cover them in context; these pin each rule.
 */
import { describe, expect, it } from "vitest";
import type { CoordinatorMember } from "../../../src/core/coordinator/coordinator-io.js";
import { CoordinatorMembership } from "../../../src/core/coordinator/coordinator-membership.js";
import { HandOffTracker } from "../../../src/core/coordinator/hand-off-tracker.js";
import { type PendingEvent, PersistQueue } from "../../../src/core/coordinator/persist-queue.js";
import { WaitingRequests } from "../../../src/core/coordinator/waiting-requests.js";
import { MEMBER_STATUSES } from "../../../src/core/membership/member-status.js";

describe("HandOffTracker", () => {
  it("starts attempts with fresh ids in phase begin, waiting for every recipient", () => {
    const t = new HandOffTracker();
    expect(t.size).toBe(0);
    const a = t.start("s1", "A", ["A", "B", "P"], "rebalance", 100);
    const b = t.start("s2", "B", [], "shutdown", 200);
    expect(a).toMatchObject({ shard: "s1", owner: "A", reason: "rebalance", startedAtMs: 100 });
    expect(a.phase).toBe("begin");
    expect([...a.pendingAcks]).toEqual(["A", "B", "P"]);
    expect(b.id).toBe(a.id + 1);
    expect(t.size).toBe(2);
    expect(t.has("s1")).toBe(true);
    expect(t.has("s3")).toBe(false);
    expect(t.get("s2")).toBe(b);
    expect(t.get("s3")).toBeUndefined();
    expect([...t.all()]).toEqual([a, b]);
    const shards = t.shards();
    expect(shards).toEqual(new Set(["s1", "s2"]));
    shards.delete("s1"); // a copy
    expect(t.has("s1")).toBe(true);
  });

  it("moves to phase hand-off when the last pending ack arrives, and only then", () => {
    const t = new HandOffTracker();
    const r = t.start("s1", "A", ["A", "B"], "rebalance", 0);
    expect(t.ack("s1", r.id, "A")).toBe("pending");
    expect(r.phase).toBe("begin");
    expect(t.ack("s1", r.id, "A")).toBe("ignored"); // duplicate
    expect(t.ack("s1", r.id, "C")).toBe("ignored"); // not asked
    expect(t.ack("s1", r.id, "B")).toBe("all-acked");
    expect(r.phase).toBe("hand-off");
    expect(t.ack("s1", r.id, "B")).toBe("ignored"); // phase is over
  });

  it("ignores acks for another shard or another attempt", () => {
    const t = new HandOffTracker();
    const r = t.start("s1", "A", ["B"], "rebalance", 0);
    expect(t.ack("s2", r.id, "B")).toBe("ignored");
    expect(t.ack("s1", r.id + 1, "B")).toBe("ignored");
    expect(t.ack("s1", r.id - 1, "B")).toBe("ignored");
    expect(r.pendingAcks.has("B")).toBe(true);
    expect(r.phase).toBe("begin");
    // A new attempt after a drop: a late ack of the old attempt changes nothing.
    t.remove("s1");
    const r2 = t.start("s1", "A", ["B"], "rebalance", 10);
    expect(t.ack("s1", r.id, "B")).toBe("ignored");
    expect(r2.pendingAcks.has("B")).toBe(true);
    expect(t.ack("s1", r2.id, "B")).toBe("all-acked");
  });

  it("accepts ShardStopped only from the owner, for the current attempt, in phase hand-off", () => {
    const t = new HandOffTracker();
    const r = t.start("s1", "A", ["B"], "shutdown", 0);
    expect(t.stopped("s1", r.id, "A")).toBeUndefined(); // still in phase begin
    expect(t.has("s1")).toBe(true);
    t.ack("s1", r.id, "B");
    expect(t.stopped("s1", r.id, "B")).toBeUndefined(); // not the owner
    expect(t.stopped("s1", r.id + 1, "A")).toBeUndefined(); // another attempt
    expect(t.stopped("s2", r.id, "A")).toBeUndefined(); // another shard
    expect(t.has("s1")).toBe(true);
    expect(t.stopped("s1", r.id, "A")).toBe(r);
    expect(t.has("s1")).toBe(false);
    expect(t.size).toBe(0);
    expect(t.stopped("s1", r.id, "A")).toBeUndefined();
  });

  it("remove drops a record and returns it (undefined when none)", () => {
    const t = new HandOffTracker();
    const r = t.start("s1", "A", ["B"], "rebalance", 0);
    expect(t.remove("s2")).toBeUndefined();
    expect(t.remove("s1")).toBe(r);
    expect(t.has("s1")).toBe(false);
    expect(t.remove("s1")).toBeUndefined();
  });

  it("a gone region drops the hand-offs it owned and counts as having acked the others", () => {
    const t = new HandOffTracker();
    const owned = t.start("s1", "A", ["A", "B"], "rebalance", 0);
    const waitsOnlyForA = t.start("s2", "B", ["A"], "rebalance", 0);
    const waitsForAandC = t.start("s3", "C", ["A", "C"], "rebalance", 0);
    const handingOff = t.start("s4", "B", ["B"], "rebalance", 0);
    t.ack("s4", handingOff.id, "B");
    const notAsked = t.start("s5", "B", ["C"], "rebalance", 0);
    const { dropped, allAcked } = t.regionGone("A");
    expect(dropped).toEqual([owned]);
    expect(allAcked).toEqual([waitsOnlyForA]);
    expect(t.has("s1")).toBe(false);
    expect(waitsOnlyForA.phase).toBe("hand-off");
    expect(waitsForAandC.phase).toBe("begin");
    expect([...waitsForAandC.pendingAcks]).toEqual(["C"]);
    expect(handingOff.phase).toBe("hand-off");
    expect(notAsked.phase).toBe("begin");
    expect([...notAsked.pendingAcks]).toEqual(["C"]);
    expect(t.size).toBe(4);
    // Nothing more to do for A; C's departure completes s3 and drops nothing else.
    expect(t.regionGone("A")).toEqual({ dropped: [], allAcked: [] });
    const second = t.regionGone("C");
    expect(second.dropped).toEqual([waitsForAandC]);
    expect(second.allAcked).toEqual([notAsked]);
  });
});

describe("PersistQueue", () => {
  const limits = { persistBatchMax: 2, persistRetryBackoffMs: 100, persistRetryBackoffMaxMs: 700 };
  const ev = (shard: string): PendingEvent => ({
    event: { type: "shard-home-allocated", shard, region: "A" },
    hostShard: true,
  });

  it("writes one batch at a time, at most persistBatchMax events, in decision order", () => {
    const q = new PersistQueue(limits);
    expect(q.takeBatchToWrite()).toBeUndefined();
    expect(q.size).toBe(0);
    for (const s of ["1", "2", "3"]) q.enqueue(ev(s));
    expect(q.size).toBe(3);
    expect(q.inFlight).toBeUndefined();
    const b1 = q.takeBatchToWrite()!;
    expect(b1.entries.map((e) => e.event)).toEqual([ev("1").event, ev("2").event]);
    expect(q.inFlight).toBe(b1);
    expect(q.size).toBe(3); // the batch is not durable yet
    q.enqueue(ev("4"));
    expect(q.takeBatchToWrite()).toBeUndefined(); // one in flight
    expect(q.onPersisted(b1.batchId + 1)).toBeUndefined(); // not this batch
    expect(q.onPersisted(b1.batchId)).toBe(b1);
    expect(q.size).toBe(2);
    expect(q.onPersisted(b1.batchId)).toBeUndefined(); // already done
    const b2 = q.takeBatchToWrite()!;
    expect(b2.batchId).toBe(b1.batchId + 1);
    expect(b2.entries.map((e) => e.event)).toEqual([ev("3").event, ev("4").event]);
    expect(q.onPersisted(b2.batchId)).toBe(b2);
    expect(q.size).toBe(0);
    expect(q.takeBatchToWrite()).toBeUndefined();
  });

  it("retries a failed batch, same id and events, after a doubling backoff capped at the max", () => {
    const q = new PersistQueue(limits);
    q.enqueue(ev("1"));
    const b = q.takeBatchToWrite()!;
    expect(q.failing).toBe(false);
    expect(q.onFailed(b.batchId + 1)).toBeUndefined();
    expect(q.failing).toBe(false);
    expect(q.onFailed(b.batchId)).toBe(100);
    expect(q.failing).toBe(true);
    expect(q.onFailed(b.batchId)).toBeUndefined(); // not being written while backing off
    expect(q.onPersisted(b.batchId)).toBeUndefined(); // nor can it complete
    q.enqueue(ev("2"));
    expect(q.takeBatchToWrite()).toBeUndefined(); // the failed batch goes first
    const backoffs: number[] = [];
    for (let i = 0; i < 4; i++) {
      const again = q.onRetryTimer()!;
      expect(again).toBe(b);
      expect(q.onRetryTimer()).toBeUndefined(); // already being written
      backoffs.push(q.onFailed(b.batchId)!);
    }
    expect(backoffs).toEqual([200, 400, 700, 700]);
    expect(q.failing).toBe(true);
    q.onRetryTimer();
    expect(q.onPersisted(b.batchId)).toBe(b);
    expect(q.failing).toBe(false);
    expect(q.size).toBe(1);
    // A later failure starts from the minimum again.
    const next = q.takeBatchToWrite()!;
    expect(q.onFailed(next.batchId)).toBe(100);
  });

  it("has no retry without a failed batch, and a huge failure count stays finite", () => {
    const q = new PersistQueue({ ...limits, persistRetryBackoffMaxMs: Number.MAX_VALUE });
    expect(q.onRetryTimer()).toBeUndefined();
    q.enqueue(ev("1"));
    const b = q.takeBatchToWrite()!;
    let last = 0;
    for (let i = 0; i < 40; i++) {
      last = q.onFailed(b.batchId)!;
      q.onRetryTimer();
    }
    expect(last).toBe(100 * 2 ** 30);
  });
});

describe("WaitingRequests", () => {
  it("keeps requesters per shard in arrival order and refuses one shard past the bound", () => {
    const w = new WaitingRequests(2);
    expect(w.size).toBe(0);
    expect(w.add("s1", "A")).toBe(true);
    expect(w.add("s1", "B")).toBe(true);
    expect(w.add("s1", "A")).toBe(true); // once per requester
    expect(w.add("s2", "C")).toBe(true);
    expect(w.add("s3", "A")).toBe(false);
    expect(w.has("s3")).toBe(false);
    expect(w.add("s2", "A")).toBe(true); // an existing shard takes more requesters
    expect(w.size).toBe(2);
    expect(w.shards()).toEqual(["s1", "s2"]);
    expect(w.firstRequester("s1")).toBe("A");
    expect(w.firstRequester("s9")).toBeUndefined();
    expect(w.take("s1")).toEqual(["A", "B"]);
    expect(w.has("s1")).toBe(false);
    expect(w.take("s1")).toEqual([]);
    expect(w.add("s3", "A")).toBe(true); // room again
    expect(w.shards()).toEqual(["s2", "s3"]);
  });

  it("a gone requester waits for nothing; a shard left without requesters stops waiting", () => {
    const w = new WaitingRequests(10);
    w.add("s1", "A");
    w.add("s1", "B");
    w.add("s2", "A");
    w.add("s3", "C");
    w.removeRequester("A");
    expect(w.shards()).toEqual(["s1", "s3"]);
    expect(w.firstRequester("s1")).toBe("B");
    expect(w.take("s1")).toEqual(["B"]);
    w.removeRequester("Z");
    expect(w.shards()).toEqual(["s3"]);
  });
});

describe("CoordinatorMembership", () => {
  const m = (
    uniqueAddress: string,
    status: CoordinatorMember["status"],
    roles: string[] = ["shard"],
    reachable = true,
  ): CoordinatorMember => ({
    uniqueAddress,
    address: uniqueAddress,
    status,
    appVersion: "1.0.0",
    reachable,
    roles,
  });

  it("knows nothing is gone before the first membership input", () => {
    const c = new CoordinatorMembership(undefined);
    expect(c.known).toBe(false);
    expect(c.isGone("a")).toBe(false);
    c.update([m("a", "up"), m("r", "removed")]);
    expect(c.known).toBe(true);
    expect(c.isGone("a")).toBe(false);
    expect(c.isGone("r")).toBe(true);
    expect(c.isGone("x")).toBe(true);
    expect(c.get("a")?.status).toBe("up");
    expect(c.get("x")).toBeUndefined();
  });

  it("replaces the whole membership on each input", () => {
    const c = new CoordinatorMembership(undefined);
    c.update([m("a", "up"), m("b", "up")]);
    c.update([m("b", "leaving")]);
    expect(c.get("a")).toBeUndefined();
    expect(c.isGone("a")).toBe(true);
    expect(c.get("b")?.status).toBe("leaving");
  });

  it("takes new shards only on an up and reachable member", () => {
    const c = new CoordinatorMembership(undefined);
    c.update([
      m("up", "up"),
      m("cut", "up", [], false),
      m("leaving", "leaving"),
      m("weakly", "weakly-up"),
    ]);
    expect(["up", "cut", "leaving", "weakly", "absent"].map((a) => c.canTakeNewShards(a))).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
  });

  it("counts up .. exiting as alive", () => {
    const c = new CoordinatorMembership(undefined);
    expect(MEMBER_STATUSES.filter((s) => c.isAlive(m("a", s)))).toEqual([
      "up",
      "preparing-for-shutdown",
      "ready-for-shutdown",
      "leaving",
      "exiting",
    ]);
  });

  it("members with the role that may run shards: alive or down, in input order", () => {
    const c = new CoordinatorMembership("shard");
    c.update([
      m("d", "down"),
      m("j", "joining"),
      m("w", "weakly-up"),
      m("u", "up"),
      m("other", "up", ["web"]),
      m("x", "exiting"),
      m("r", "removed"),
    ]);
    expect(c.mayRunShards().map((x) => x.uniqueAddress)).toEqual(["d", "u", "x"]);
    expect(c.hasRole(m("other", "up", ["web"]))).toBe(false);
    expect(c.hasRole(m("u", "up", ["web", "shard"]))).toBe(true);
    expect(new CoordinatorMembership(undefined).hasRole(m("any", "up", []))).toBe(true);
  });

  it("blocks rebalance on an unreachable, joining or weakly-up member with the role only", () => {
    const facts = (members: CoordinatorMember[]) => {
      const c = new CoordinatorMembership("shard");
      c.update(members);
      return c.rebalanceFacts();
    };
    expect(facts([m("a", "up"), m("b", "leaving")])).toEqual({
      hasUnreachableMember: false,
      hasJoiningMember: false,
    });
    expect(facts([m("a", "up"), m("b", "up", ["shard"], false)])).toEqual({
      hasUnreachableMember: true,
      hasJoiningMember: false,
    });
    expect(facts([m("a", "up"), m("b", "joining")])).toEqual({
      hasUnreachableMember: false,
      hasJoiningMember: true,
    });
    expect(facts([m("a", "up"), m("b", "weakly-up")])).toEqual({
      hasUnreachableMember: false,
      hasJoiningMember: true,
    });
    // members without the role do not count
    expect(facts([m("a", "up"), m("b", "joining", ["web"], false)])).toEqual({
      hasUnreachableMember: false,
      hasJoiningMember: false,
    });
  });
});
