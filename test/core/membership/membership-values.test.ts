/**
 * The value types of the membership model at their edges: address parts and port bounds,
 * the address order's protocol and system ties, uid checks, member construction and its
 * checks, the leader-status ranks, age order between two incarnations on one address,
 * merge precedence with equal statuses, member-status recognition and the sorted-array
 * helpers (the last of equal elements wins, insertion points, strictness).
 */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import {
  addressEquals,
  addressOf,
  compareAddresses,
  InvalidAddressError,
  parseAddress,
} from "../../../src/core/membership/address.js";
import {
  createMember,
  effectiveUpNumber,
  hasRole,
  memberEquals,
  memberFrom,
  UP_NUMBER_UNASSIGNED,
  withoutMember,
  withStatus,
  withStatusUp,
} from "../../../src/core/membership/member.js";
import {
  compareByAge,
  compareByLeaderStatus,
  highestPriorityOf,
  isOlderThan,
} from "../../../src/core/membership/member-ordering.js";
import { isMemberStatus, type MemberStatus } from "../../../src/core/membership/member-status.js";
import {
  binarySearch,
  findSorted,
  isStrictlySorted,
  sortedUnique,
  upsertSorted,
} from "../../../src/core/membership/sorted-array.js";
import {
  compareUniqueAddresses,
  nodeOf,
  parseUniqueAddress,
  uniqueAddressEquals,
  uniqueAddressOf,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";

const num = (x: number, y: number) => x - y;
const invalid = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidAddressError);
    return (e as Error).message;
  }
  throw new Error("did not throw");
};

describe("addresses", () => {
  it("refuses each empty part and a port outside 0..65535, naming the reason", () => {
    expect(invalid(() => addressOf("", "s", "h", 1))).toContain(
      "protocol, system and host must be non-empty",
    );
    expect(invalid(() => addressOf("p", "", "h", 1))).toContain("must be non-empty");
    expect(invalid(() => addressOf("p", "s", "", 1))).toContain("must be non-empty");
    expect(invalid(() => addressOf("p", "s", "h", -1))).toContain(
      "port must be an integer in [0, 65535]",
    );
    expect(invalid(() => addressOf("p", "s", "h", 65_536))).toContain("[0, 65535]");
    expect(addressOf("p", "s", "h", 0).port).toBe(0);
    expect(addressOf("p", "s", "h", 65_535).port).toBe(65_535);
    expect(invalid(() => parseAddress("p:/s@h:1"))).toContain(
      "expected protocol://system@host:port",
    );
    expect(Object.isFrozen(addressOf("p", "s", "h", 1))).toBe(true);
  });

  it("parses an IPv6 host and a system name with symbols", () => {
    expect(parseAddress("pekko.tcp://my-sys_2@[::1]:2552")).toEqual(
      addressOf("pekko.tcp", "my-sys_2", "[::1]", 2552),
    );
  });

  it("breaks host and port ties by protocol, then system; equality needs all four parts", () => {
    const base = addressOf("p", "s", "h", 1);
    const protocolB = addressOf("q", "a", "h", 1);
    const systemB = addressOf("p", "t", "h", 1);
    expect(compareAddresses(base, protocolB)).toBeLessThan(0);
    expect(compareAddresses(protocolB, base)).toBeGreaterThan(0);
    expect(compareAddresses(base, systemB)).toBeLessThan(0);
    expect(compareAddresses(systemB, base)).toBeGreaterThan(0);
    expect(compareAddresses(base, addressOf("p", "s", "h", 1))).toBe(0);
    // host first (code units), then the port as a number
    expect(compareAddresses(addressOf("p", "s", "B", 9), addressOf("p", "s", "a", 1))).toBeLessThan(
      0,
    );
    expect(compareAddresses(addressOf("p", "s", "a", 9), addressOf("p", "s", "a", 10))).toBe(-1);
    for (const other of [
      addressOf("q", "s", "h", 1),
      addressOf("p", "t", "h", 1),
      addressOf("p", "s", "g", 1),
      addressOf("p", "s", "h", 2),
    ])
      expect(addressEquals(base, other)).toBe(false);
    expect(addressEquals(base, addressOf("p", "s", "h", 1))).toBe(true);
  });
});

describe("unique addresses", () => {
  it("refuses a uid that is not a safe integer, naming it", () => {
    const a = addressOf("p", "s", "h", 1);
    expect(invalid(() => uniqueAddressOf(a, 1.5))).toBe(
      'invalid address "p://s@h:1#1.5": uid must be a safe integer',
    );
    expect(() => uniqueAddressOf(a, Number.MAX_SAFE_INTEGER + 1)).toThrow(InvalidAddressError);
    expect(uniqueAddressOf(a, -Number.MAX_SAFE_INTEGER).uid).toBe(-Number.MAX_SAFE_INTEGER);
    expect(invalid(() => parseUniqueAddress("p://s@h:1"))).toContain(
      "expected protocol://system@host:port#uid",
    );
  });

  it("the string form is the same for equal nodes built separately, and cached per node", () => {
    const x = nodeOf("p", "s", "h", 1, 7);
    expect(uniqueAddressToString(x)).toBe("p://s@h:1#7");
    expect(uniqueAddressToString(x)).toBe("p://s@h:1#7");
    expect(uniqueAddressToString(nodeOf("p", "s", "h", 1, 8))).toBe("p://s@h:1#8");
  });

  it("orders by uid on one address, numerically; equal nodes compare 0", () => {
    const x = nodeOf("p", "s", "h", 1, 9);
    const y = nodeOf("p", "s", "h", 1, 10);
    expect(compareUniqueAddresses(x, y)).toBe(-1);
    expect(compareUniqueAddresses(y, x)).toBe(1);
    expect(compareUniqueAddresses(x, nodeOf("p", "s", "h", 1, 9))).toBe(0);
    expect(compareUniqueAddresses(x, x)).toBe(0);
    expect(uniqueAddressEquals(x, nodeOf("p", "s", "h", 1, 9))).toBe(true);
    expect(uniqueAddressEquals(x, y)).toBe(false);
    expect(uniqueAddressEquals(x, nodeOf("p", "s", "h", 2, 9))).toBe(false);
  });
});

const node = (host: string, uid = 1) => nodeOf("shardkit", "sys", host, 2552, uid);
const mem = (
  host: string,
  status: MemberStatus,
  opts: { uid?: number; upNumber?: number; dataCenter?: string } = {},
) =>
  memberFrom({
    uniqueAddress: node(host, opts.uid ?? 1),
    status,
    upNumber: opts.upNumber,
    dataCenter: opts.dataCenter,
  });

describe("members", () => {
  it("normalises roles and applies the defaults; checks data center and up-number", () => {
    const m = memberFrom({ uniqueAddress: node("a"), status: "up", roles: ["b", "a", "b"] });
    expect(m).toEqual({
      uniqueAddress: node("a"),
      status: "up",
      roles: ["a", "b"],
      appVersion: "0.0.0",
      dataCenter: "default",
      upNumber: UP_NUMBER_UNASSIGNED,
    });
    expect(Object.isFrozen(m)).toBe(true);
    expect(Object.isFrozen(m.roles)).toBe(true);
    expect(() => memberFrom({ uniqueAddress: node("a"), status: "up", dataCenter: "" })).toThrow(
      "member data center must be non-empty",
    );
    expect(() => memberFrom({ uniqueAddress: node("a"), status: "up", upNumber: 1.5 })).toThrow(
      "member upNumber must be an integer, got 1.5",
    );
    const created = createMember({ uniqueAddress: node("a"), roles: ["r"], appVersion: "2.0.0" });
    expect([created.status, created.upNumber, created.roles, created.appVersion]).toEqual([
      "joining",
      UP_NUMBER_UNASSIGNED,
      ["r"],
      "2.0.0",
    ]);
  });

  it("withStatus keeps the same object for the same status; withStatusUp checks the number", () => {
    const m = mem("a", "up");
    expect(withStatus(m, "up")).toBe(m);
    const left = withStatus(m, "leaving");
    expect(left.status).toBe("leaving");
    expect(Object.isFrozen(left)).toBe(true);
    const j = mem("b", "joining");
    expect(withStatusUp(j, 4)).toMatchObject({ status: "up", upNumber: 4 });
    expect(Object.isFrozen(withStatusUp(j, 4))).toBe(true);
    expect(() => withStatusUp(j, 0.5)).toThrow("upNumber must be an integer, got 0.5");
  });

  it("roles, identity, removal and the effective up-number", () => {
    const m = memberFrom({ uniqueAddress: node("a"), status: "up", roles: ["x"] });
    expect([hasRole(m, "x"), hasRole(m, "y")]).toEqual([true, false]);
    expect(memberEquals(m, mem("a", "down"))).toBe(true);
    expect(memberEquals(m, mem("a", "up", { uid: 2 }))).toBe(false);
    const list = [mem("a", "up"), mem("b", "up"), mem("a", "up", { uid: 2 })];
    expect(withoutMember(list, node("a")).map((x) => x.uniqueAddress)).toEqual([
      node("b"),
      node("a", 2),
    ]);
    expect(effectiveUpNumber(mem("a", "joining"))).toBe(0);
    expect(effectiveUpNumber(mem("a", "up", { upNumber: 3 }))).toBe(3);
  });
});

describe("member orders", () => {
  it("leader-status order: every lead-capable status first, then weakly-up, joining, exiting, down", () => {
    const order: MemberStatus[] = ["weakly-up", "joining", "exiting", "down"];
    // later host, better status: the status decides
    const first = ["up", "leaving", "preparing-for-shutdown", "ready-for-shutdown"] as const;
    for (const s of first) {
      for (const later of order)
        expect(compareByLeaderStatus(mem("z", s), mem("a", later)), `${s} < ${later}`).toBeLessThan(
          0,
        );
    }
    for (let i = 0; i < order.length; i++)
      for (let j = i + 1; j < order.length; j++)
        expect(
          compareByLeaderStatus(mem("z", order[i]!), mem("a", order[j]!)),
          `${order[i]} < ${order[j]}`,
        ).toBeLessThan(0);
    // the same rank: member order
    expect(compareByLeaderStatus(mem("a", "up"), mem("b", "leaving"))).toBeLessThan(0);
    expect(compareByLeaderStatus(mem("b", "up"), mem("a", "leaving"))).toBeGreaterThan(0);
  });

  it("age: a lower up-number is older; on equal up-numbers the address decides, not the uid", () => {
    const old = mem("b", "up", { upNumber: 1 });
    const young = mem("a", "up", { upNumber: 2 });
    expect([isOlderThan(old, young), isOlderThan(young, old)]).toEqual([true, false]);
    const x = mem("a", "up", { upNumber: 3, uid: 1 });
    const y = mem("a", "up", { upNumber: 3, uid: 2 });
    expect([isOlderThan(x, y), isOlderThan(y, x)]).toEqual([false, false]);
    const z = mem("b", "up", { upNumber: 3 });
    expect([isOlderThan(x, z), isOlderThan(z, x)]).toEqual([true, false]);
    expect(compareByAge(old, young)).toBeLessThan(0);
    expect(compareByAge(x, y)).toBeLessThan(0); // equal up-numbers: member order (uid)
    expect(compareByAge(y, x)).toBeGreaterThan(0);
    expect(() => isOlderThan(old, mem("c", "up", { dataCenter: "dc2" }))).toThrow(
      "age of members in different data centers is not comparable: shardkit://sys@b:2552#1 (default) vs shardkit://sys@c:2552#1 (dc2)",
    );
    expect(() => compareByAge(old, mem("c", "up", { dataCenter: "dc2" }))).toThrow(AssertionError);
  });

  it("merge precedence: the later status wins; with equal statuses the older version", () => {
    const up = mem("a", "up", { upNumber: 5 });
    const down = mem("a", "down", { upNumber: 5 });
    expect(highestPriorityOf(up, down)).toBe(down);
    expect(highestPriorityOf(down, up)).toBe(down);
    const older = mem("a", "up", { upNumber: 2 });
    expect(highestPriorityOf(older, up)).toBe(older);
    expect(highestPriorityOf(up, older)).toBe(older);
    const twin = mem("a", "up", { upNumber: 5 });
    expect(highestPriorityOf(up, twin)).toBe(twin); // a full tie: the second
    expect(() => highestPriorityOf(up, mem("b", "up"))).toThrow(
      "highestPriorityOf needs two versions of one node: shardkit://sys@a:2552#1 vs shardkit://sys@b:2552#1",
    );
  });

  it("recognises exactly the member statuses", () => {
    expect(isMemberStatus("weakly-up")).toBe(true);
    expect(isMemberStatus("removed")).toBe(true);
    expect(isMemberStatus("Up")).toBe(false);
    expect(isMemberStatus("")).toBe(false);
    expect(isMemberStatus(undefined)).toBe(false);
    expect(isMemberStatus(["up"])).toBe(false);
  });
});

describe("sorted arrays", () => {
  it("binary search finds every element and the insertion point of every gap", () => {
    const items = [10, 20, 30, 40];
    for (const [i, v] of items.entries()) expect(binarySearch(items, v, num)).toBe(i);
    expect([5, 15, 25, 35, 45].map((v) => binarySearch(items, v, num))).toEqual([
      -1, -2, -3, -4, -5,
    ]);
    expect(binarySearch([], 1, num)).toBe(-1);
    expect(binarySearch([7], 7, num)).toBe(0);
    expect(findSorted(items, 30, num)).toBe(30);
    expect(findSorted(items, 31, num)).toBeUndefined();
    expect(findSorted([0], 0, num)).toBe(0);
  });

  it("upsert replaces an equal element and inserts in order, without touching the input", () => {
    type E = { k: number; v: string };
    const cmp = (x: E, y: E) => x.k - y.k;
    const items: E[] = [
      { k: 1, v: "a" },
      { k: 3, v: "c" },
    ];
    expect(upsertSorted(items, { k: 2, v: "b" }, cmp).map((e) => e.v)).toEqual(["a", "b", "c"]);
    expect(upsertSorted(items, { k: 3, v: "C" }, cmp).map((e) => e.v)).toEqual(["a", "C"]);
    expect(upsertSorted(items, { k: 0, v: "z" }, cmp).map((e) => e.v)).toEqual(["z", "a", "c"]);
    expect(items.map((e) => e.v)).toEqual(["a", "c"]);
  });

  it("sortedUnique keeps the last of equal elements, whatever their places", () => {
    type E = { k: number; v: string };
    const cmp = (x: E, y: E) => x.k - y.k;
    const input: E[] = [
      { k: 2, v: "first 2" },
      { k: 1, v: "first 1" },
      { k: 2, v: "second 2" },
      { k: 3, v: "3" },
      { k: 1, v: "second 1" },
      { k: 2, v: "third 2" },
    ];
    expect(sortedUnique(input, cmp).map((e) => e.v)).toEqual(["second 1", "third 2", "3"]);
    expect(sortedUnique([], cmp)).toEqual([]);
    // many equal keys: still the last
    const many = Array.from({ length: 40 }, (_, i) => ({ k: i % 2, v: `${i}` }));
    expect(sortedUnique(many, cmp).map((e) => e.v)).toEqual(["38", "39"]);
  });

  it("strictly sorted means increasing without duplicates", () => {
    expect(isStrictlySorted([], num)).toBe(true);
    expect(isStrictlySorted([1], num)).toBe(true);
    expect(isStrictlySorted([1, 2, 3], num)).toBe(true);
    expect(isStrictlySorted([1, 1, 2], num)).toBe(false);
    expect(isStrictlySorted([1, 3, 2], num)).toBe(false);
    expect(isStrictlySorted([2, 1], num)).toBe(false);
  });
});
