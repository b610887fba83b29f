/**
 * Reachability table: observer-owned rows with per-observer versions, sticky terminated,
 * pruning of an observer's rows once it sees everyone again, aggregate queries, and the
 * version-based merge.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import {
  allObservers,
  allUnreachable,
  allUnreachableFrom,
  allUnreachableOrTerminated,
  emptyReachability,
  isAllReachable,
  isReachable,
  isReachableBy,
  markReachable,
  markTerminated,
  markUnreachable,
  mergeReachability,
  observersGroupedByUnreachable,
  observerVersion,
  pairStatus,
  reachabilityOf,
  recordsFrom,
  removeNodes,
  removeObservers,
  subjectStatus,
} from "../../../src/core/membership/reachability.js";
import {
  nodeOf,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const a = n("a");
const b = n("b");
const c = n("c");
const d = n("d");
const names = (xs: readonly UniqueAddress[]) => xs.map((x) => x.address.host);

describe("reachability", () => {
  it("starts empty: everybody reachable, reachable observations are not recorded", () => {
    expect(isAllReachable(emptyReachability)).toBe(true);
    expect(isReachable(emptyReachability, a)).toBe(true);
    expect(markReachable(emptyReachability, a, b)).toBe(emptyReachability);
  });

  it("records an unreachable observation and bumps the observer version each change", () => {
    const r1 = markUnreachable(emptyReachability, a, b);
    expect(observerVersion(r1, a)).toBe(1);
    expect(pairStatus(r1, a, b)).toBe("unreachable");
    expect(isReachableBy(r1, a, b)).toBe(false);
    expect(isReachableBy(r1, c, b)).toBe(true);
    expect(isReachable(r1, b)).toBe(false);
    expect(markUnreachable(r1, a, b)).toBe(r1); // same status: no change, no bump
    const r2 = markUnreachable(r1, a, c);
    expect(observerVersion(r2, a)).toBe(2);
    expect(recordsFrom(r2, a).map((x) => [x.subject.address.host, x.version])).toEqual([
      ["b", 1],
      ["c", 2],
    ]);
  });

  it("drops all rows of an observer once it sees every subject as reachable again", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, a, b), a, c);
    const r1 = markReachable(r, a, b);
    expect(pairStatus(r1, a, b)).toBe("reachable"); // kept as a row: c still unreachable
    expect(recordsFrom(r1, a)).toHaveLength(2);
    const r2 = markReachable(r1, a, c);
    expect(recordsFrom(r2, a)).toEqual([]);
    expect(observerVersion(r2, a)).toBe(4);
    expect(isAllReachable(r2)).toBe(true);
  });

  it("keeps terminated sticky and reports it in the aggregate", () => {
    const r = markTerminated(markUnreachable(emptyReachability, a, b), c, b);
    expect(markReachable(r, c, b)).toBe(r);
    expect(markUnreachable(r, c, b)).toBe(r);
    expect(subjectStatus(r, b)).toBe("terminated");
    expect(allUnreachable(r)).toEqual([]);
    expect(names(allUnreachableOrTerminated(r))).toEqual(["b"]);
  });

  it("answers aggregate queries in node order", () => {
    const r = markUnreachable(
      markUnreachable(markUnreachable(emptyReachability, c, b), a, d),
      a,
      b,
    );
    expect(names(allUnreachable(r))).toEqual(["b", "d"]);
    expect(names(allUnreachableFrom(r, a))).toEqual(["b", "d"]);
    expect(names(allObservers(r))).toEqual(["a", "c"]);
    expect(
      observersGroupedByUnreachable(r).map((g) => [g.subject.address.host, names(g.observers)]),
    ).toEqual([
      ["b", ["a", "c"]],
      ["d", ["a"]],
    ]);
  });

  it("removes nodes as observer and subject, or as observer only", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, a, b), b, c);
    const withoutB = removeNodes(r, [b]);
    expect(withoutB.records).toEqual([]);
    expect(withoutB.versions.map((v) => v.observer.address.host)).toEqual(["a"]);
    const withoutObserverB = removeObservers(r, [b]);
    expect(withoutObserverB.records.map((x) => x.observer.address.host)).toEqual(["a"]);
    expect(removeObservers(r, [])).toBe(r);
  });

  it("merges per observer by the higher observer version, restricted to allowed nodes", () => {
    const base = markUnreachable(emptyReachability, a, b);
    const newer = markReachable(markUnreachable(base, a, c), a, b); // a: v3, rows b reachable, c unreachable
    const other = markUnreachable(emptyReachability, d, b);
    const merged = mergeReachability(
      base,
      [a, b, c, d],
      mergeReachability(newer, [a, b, c, d], other),
    );
    expect(observerVersion(merged, a)).toBe(3);
    expect(recordsFrom(merged, a).map((x) => [x.subject.address.host, x.status])).toEqual([
      ["b", "reachable"],
      ["c", "unreachable"],
    ]);
    expect(names(allUnreachableFrom(merged, d))).toEqual(["b"]);
    const restricted = mergeReachability(newer, [a, b], other);
    expect(restricted.records.map((x) => uniqueAddressToString(x.subject))).toEqual([
      uniqueAddressToString(b),
    ]);
    expect(restricted.versions.map((v) => v.observer.address.host)).toEqual(["a"]);
  });

  it("merge is symmetric when each observer's rows come from one side", () => {
    const left = markUnreachable(emptyReachability, a, b);
    const right = markUnreachable(markUnreachable(emptyReachability, c, d), c, a);
    const all = [a, b, c, d];
    expect(mergeReachability(left, all, right)).toEqual(mergeReachability(right, all, left));
  });

  it("merge agrees with the per-observer rule on random tables (the walk over both sorted tables)", () => {
    const nodes = ["a", "b", "c", "d", "e"].map(n);
    const arbTable = fc
      .array(
        fc.record({
          observer: fc.integer({ min: 0, max: 4 }),
          version: fc.integer({ min: 1, max: 4 }),
          rows: fc.array(
            fc.tuple(
              fc.integer({ min: 0, max: 4 }),
              fc.constantFrom("reachable", "unreachable", "terminated"),
            ),
            { maxLength: 4 },
          ),
        }),
        { maxLength: 5 },
      )
      .map((observers) => {
        const byObserver = new Map(observers.map((o) => [o.observer, o]));
        const versions = [...byObserver.values()].map((o) => ({
          observer: nodes[o.observer] as UniqueAddress,
          version: o.version,
        }));
        const records = [...byObserver.values()].flatMap((o) =>
          [...new Map(o.rows).entries()]
            .filter(([subject]) => subject !== o.observer)
            .map(([subject, status]) => ({
              observer: nodes[o.observer] as UniqueAddress,
              subject: nodes[subject] as UniqueAddress,
              status: status as "reachable" | "unreachable" | "terminated",
              version: o.version,
            })),
        );
        return reachabilityOf(records, versions);
      });
    const show = (r: ReturnType<typeof reachabilityOf>) => ({
      records: r.records.map(
        (x) => `${x.observer.address.host}->${x.subject.address.host} ${x.status} ${x.version}`,
      ),
      versions: r.versions.map((v) => `${v.observer.address.host} ${v.version}`),
    });
    fc.assert(
      fc.property(arbTable, arbTable, fc.subarray(nodes), (left, right, allowed) => {
        const keys = new Set(allowed.map(uniqueAddressToString));
        const expected = { records: [] as string[], versions: [] as string[] };
        for (const o of nodes) {
          const v1 = observerVersion(left, o);
          const v2 = observerVersion(right, o);
          if ((v1 === 0 && v2 === 0) || !keys.has(uniqueAddressToString(o))) continue;
          const rows1 = recordsFrom(left, o);
          const rows2 = recordsFrom(right, o);
          const rows =
            rows1.length > 0 && rows2.length > 0
              ? v1 > v2
                ? rows1
                : rows2
              : rows1.length > 0
                ? v1 > v2
                  ? rows1
                  : []
                : v2 > v1
                  ? rows2
                  : [];
          for (const x of rows)
            if (keys.has(uniqueAddressToString(x.subject)))
              expected.records.push(
                `${x.observer.address.host}->${x.subject.address.host} ${x.status} ${x.version}`,
              );
          expected.versions.push(`${o.address.host} ${Math.max(v1, v2)}`);
        }
        expect(show(mergeReachability(left, allowed, right))).toEqual(expected);
        expect(show(mergeReachability(left, Object.freeze([...allowed]), right))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("validates decoded tables", () => {
    const rec = { observer: a, subject: b, status: "unreachable" as const, version: 2 };
    expect(() => reachabilityOf([rec], [{ observer: a, version: 1 }])).toThrow(AssertionError);
    expect(() => reachabilityOf([rec, rec], [{ observer: a, version: 2 }])).toThrow(AssertionError);
    const ok = reachabilityOf([rec], [{ observer: a, version: 2 }]);
    expect(isReachable(ok, b)).toBe(false);
  });
});

describe("recordsFrom", () => {
  it("finds each observer's rows by binary search: the same rows as a walk over the table", () => {
    const nodes = ["a", "b", "c", "d", "e", "f", "g"].map(n);
    // tables built by marks in a scrambled order: every observer with 0..6 rows
    let r = emptyReachability;
    for (let k = 0; k < 49; k++) {
      const pair = (k * 17) % 49; // every pair once, not in table order
      const observer = nodes[Math.floor(pair / 7)] as UniqueAddress;
      const subject = nodes[pair % 7] as UniqueAddress;
      if (observer === subject) continue;
      r =
        k % 4 === 3 ? markTerminated(r, observer, subject) : markUnreachable(r, observer, subject);
      for (const o of [...nodes, n("zz")])
        expect(recordsFrom(r, o)).toEqual(
          r.records.filter((x) => uniqueAddressToString(x.observer) === uniqueAddressToString(o)),
        );
    }
    expect(r.records.length).toBeGreaterThan(30);
  });
});
