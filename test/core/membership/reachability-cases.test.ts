/**
 * The reachability table at its edges (src/core/membership/reachability.ts): decoded
 * tables sorted and checked with named errors, the aggregate status of a subject with
 * reachable, unreachable and terminated rows, the per-observer and grouped queries
 * leaving out rows of other statuses, removal of observers, and the merge taking an
 * observer's rows from the side with the higher version, also when that side has none.
 */
import { describe, expect, it } from "vitest";
import {
  allUnreachableFrom,
  emptyReachability,
  markReachable,
  markTerminated,
  markUnreachable,
  mergeReachability,
  observersGroupedByUnreachable,
  observerVersion,
  type Reachability,
  reachabilityOf,
  recordsFrom,
  removeNodes,
  removeObservers,
  subjectStatus,
} from "../../../src/core/membership/reachability.js";
import { nodeOf, type UniqueAddress } from "../../../src/core/membership/unique-address.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const [a, b, c, d] = [n("a"), n("b"), n("c"), n("d")] as const;
const hosts = (nodes: readonly UniqueAddress[]) => nodes.map((x) => x.address.host);
const rec = (
  observer: UniqueAddress,
  subject: UniqueAddress,
  status: "reachable" | "unreachable" | "terminated",
  version: number,
) => ({ observer, subject, status, version });

describe("reachability cases", () => {
  it("sorts decoded rows and versions and names what is wrong with them", () => {
    const t = reachabilityOf(
      [rec(b, a, "unreachable", 1), rec(a, c, "unreachable", 2), rec(a, b, "terminated", 1)],
      [
        { observer: b, version: 1 },
        { observer: a, version: 2 },
      ],
    );
    expect(t.records.map((r) => `${r.observer.address.host}->${r.subject.address.host}`)).toEqual([
      "a->b",
      "a->c",
      "b->a",
    ]);
    expect(hosts(t.versions.map((v) => v.observer))).toEqual(["a", "b"]);
    expect(() =>
      reachabilityOf(
        [rec(a, b, "unreachable", 1), rec(a, b, "terminated", 1)],
        [{ observer: a, version: 1 }],
      ),
    ).toThrow("duplicate reachability record");
    expect(() =>
      reachabilityOf(
        [],
        [
          { observer: a, version: 1 },
          { observer: a, version: 2 },
        ],
      ),
    ).toThrow("duplicate reachability observer version");
    for (const version of [0, -1, 1.5])
      expect(() => reachabilityOf([], [{ observer: a, version }]), `${version}`).toThrow(
        "bad version",
      );
    expect(() =>
      reachabilityOf([rec(a, b, "unreachable", 3)], [{ observer: a, version: 2 }]),
    ).toThrow(
      "record version above observer version: shardkit://sys@a:2552#1 -> shardkit://sys@b:2552#1",
    );
  });

  it("the aggregate of a subject: terminated over unreachable over reachable rows", () => {
    // a keeps a reachable row about c while b is still unreachable to it
    let r = markUnreachable(markUnreachable(emptyReachability, a, b), a, c);
    r = markReachable(r, a, c);
    expect(recordsFrom(r, a).map((x) => x.status)).toEqual(["unreachable", "reachable"]);
    expect(subjectStatus(r, c)).toBe("reachable");
    expect(subjectStatus(r, b)).toBe("unreachable");
    r = markUnreachable(r, d, c);
    expect(subjectStatus(r, c)).toBe("unreachable");
    r = markTerminated(r, b, c);
    expect(subjectStatus(r, c)).toBe("terminated");
    expect(subjectStatus(r, d)).toBe("reachable");
  });

  it("per-observer and grouped unreachable queries leave out reachable and terminated rows", () => {
    let r = markUnreachable(markUnreachable(emptyReachability, a, b), a, c);
    r = markReachable(r, a, c);
    r = markTerminated(r, a, d);
    r = markUnreachable(r, d, a);
    expect(hosts(allUnreachableFrom(r, a))).toEqual(["b"]);
    const groups = observersGroupedByUnreachable(r);
    expect(groups.map((g) => [g.subject.address.host, hosts(g.observers)])).toEqual([
      ["a", ["d"]],
      ["b", ["a"]],
    ]);
  });

  it("groups by subject in subject order whatever the observer order", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, a, d), b, c);
    expect(hosts(observersGroupedByUnreachable(r).map((g) => g.subject))).toEqual(["c", "d"]);
  });

  it("removing no node keeps the table; removing observers drops their versions too", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, a, b), c, b);
    expect(removeNodes(r, [])).toBe(r);
    expect(removeObservers(r, [])).toBe(r);
    const without = removeObservers(r, [a]);
    expect(hosts(without.versions.map((v) => v.observer))).toEqual(["c"]);
    expect(hosts(without.records.map((x) => x.observer))).toEqual(["c"]);
    expect(observerVersion(without, a)).toBe(0);
  });

  it("merge takes an observer's rows from the side with the higher version, either side", () => {
    const older = markUnreachable(emptyReachability, a, b); // a v1: b unreachable
    const newer = markUnreachable(older, a, c); // a v2: b, c unreachable
    const cleared: Reachability = markReachable(markReachable(newer, a, b), a, c); // a v4: none
    const all = [a, b, c];
    const rows = (t: Reachability) =>
      t.records.map((x) => `${x.observer.address.host}->${x.subject.address.host}`);
    // both sides have rows: the newer side wins, left or right
    expect(rows(mergeReachability(newer, all, older))).toEqual(["a->b", "a->c"]);
    expect(rows(mergeReachability(older, all, newer))).toEqual(["a->b", "a->c"]);
    // the newer side has none (all reachable again): no rows, left or right
    expect(rows(mergeReachability(cleared, all, older))).toEqual([]);
    expect(rows(mergeReachability(older, all, cleared))).toEqual([]);
    expect(observerVersion(mergeReachability(older, all, cleared), a)).toBe(4);
    // the side without rows is older: the rows stay
    expect(rows(mergeReachability(emptyReachability, all, older))).toEqual(["a->b"]);
    expect(rows(mergeReachability(older, all, emptyReachability))).toEqual(["a->b"]);
  });
});

describe("reachability merge keeps a side's table when the result equals it", () => {
  const a = nodeOf("shardkit", "sys", "a", 2552, 1);
  const b = nodeOf("shardkit", "sys", "b", 2552, 1);
  const c = nodeOf("shardkit", "sys", "c", 2552, 1);
  const all = [a, b, c];

  it("returns the newer side itself, left or right, and a new table for a real union", () => {
    const older = markUnreachable(emptyReachability, a, b);
    const newer = markUnreachable(older, a, c);
    expect(mergeReachability(newer, all, older)).toBe(newer);
    expect(mergeReachability(older, all, newer)).toBe(newer);
    expect(mergeReachability(older, all, older)).toBe(older);
    const other = markUnreachable(emptyReachability, c, b);
    const union = mergeReachability(newer, all, other);
    expect(union).not.toBe(newer);
    expect(union).not.toBe(other);
    expect(
      union.records.map((r) => `${r.observer.address.host}->${r.subject.address.host}`),
    ).toEqual(["a->b", "a->c", "c->b"]);
  });

  it("drops observers and subjects that are not allowed (a new table then)", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, a, b), c, a);
    const merged = mergeReachability(r, [a, b], emptyReachability);
    expect(merged).not.toBe(r);
    expect(merged.records.map((x) => x.observer.address.host)).toEqual(["a"]);
    expect(merged.versions.map((v) => v.observer.address.host)).toEqual(["a"]);
  });
});
