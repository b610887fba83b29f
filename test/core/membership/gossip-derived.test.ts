/**
 * Gossips derived from other gossips (src/core/membership/gossip.ts): the parts they share
 * by identity (members of a gossip only marked as seen; the readers of cluster-events.ts
 * rely on it), the invariants still checked for the parts that changed, the operations
 * that return the same gossip when nothing changes, and tombstone merging (the later
 * removal time wins, whichever side has it).
 */
import { describe, expect, it } from "vitest";
import {
  addMember,
  allRoles,
  clearSeen,
  gossipOf,
  isMultiDc,
  isSingletonCluster,
  markAsDown,
  mergeGossip,
  mergeSeen,
  pruneVersion,
  reachabilityExcludingDownedObservers,
  removeMember,
  updateMembers,
  withoutSeen,
  withReachability,
  withSeen,
  withSeenBy,
} from "../../../src/core/membership/gossip.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import type { MemberStatus } from "../../../src/core/membership/member-status.js";
import {
  allObservers,
  emptyReachability,
  markUnreachable,
} from "../../../src/core/membership/reachability.js";
import {
  nodeOf,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";

const n = (host: string, uid = 1) => nodeOf("shardkit", "sys", host, 2552, uid);
const [a, b, c] = [n("a"), n("b"), n("c")] as const;
const m = (node: UniqueAddress, status: MemberStatus = "up", upNumber = 1, roles: string[] = []) =>
  memberFrom({ uniqueAddress: node, status, upNumber, roles });
const hosts = (nodes: readonly UniqueAddress[]) => nodes.map((x) => x.address.host);

describe("derived gossip", () => {
  it("is frozen throughout and shares the parts that did not change", () => {
    const g = gossipOf({ members: [m(a), m(b)], seen: [a] });
    for (const part of [g, g.members, g.overview, g.overview.seen, g.tombstones])
      expect(Object.isFrozen(part)).toBe(true);
    const seen = withSeen(g, b);
    expect(seen.members).toBe(g.members);
    expect(seen.tombstones).toBe(g.tombstones);
    expect(seen.overview.reachability).toBe(g.overview.reachability);
    expect(Object.isFrozen(seen.overview.seen)).toBe(true);
    const down = markAsDown(g, b);
    expect(down.tombstones).toBe(g.tombstones);
    expect(Object.isFrozen(down.members)).toBe(true);
  });

  it("still checks the parts that changed", () => {
    const g = gossipOf({ members: [m(a), m(b)] });
    expect(() => withSeen(g, c)).toThrow(`seen by non-member: ${uniqueAddressToString(c)}`);
    expect(() => withSeenBy(g, [a, c])).toThrow("seen by non-member");
    expect(() => withReachability(g, markUnreachable(emptyReachability, c, a))).toThrow(
      `reachability observer is not a member: ${uniqueAddressToString(c)}`,
    );
    // every observer is checked, not only the first of a table
    const twoObservers = markUnreachable(markUnreachable(emptyReachability, a, b), c, a);
    expect(() => withReachability(g, twoObservers)).toThrow(
      `reachability observer is not a member: ${uniqueAddressToString(c)}`,
    );
    const removed = removeMember(g, b, 10);
    expect(() => addMember(removed, m(b))).toThrow(
      `tombstoned member: ${uniqueAddressToString(b)}`,
    );
    expect(() => updateMembers(removed, [m(b)])).toThrow("tombstoned member");
    expect(() => updateMembers(g, [m(c, "removed")])).toThrow(
      `live member with status removed: ${uniqueAddressToString(c)}`,
    );
    expect(() => removeMember(g, b, Number.NaN)).toThrow(
      `bad tombstone time for ${uniqueAddressToString(b)}`,
    );
    expect(() =>
      gossipOf({ members: [m(a)], tombstones: [{ node: b, removedAtMs: Infinity }] }),
    ).toThrow("bad tombstone time");
    expect(() => markAsDown(g, c)).toThrow(
      `cannot mark a non-member as down: ${uniqueAddressToString(c)}`,
    );
    // a row's observer version only: a version of a non-member is refused too
    const versionOnly = markUnreachable(markUnreachable(emptyReachability, c, a), c, a);
    expect(() => withReachability(g, { records: [], versions: versionOnly.versions })).toThrow(
      `reachability version of non-member: ${uniqueAddressToString(c)}`,
    );
  });

  it("returns the same gossip when nothing changes", () => {
    const g = gossipOf({ members: [m(a), m(b)], seen: [a] });
    expect(withSeen(g, a)).toBe(g);
    expect(withoutSeen(g, b)).toBe(g);
    const unseen = gossipOf({ members: [m(a)] });
    expect(clearSeen(unseen)).toBe(unseen);
    expect(withReachability(g, g.overview.reachability)).toBe(g);
    expect(pruneVersion(g, "absent")).toBe(g);
    expect(updateMembers(g, [])).toBe(g);
    // a replacement with the same status is no transition
    const renumbered = updateMembers(g, [m(a, "up", 7)]);
    expect(renumbered.members[0]?.upNumber).toBe(7);
    expect(withoutSeen(g, a).overview.seen).toEqual([]);
    expect(clearSeen(g).overview.seen).toEqual([]);
  });

  it("merging keeps the later removal time of a node tombstoned on both sides", () => {
    const base = gossipOf({ members: [m(a), m(b), m(c)] });
    const early = removeMember(base, c, 100);
    const late = removeMember(base, c, 300);
    for (const merged of [mergeGossip(early, late), mergeGossip(late, early)])
      expect(merged.tombstones).toEqual([{ node: c, removedAtMs: 300 }]);
    // tombstones of different nodes are all kept, sorted
    const both = mergeGossip(removeMember(base, c, 5), removeMember(base, b, 9));
    expect(both.tombstones.map((t) => [t.node.address.host, t.removedAtMs])).toEqual([
      ["b", 9],
      ["c", 5],
    ]);
    expect(both.members.map((x) => x.uniqueAddress.address.host)).toEqual(["a"]);
  });

  it("merging drops a one-sided down or exiting member but keeps other one-sided members", () => {
    const base = gossipOf({ members: [m(a)] });
    const statuses: MemberStatus[] = ["joining", "weakly-up", "up", "leaving", "exiting", "down"];
    for (const s of statuses) {
      const other = gossipOf({ members: [m(a), m(b, s)] });
      const expected = s === "down" || s === "exiting" ? ["a"] : ["a", "b"];
      expect(
        mergeGossip(base, other).members.map((x) => x.uniqueAddress.address.host),
        s,
      ).toEqual(expected);
      expect(
        mergeGossip(other, base).members.map((x) => x.uniqueAddress.address.host),
        s,
      ).toEqual(expected);
    }
  });

  it("names a duplicated member or tombstone", () => {
    expect(() => gossipOf({ members: [m(a), m(a, "leaving")] })).toThrow(
      "gossip members unsorted or duplicated",
    );
    expect(() =>
      gossipOf({
        tombstones: [
          { node: c, removedAtMs: 1 },
          { node: c, removedAtMs: 2 },
        ],
      }),
    ).toThrow("gossip tombstones unsorted");
  });

  it("seen-set helpers keep the other nodes and only members", () => {
    const g = gossipOf({ members: [m(a), m(b), m(c)], seen: [a, b, c] });
    expect(hosts(withoutSeen(g, b).overview.seen)).toEqual(["a", "c"]);
    expect(hosts(withSeenBy(g, [c, a, c]).overview.seen)).toEqual(["a", "c"]);
    // the other gossip's seen set may name a node this one does not have
    const small = gossipOf({ members: [m(a), m(b)], seen: [a] });
    expect(hosts(mergeSeen(small, g).overview.seen)).toEqual(["a", "b"]);
  });

  it("answers cluster-shape questions", () => {
    const one = gossipOf({ members: [m(a)] });
    expect(isSingletonCluster(one)).toBe(true);
    expect(isSingletonCluster(gossipOf({ members: [m(a), m(b)] }))).toBe(false);
    expect(isMultiDc(gossipOf({ members: [m(a), m(b), m(c)] }))).toBe(false);
    expect(
      allRoles(gossipOf({ members: [m(a, "up", 1, ["z", "y"]), m(b, "up", 1, ["x"])] })),
    ).toEqual(["x", "y", "z"]);
  });

  it("reachability without downed observers drops only the rows of down members", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, b, c), a, c);
    const g = gossipOf({ members: [m(a), m(b, "down"), m(c)], reachability: r });
    expect(hosts(allObservers(reachabilityExcludingDownedObservers(g)))).toEqual(["a"]);
    const none = gossipOf({ members: [m(a), m(b), m(c)], reachability: r });
    expect(hosts(allObservers(reachabilityExcludingDownedObservers(none)))).toEqual(["a", "b"]);
  });
});
