/**
 * The oracles of the real-process sharding tests (sharding-node.ts) on made-up entity
 * lines, so each one is seen to fail on what it must catch: two live incarnations, a
 * lost, a repeated and a reordered message.
 */
import { describe, expect, it } from "vitest";
import type { ChildEvent } from "../support/child-process.js";
import { checkDelivery, incarnationViolations, type ShardingNode } from "./sharding-node.js";
import type { EntityReport, SenderTally } from "./sharding-node-main.js";

function nodeWith(name: string, events: ChildEvent[], killedAt?: number): ShardingNode {
  return { name, child: { events }, killedAt } as unknown as ShardingNode;
}

const tally = (seqs: readonly number[]): SenderTally => {
  const t: SenderTally = {
    first: seqs[0] as number,
    last: seqs.at(-1) as number,
    min: Math.min(...seqs),
    max: Math.max(...seqs),
    count: seqs.length,
    bad: 0,
    dup: new Set(seqs).size === seqs.length ? 0 : seqs.length - new Set(seqs).size,
  };
  for (let i = 1; i < seqs.length; i++)
    if ((seqs[i] as number) !== (seqs[i - 1] as number) + 1) t.bad++;
  return t;
};

const started = (id: string, inc: string, node: string, t: number): ChildEvent => ({
  event: "entity-started",
  type: "T",
  id,
  inc,
  node,
  t,
});

const stopped = (
  id: string,
  inc: string,
  node: string,
  t: number,
  seqs: readonly number[],
): ChildEvent => ({
  event: "entity-stopped",
  type: "T",
  id,
  inc,
  node,
  t,
  count: seqs.length,
  total: seqs.length,
  senders: { s: tally(seqs) },
});

const live = (id: string, inc: string, seqs: readonly number[]): EntityReport => ({
  type: "T",
  id,
  inc,
  node: "b",
  pid: 2,
  total: seqs.length,
  count: seqs.length,
  senders: { s: tally(seqs) },
});

describe("sharding oracles", () => {
  it("incarnationViolations: a start while another incarnation lives; a killed node's end at its kill", () => {
    const a = nodeWith("a", [started("e", "1:1", "a", 100), stopped("e", "1:1", "a", 200, [])]);
    const ok = nodeWith("b", [started("e", "2:1", "b", 200)]);
    expect(incarnationViolations([a, ok], "T")).toEqual([]);
    const early = nodeWith("b", [started("e", "2:1", "b", 150)]);
    expect(incarnationViolations([a, early], "T")).toHaveLength(1);
    const killed = nodeWith("a", [started("e", "1:1", "a", 100)], 300);
    expect(
      incarnationViolations([killed, nodeWith("b", [started("e", "2:1", "b", 400)])], "T"),
    ).toEqual([]);
    expect(
      incarnationViolations([killed, nodeWith("b", [started("e", "2:1", "b", 250)])], "T"),
    ).toHaveLength(1);
  });

  it("checkDelivery: seq ranges must chain over incarnations: lost, repeated and reordered messages", () => {
    const sent = { s: { e: 6 } };
    const a = nodeWith("a", [
      started("e", "1:1", "a", 100),
      stopped("e", "1:1", "a", 200, [1, 2, 3]),
    ]);
    const b = nodeWith("b", [started("e", "2:1", "b", 300)]);
    const check = (seqs: number[], order: "strict" | "count" = "strict") =>
      checkDelivery([a, b], "T", ["e"], sent, [live("e", "2:1", seqs)], order);
    expect(check([4, 5, 6])).toEqual({ problems: [], reordered: 0 });
    expect(check([5, 6]).problems.join()).toContain("lost");
    expect(check([4, 5]).problems.join()).toContain("last seq received 5 of 6");
    expect(check([3, 4, 5, 6]).problems.join()).toContain("repeated");
    expect(check([4, 5, 5, 6]).problems.join()).toContain("repeated");
    expect(check([5, 4, 6]).problems.join()).toContain("out of order");
    expect(check([5, 4, 6], "count")).toEqual({ problems: [], reordered: 2 });
  });
});
