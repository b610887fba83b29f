/** Scripted tests of the replicator machine's decisions (no IO). */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import { GCounter, ORMap, ORSet, PNCounter } from "../../../src/core/ddata/index.js";
import {
  ReplicatorMachine,
  type ReplicatorOutput,
} from "../../../src/core/ddata/replicator-machine.js";
import {
  ALL,
  consistencyFrom,
  DataDeletedError,
  GetFailureError,
  LOCAL,
  MAJORITY,
  ModifyFailureError,
  majority,
  requiredReplicas,
  resolveReplicatorSettings,
  TooManyKeysError,
  UpdateTimeoutError,
} from "../../../src/core/ddata/replicator-types.js";

function machine(self = "a", settings = {}) {
  const m = new ReplicatorMachine({ self, settings, randomInt: () => 0 });
  m.handle({ type: "members", members: ["a", "b", "c", "d", "e"], unreachable: [] }, 0);
  return m;
}
const sends = (out: ReplicatorOutput[]) => out.filter((o) => o.type === "send");
const replies = (out: ReplicatorOutput[]) => out.flatMap((o) => (o.type === "reply" ? [o] : []));
const inc = (node: string) => (c: PNCounter | GCounter) => (c as PNCounter).increment(node, 1);

describe("consistency levels", () => {
  it("required replicas: local 1, from(n) capped, majority with minCap, all", () => {
    expect(requiredReplicas(LOCAL, 5)).toBe(1);
    expect(requiredReplicas(consistencyFrom(3), 5)).toBe(3);
    expect(requiredReplicas(consistencyFrom(9), 5)).toBe(5);
    expect(requiredReplicas(MAJORITY, 5)).toBe(3);
    expect(requiredReplicas(MAJORITY, 4)).toBe(3);
    expect(requiredReplicas(majority(5), 7)).toBe(5);
    expect(requiredReplicas(majority(9), 3)).toBe(3);
    expect(requiredReplicas(ALL, 5)).toBe(5);
  });

  it("settings are validated naming the key", () => {
    expect(() => resolveReplicatorSettings({ gossipIntervalMs: 0 })).toThrow(ConfigError);
    expect(() => resolveReplicatorSettings({ gossipIntervalMs: 0 })).toThrow(
      /ddata\.gossipIntervalMs/,
    );
  });
});

describe("replicator machine", () => {
  it("local update answers at once; the delta goes out at the next delta tick", () => {
    const m = machine();
    const out = m.handle(
      {
        type: "update",
        req: 1,
        key: "k",
        initial: PNCounter.empty,
        modify: inc("a") as never,
        consistency: LOCAL,
      },
      0,
    );
    expect(replies(out)).toEqual([{ type: "reply", req: 1, result: { ok: true } }]);
    expect(sends(out)).toEqual([]);
    const tick = m.handle({ type: "timer", key: "delta" }, 20);
    expect(sends(tick).map((s) => (s.type === "send" ? s.to : ""))).toEqual(["b", "c", "d", "e"]);
  });

  it("majority write completes after 2 of 4 acks; without them it times out with UpdateTimeout", () => {
    const m = machine();
    const out = m.handle(
      {
        type: "update",
        req: 7,
        key: "k",
        initial: PNCounter.empty,
        modify: inc("a") as never,
        consistency: MAJORITY,
      },
      0,
    );
    expect(sends(out)).toHaveLength(4);
    expect(
      replies(m.handle({ type: "peer", from: "b", msg: { t: "write-ack", id: 7 } }, 1)),
    ).toEqual([]);
    // a duplicated ack from the same replica does not count twice
    expect(
      replies(m.handle({ type: "peer", from: "b", msg: { t: "write-ack", id: 7 } }, 1)),
    ).toEqual([]);
    expect(
      replies(m.handle({ type: "peer", from: "c", msg: { t: "write-ack", id: 7 } }, 2))[0]?.result,
    ).toEqual({
      ok: true,
    });

    m.handle(
      {
        type: "update",
        req: 8,
        key: "k",
        initial: PNCounter.empty,
        modify: inc("a") as never,
        consistency: ALL,
        timeoutMs: 50,
      },
      3,
    );
    const r = replies(m.handle({ type: "timer", key: "op:8" }, 53))[0];
    expect(r?.result.ok).toBe(false);
    expect(r?.result.ok === false && r.result.error).toBeInstanceOf(UpdateTimeoutError);
  });

  it("majority read merges the answers; too few answers give GetFailure", () => {
    const m = machine();
    m.handle({ type: "get", req: 3, key: "k", consistency: MAJORITY }, 0);
    const env = { data: PNCounter.empty.increment("b", 5), pruning: new Map() };
    m.handle({ type: "peer", from: "b", msg: { t: "read-result", id: 3, env } }, 1);
    const done = replies(
      m.handle({ type: "peer", from: "c", msg: { t: "read-result", id: 3 } }, 2),
    )[0];
    expect(done?.result.ok && (done.result.data as PNCounter).value).toBe(5);
    m.handle({ type: "get", req: 4, key: "k", consistency: ALL }, 3);
    const failed = replies(m.handle({ type: "timer", key: "op:4" }, 6_000))[0];
    expect(failed?.result.ok === false && failed.result.error).toBeInstanceOf(GetFailureError);
  });

  it("deleted keys answer DataDeleted; a throwing modify gives ModifyFailure and changes nothing", () => {
    const m = machine();
    m.handle(
      {
        type: "update",
        req: 1,
        key: "k",
        initial: ORSet.empty(),
        modify: (s) => (s as ORSet).add("a", "x"),
        consistency: LOCAL,
      },
      0,
    );
    const bad = replies(
      m.handle(
        {
          type: "update",
          req: 2,
          key: "k",
          initial: ORSet.empty(),
          modify: () => {
            throw new Error("boom");
          },
          consistency: LOCAL,
        },
        0,
      ),
    )[0];
    expect(bad?.result.ok === false && bad.result.error).toBeInstanceOf(ModifyFailureError);
    const wrongType = replies(
      m.handle(
        {
          type: "update",
          req: 3,
          key: "k",
          initial: ORSet.empty(),
          modify: () => GCounter.empty,
          consistency: LOCAL,
        },
        0,
      ),
    )[0];
    expect(wrongType?.result.ok === false && wrongType.result.error).toBeInstanceOf(
      ModifyFailureError,
    );
    expect((m.envelope("k")?.data as ORSet | undefined)?.has("x")).toBe(true);
    m.handle({ type: "delete", req: 4, key: "k", consistency: LOCAL }, 0);
    for (const input of [
      { type: "get" as const, req: 5, key: "k", consistency: LOCAL },
      { type: "delete" as const, req: 6, key: "k", consistency: LOCAL },
    ]) {
      const r = replies(m.handle(input, 0))[0];
      expect(r?.result.ok === false && r.result.error).toBeInstanceOf(DataDeletedError);
    }
  });

  it("keysMax bounds the number of keys", () => {
    const m = machine("a", { keysMax: 1 });
    m.handle(
      {
        type: "update",
        req: 1,
        key: "k1",
        initial: GCounter.empty,
        modify: inc("a") as never,
        consistency: LOCAL,
      },
      0,
    );
    const r = replies(
      m.handle(
        {
          type: "update",
          req: 2,
          key: "k2",
          initial: GCounter.empty,
          modify: inc("a") as never,
          consistency: LOCAL,
        },
        0,
      ),
    )[0];
    expect(r?.result.ok === false && r.result.error).toBeInstanceOf(TooManyKeysError);
  });

  it("subscribers get the current value, then changes batched at the notify tick", () => {
    const m = machine();
    m.handle(
      {
        type: "update",
        req: 1,
        key: "k",
        initial: GCounter.empty,
        modify: inc("a") as never,
        consistency: LOCAL,
      },
      0,
    );
    const first = m.handle({ type: "subscribe", key: "k", subscriber: 9 }, 0);
    expect(first.filter((o) => o.type === "notify")).toHaveLength(1);
    m.handle(
      {
        type: "update",
        req: 2,
        key: "k",
        initial: GCounter.empty,
        modify: inc("a") as never,
        consistency: LOCAL,
      },
      1,
    );
    m.handle(
      {
        type: "update",
        req: 3,
        key: "k",
        initial: GCounter.empty,
        modify: inc("a") as never,
        consistency: LOCAL,
      },
      2,
    );
    const notes = m
      .handle({ type: "timer", key: "notify" }, 500)
      .filter((o) => o.type === "notify");
    expect(notes).toHaveLength(1);
    expect(notes[0]?.type === "notify" && (notes[0].data as GCounter).value).toBe(3);
  });

  it("gossip status goes in chunks of gossipDigestsPerMessageMax; gossip parts respect messageBytesMax", () => {
    const m = machine("a", { gossipDigestsPerMessageMax: 10, messageBytesMax: 2_048 });
    for (let i = 0; i < 35; i++)
      m.handle(
        {
          type: "update",
          req: i + 1,
          key: `k${i}`,
          initial: ORMap.empty<string, GCounter>(),
          consistency: LOCAL,
          modify: (x) => {
            let y = x as ORMap<string, GCounter>;
            for (let j = 0; j < 5; j++)
              y = y.put("a", `f${j}`, GCounter.empty.increment("a", j + 1));
            return y;
          },
        },
        0,
      );
    const status = sends(m.handle({ type: "timer", key: "gossip" }, 1))[0];
    expect(status?.type === "send" && status.msg.t === "status" && status.msg.totChunks).toBe(4);
    // A replica that has nothing asks for everything in the chunk and gets it in bounded parts.
    const b = new ReplicatorMachine({
      self: "b",
      randomInt: () => 0,
      settings: { messageBytesMax: 2_048 },
    });
    b.handle({ type: "members", members: ["a", "b"], unreachable: [] }, 0);
    const asked = sends(
      b.handle(
        { type: "peer", from: "a", msg: status?.type === "send" ? status.msg : ({} as never) },
        2,
      ),
    );
    const want = asked[0]?.type === "send" && asked[0].msg.t === "gossip" ? asked[0].msg.want : [];
    expect(want.length).toBeGreaterThan(0);
    const parts = sends(
      m.handle({ type: "peer", from: "b", msg: { t: "gossip", entries: [], want } }, 3),
    );
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      if (p.type !== "send" || p.msg.t !== "gossip") throw new Error("expected gossip");
      const size = p.msg.entries.reduce(
        (s, [, e]) => s + JSON.stringify((e.data as ORMap).toData()).length,
        0,
      );
      expect(size).toBeLessThanOrEqual(2_048 + 600);
    }
  });
});
