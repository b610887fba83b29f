/**
 * Gossip operations and invariants: construction sorts and validates, removal clears
 * every trace of a node and leaves a tombstone, down drops the node from seen, seen-set
 * helpers, tombstone pruning, and a merge of two diverged histories.
 */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import {
  addMember,
  allDataCenters,
  allRoles,
  clearSeen,
  clockKeyOf,
  emptyGossip,
  findMember,
  gossipOf,
  hasTombstone,
  incrementVersion,
  isMultiDc,
  isReachableInGossip,
  isSingletonCluster,
  markAsDown,
  mergeGossip,
  mergeSeen,
  pruneTombstones,
  pruneVersion,
  removeMember,
  seenBy,
  seenByNode,
  updateMembers,
  withOnlySeen,
  withReachability,
  withSeen,
} from "../../../src/core/membership/gossip.js";
import { memberFrom, withStatus } from "../../../src/core/membership/member.js";
import type { MemberStatus } from "../../../src/core/membership/member-status.js";
import { emptyReachability, markUnreachable } from "../../../src/core/membership/reachability.js";
import { nodeOf, type UniqueAddress } from "../../../src/core/membership/unique-address.js";
import {
  clockNodes,
  incrementClock,
  vectorClockOf,
} from "../../../src/core/membership/vector-clock.js";

const n = (host: string, uid = 1) => nodeOf("shardkit", "sys", host, 2552, uid);
const a = n("a");
const b = n("b");
const c = n("c");
const m = (node: UniqueAddress, status: MemberStatus = "up", dataCenter = "default") =>
  memberFrom({ uniqueAddress: node, status, dataCenter, roles: [node.address.host] });
const hosts = (nodes: readonly UniqueAddress[]) => nodes.map((x) => x.address.host);

describe("gossip", () => {
  it("keeps members sorted whatever the input order", () => {
    const g = gossipOf({ members: [m(c), m(a), m(b)] });
    expect(hosts(g.members.map((x) => x.uniqueAddress))).toEqual(["a", "b", "c"]);
    expect(addMember(g, m(a, "joining"))).toBe(g); // already a member
    expect(isSingletonCluster(g)).toBe(false);
    expect(allRoles(g)).toEqual(["a", "b", "c"]);
  });

  it("asserts its invariants", () => {
    expect(() => gossipOf({ members: [m(a), m(a, "joining")] })).toThrow(AssertionError);
    expect(() => gossipOf({ members: [m(a, "removed")] })).toThrow(AssertionError);
    expect(() => gossipOf({ members: [m(a)], seen: [b] })).toThrow(AssertionError);
    const r = markUnreachable(emptyReachability, b, a);
    expect(() => gossipOf({ members: [m(a)], reachability: r })).toThrow(AssertionError);
    expect(() => gossipOf({ members: [m(a)], tombstones: [{ node: a, removedAtMs: 1 }] })).toThrow(
      AssertionError,
    );
    expect(() => withReachability(gossipOf({ members: [m(a)] }), r)).toThrow(AssertionError);
  });

  it("removes a node completely and leaves a tombstone", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, a, b), b, c);
    let g = gossipOf({ members: [m(a), m(b), m(c)], seen: [a, b], reachability: r });
    g = incrementVersion(incrementVersion(g, clockKeyOf(b)), clockKeyOf(a));
    const removed = removeMember(g, b, 1_000);
    expect(hosts(removed.members.map((x) => x.uniqueAddress))).toEqual(["a", "c"]);
    expect(hosts(seenBy(removed))).toEqual(["a"]);
    expect(removed.overview.reachability.records).toEqual([]);
    expect(hosts(removed.overview.reachability.versions.map((v) => v.observer))).toEqual(["a"]);
    expect(clockNodes(removed.version)).toEqual([clockKeyOf(a)]);
    expect(hasTombstone(removed, b)).toBe(true);
    expect(() => addMember(removed, m(b))).toThrow(AssertionError); // never comes back
    expect(findMember(addMember(removed, m(n("b", 2))), n("b", 2))?.status).toBe("up");
  });

  it("marks a member down and drops it from seen", () => {
    const g = markAsDown(gossipOf({ members: [m(a), m(b)], seen: [a, b] }), b);
    expect(findMember(g, b)?.status).toBe("down");
    expect(hosts(seenBy(g))).toEqual(["a"]);
    expect(() => markAsDown(g, c)).toThrow(AssertionError);
  });

  it("updates members in place and adds new ones", () => {
    const g = gossipOf({ members: [m(a, "joining"), m(b)] });
    const updated = updateMembers(g, [withStatus(m(a, "joining"), "up"), m(c, "joining")]);
    expect(updated.members.map((x) => [x.uniqueAddress.address.host, x.status])).toEqual([
      ["a", "up"],
      ["b", "up"],
      ["c", "joining"],
    ]);
    expect(updateMembers(g, [])).toBe(g);
  });

  it("maintains the seen set", () => {
    const g = gossipOf({ members: [m(a), m(b), m(c)] });
    const seen = withSeen(withSeen(g, c), a);
    expect(hosts(seenBy(seen))).toEqual(["a", "c"]);
    expect(withSeen(seen, a)).toBe(seen);
    expect(seenByNode(seen, b)).toBe(false);
    expect(hosts(seenBy(withOnlySeen(seen, b)))).toEqual(["b"]);
    expect(seenBy(clearSeen(seen))).toEqual([]);
    expect(hosts(seenBy(mergeSeen(seen, withOnlySeen(g, b))))).toEqual(["a", "b", "c"]);
  });

  it("prunes tombstones strictly older than the limit and version entries on demand", () => {
    const g = removeMember(removeMember(gossipOf({ members: [m(a), m(b)] }), a, 100), b, 200);
    expect(hosts(pruneTombstones(g, 100).tombstones.map((t) => t.node))).toEqual(["b"]);
    expect(pruneTombstones(g, 99)).toBe(g);
    const v = incrementVersion(g, "x");
    expect(clockNodes(pruneVersion(v, "x").version)).toEqual([]);
    expect(pruneVersion(v, "absent")).toBe(v);
  });

  it("answers data-center and reachability questions", () => {
    const g = gossipOf({
      members: [m(a), m(b, "up", "dc2")],
      reachability: markUnreachable(emptyReachability, a, b),
    });
    expect(isMultiDc(g)).toBe(true);
    expect(allDataCenters(g)).toEqual(["dc2", "default"]);
    expect(isReachableInGossip(g, a, b)).toBe(false);
    expect(isReachableInGossip(g, b, a)).toBe(true);
    expect(isReachableInGossip(g, a, c)).toBe(false); // not a member
    expect(isMultiDc(emptyGossip)).toBe(false);
  });

  it("merges two diverged histories: down beats leaving, removal beats everything", () => {
    const base = gossipOf({
      members: [m(a), m(b), m(c)],
      version: vectorClockOf({ [clockKeyOf(a)]: 1 }),
    });
    const left = incrementVersion(updateMembers(base, [m(b, "leaving")]), clockKeyOf(a));
    const right = incrementVersion(removeMember(markAsDown(base, b), c, 5), clockKeyOf(b));
    const merged = mergeGossip(left, right);
    expect(merged.members.map((x) => [x.uniqueAddress.address.host, x.status])).toEqual([
      ["a", "up"],
      ["b", "down"],
    ]);
    expect(hasTombstone(merged, c)).toBe(true);
    expect(merged.version).toEqual(
      incrementClock(
        incrementClock(vectorClockOf({ [clockKeyOf(a)]: 1 }), clockKeyOf(a)),
        clockKeyOf(b),
      ),
    );
  });
});
