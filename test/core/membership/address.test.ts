/**
 * Addresses and unique addresses: string forms round-trip, bad input is a typed error,
 * and the order (host, port numeric, protocol/system ties, uid) is a total order that is
 * zero exactly for equal values, so sorted collections never merge distinct nodes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addressEquals,
  addressOf,
  addressToString,
  compareAddresses,
  InvalidAddressError,
  parseAddress,
} from "../../../src/core/membership/address.js";
import {
  compareUniqueAddresses,
  nodeOf,
  parseUniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";

const arbNode = fc
  .record({
    protocol: fc.constantFrom("shardkit", "pekko"),
    system: fc.constantFrom("sys", "Sys2"),
    host: fc.constantFrom("a", "b", "10.0.0.1", "[::1]", "B"),
    port: fc.constantFrom(0, 900, 2552, 10_000, 65_535),
    uid: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constant(Number.MAX_SAFE_INTEGER)),
  })
  .map((r) => nodeOf(r.protocol, r.system, r.host, r.port, r.uid));

describe("address and unique address", () => {
  it("round-trips through the string form", () => {
    fc.assert(
      fc.property(arbNode, (node) => {
        expect(parseUniqueAddress(uniqueAddressToString(node))).toEqual(node);
        expect(parseAddress(addressToString(node.address))).toEqual(node.address);
      }),
    );
    expect(uniqueAddressToString(nodeOf("shardkit", "s", "[::1]", 1, -3))).toBe(
      "shardkit://s@[::1]:1#-3",
    );
  });

  it("rejects malformed addresses with a typed error", () => {
    for (const bad of ["", "sys@h:1", "p://sys@h", "p://sys@h:70000", "p://@h:1"]) {
      expect(() => parseAddress(bad), bad).toThrow(InvalidAddressError);
    }
    expect(() => parseUniqueAddress("p://s@h:1")).toThrow(InvalidAddressError);
    expect(() => parseUniqueAddress("p://s@h:1#1.5")).toThrow(InvalidAddressError);
    expect(() => addressOf("p", "s", "h", 1.5)).toThrow(InvalidAddressError);
    try {
      parseAddress("nope");
    } catch (e) {
      expect((e as InvalidAddressError).code).toBe("INVALID_ADDRESS");
    }
  });

  it("orders by host, then numeric port, then uid", () => {
    const sorted = [
      nodeOf("p", "s", "b", 1, 0),
      nodeOf("p", "s", "a", 10_000, 0),
      nodeOf("p", "s", "a", 9_000, 5),
      nodeOf("p", "s", "a", 9_000, -3),
    ].sort(compareUniqueAddresses);
    expect(sorted.map(uniqueAddressToString)).toEqual([
      "p://s@a:9000#-3",
      "p://s@a:9000#5",
      "p://s@a:10000#0",
      "p://s@b:1#0",
    ]);
  });

  it("is a total order consistent with equality", () => {
    fc.assert(
      fc.property(arbNode, arbNode, arbNode, (x, y, z) => {
        const xy = compareUniqueAddresses(x, y);
        expect(Math.sign(compareUniqueAddresses(y, x))).toBe(-Math.sign(xy) || 0);
        expect(xy === 0).toBe(uniqueAddressEquals(x, y));
        expect(compareAddresses(x.address, y.address) === 0).toBe(
          addressEquals(x.address, y.address),
        );
        if (xy <= 0 && compareUniqueAddresses(y, z) <= 0)
          expect(compareUniqueAddresses(x, z)).toBeLessThanOrEqual(0);
      }),
    );
  });

  it("keeps a node's canonical string out of sight: keys, JSON and equality see address and uid", () => {
    const node = nodeOf("shardkit", "s", "h", 1, 7);
    expect(Object.keys(node)).toEqual(["address", "uid"]);
    expect(JSON.parse(JSON.stringify(node))).toEqual({
      address: { protocol: "shardkit", system: "s", host: "h", port: 1 },
      uid: 7,
    });
    expect(structuredClone(node)).toEqual(node);
    // a node built as a plain object (no kept string) has the same canonical string
    const literal = { address: node.address, uid: 7 };
    expect(node).toEqual(literal);
    expect(uniqueAddressToString(literal)).toBe("shardkit://s@h:1#7");
    expect(uniqueAddressToString(node)).toBe("shardkit://s@h:1#7");
  });
});
