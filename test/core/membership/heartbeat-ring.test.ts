/**
 * The hashed monitoring ring: the same on every node whatever the member order, each
 * node monitored by min(k, n - 1) others, observersOf is the inverse of receivers, and
 * unreachable nodes do not reduce the monitoring of reachable ones.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { murmur3OfString } from "../../../src/base/hash.js";
import {
  HeartbeatRing,
  observersOf,
  receivers,
} from "../../../src/core/membership/heartbeat-ring.js";
import {
  nodeOf,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";

const node = (i: number) => nodeOf("shardkit", "sys", `10.0.0.${i}`, 2552, 1000 + i);
const nodes = (n: number) => Array.from({ length: n }, (_, i) => node(i));
const keys = (xs: readonly UniqueAddress[]) => xs.map(uniqueAddressToString);

describe("heartbeat ring", () => {
  it("orders the ring by murmur3 of the unique address", () => {
    const ring = new HeartbeatRing(nodes(12));
    const hashes = ring.nodes.map((n) => murmur3OfString(uniqueAddressToString(n)));
    expect(hashes).toEqual([...hashes].sort((a, b) => a - b));
  });

  it("picks the next k nodes on the ring as receivers", () => {
    const ring = new HeartbeatRing(nodes(10), { monitoredByNrOfMembers: 3 });
    const order = ring.nodes;
    const self = order[8] as UniqueAddress;
    const expected = [order[9], order[0], order[1]] as UniqueAddress[];
    expect(keys(ring.receivers(self)).sort()).toEqual(keys(expected).sort());
  });

  it("is the same on every node whatever order the members were learned in", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 12 }),
        fc.func(fc.integer()),
        (n, k, shuffleKey) => {
          const ms = nodes(n);
          const shuffled = [...ms].sort((a, b) => shuffleKey(a.uid) - shuffleKey(b.uid) || 0);
          for (const self of ms) {
            const a = receivers(self, ms, { monitoredByNrOfMembers: k });
            const b = receivers(self, shuffled, { monitoredByNrOfMembers: k });
            expect(keys(a)).toEqual(keys(b));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("monitors every member by min(k, n - 1) others, and observersOf inverts receivers", () => {
    for (let n = 1; n <= 25; n++) {
      for (const k of [1, 2, 3, 5, 9, 30]) {
        const ms = nodes(n);
        const ring = new HeartbeatRing(ms, { monitoredByNrOfMembers: k });
        for (const subject of ms) {
          const observers = ring.observersOf(subject);
          expect(observers.length).toBe(Math.min(k, n - 1));
          expect(keys(observers)).not.toContain(uniqueAddressToString(subject));
          for (const o of observers)
            expect(keys(ring.receivers(o))).toContain(uniqueAddressToString(subject));
          expect(keys(observersOf(subject, ms, { monitoredByNrOfMembers: k }))).toEqual(
            keys(observers),
          );
        }
        for (const sender of ms) expect(ring.receivers(sender).length).toBe(Math.min(k, n - 1));
      }
    }
  });

  it("adds the sender to the ring when it is not among the members", () => {
    const ms = nodes(6);
    const self = node(99);
    const r = receivers(self, ms, { monitoredByNrOfMembers: 2 });
    expect(r.length).toBe(2);
    expect(keys(r)).not.toContain(uniqueAddressToString(self));
  });

  it("keeps k reachable receivers when neighbours are unreachable, still probing some of them", () => {
    const k = 3;
    const base = new HeartbeatRing(nodes(10), { monitoredByNrOfMembers: k });
    const order = base.nodes;
    const self = order[0] as UniqueAddress;
    const down = [order[1], order[2]] as UniqueAddress[];
    const ring = new HeartbeatRing(nodes(10), { monitoredByNrOfMembers: k, unreachable: down });
    const r = keys(ring.receivers(self)).sort();
    // the two unreachable successors are kept (fewer than k picked so far) but do not
    // count: three reachable ones follow them
    expect(r).toEqual(
      keys([order[1], order[2], order[3], order[4], order[5]] as UniqueAddress[]).sort(),
    );
  });

  it("skips unreachable nodes once k receivers are picked", () => {
    const k = 2;
    const order = new HeartbeatRing(nodes(10)).nodes;
    const self = order[0] as UniqueAddress;
    const down = [order[1], order[2], order[3]] as UniqueAddress[];
    const ring = new HeartbeatRing(nodes(10), { monitoredByNrOfMembers: k, unreachable: down });
    expect(keys(ring.receivers(self)).sort()).toEqual(
      keys([order[1], order[2], order[4], order[5]] as UniqueAddress[]).sort(),
    );
  });

  it("keeps every reachable member monitored by min(k, r - 1) reachable observers", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 25 }),
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.boolean(), { minLength: 25, maxLength: 25 }),
        (n, k, downMask) => {
          const ms = nodes(n);
          const unreachable = ms.filter((_, i) => downMask[i] === true);
          const reachable = ms.filter((_, i) => downMask[i] !== true);
          const ring = new HeartbeatRing(ms, { monitoredByNrOfMembers: k, unreachable });
          const reachableKeys = new Set(keys(reachable));
          for (const subject of reachable) {
            const watching = keys(ring.observersOf(subject)).filter((o) => reachableKeys.has(o));
            expect(watching.length).toBe(Math.min(k, reachable.length - 1));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a frozen node list's ring, kept per list, picks what a fresh ring of the same nodes picks", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.nat(40)),
        fc.integer({ min: 1, max: 5 }),
        fc.nat(40),
        (n, unreachableIdx, k, senderIdx) => {
          const list = Object.freeze(nodes(n));
          const options = {
            unreachable: unreachableIdx.filter((i) => i < n).map(node),
            monitoredByNrOfMembers: k,
          };
          const sender = node(senderIdx); // beyond n: a sender that is not on the ring
          const fresh = new HeartbeatRing([...list], options).receivers(sender);
          // twice: the first builds the kept ring, the second uses it
          expect(keys(new HeartbeatRing(list, options).receivers(sender))).toEqual(keys(fresh));
          expect(keys(new HeartbeatRing(list, { monitoredByNrOfMembers: k }).nodes)).toEqual(
            keys(new HeartbeatRing([...list]).nodes),
          );
          expect(keys(new HeartbeatRing(list, options).receivers(sender))).toEqual(keys(fresh));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("rejects monitoredByNrOfMembers < 1", () => {
    expect(() => new HeartbeatRing(nodes(3), { monitoredByNrOfMembers: 0 })).toThrow(
      AssertionError,
    );
  });
});
