/**
 * Gossip decisions at their boundaries (src/core/membership/gossip-logic.ts): the
 * probability at the end of its reduction, the draw equal to the probability, the
 * candidates of two views over one gossip, the rounds at exactly half seen, a same-version
 * gossip keeping both seen sets, a concurrent gossip answered while exiting tasks run, the
 * seen digest's exact input, and a status digest from an unreachable sender.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { murmur3OfString } from "../../../src/base/hash.js";
import {
  clockKeyOf,
  gossipOf,
  incrementVersion,
  seenBy,
  withOnlySeen,
  withReachability,
} from "../../../src/core/membership/gossip.js";
import {
  adjustedGossipDifferentViewProbability,
  GOSSIP_SPEEDUP_ROUNDS,
  gossipAfterReceive,
  gossipRoundsPerInterval,
  gossipStatusOf,
  receiveGossip,
  receiveGossipStatus,
  seenDigestOf,
  selectGossipTarget,
} from "../../../src/core/membership/gossip-logic.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import {
  membershipStateOf,
  validNodeForGossip,
} from "../../../src/core/membership/membership-state.js";
import {
  emptyReachability,
  markReachable,
  markUnreachable,
} from "../../../src/core/membership/reachability.js";
import {
  nodeOf,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";
import { vectorClockOf } from "../../../src/core/membership/vector-clock.js";
import { withMarks } from "./reachability-marks.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const [a, b, c, d] = [n("a"), n("b"), n("c"), n("d")] as const;
const up = (node: UniqueAddress) => memberFrom({ uniqueAddress: node, status: "up", upNumber: 1 });
const options = {
  gossipDifferentViewProbability: 0.8,
  reduceGossipDifferentViewProbabilityAboveMembers: 400,
};
const fixed = (next: number) => ({ next: () => next, nextInt: () => 0 });

describe("gossip logic cases", () => {
  it("reaches exactly a tenth of the probability at three times the threshold", () => {
    expect(adjustedGossipDifferentViewProbability(1200, options)).toBe(0.8 * 0.1);
    expect(adjustedGossipDifferentViewProbability(1199, options)).toBeGreaterThan(0.08);
  });

  it("a draw equal to the probability does not prefer a different view", () => {
    // b has seen the version, c has not: preferring a different view picks c
    const g = gossipOf({ members: [up(a), up(b), up(c)], seen: [a, b] });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    expect(selectGossipTarget(s, fixed(0.79), options)).toEqual({ node: c, send: "gossip" });
    expect(selectGossipTarget(s, fixed(0.8), options)).toEqual({ node: b, send: "status" });
  });

  it("views of different nodes or data centers over one gossip have their own candidates", () => {
    const g = gossipOf({ members: [up(a), up(b), up(c)] });
    const fromA = selectGossipTarget(
      membershipStateOf({ latestGossip: g, selfUniqueAddress: a }),
      fixed(0),
      options,
    );
    const fromB = selectGossipTarget(
      membershipStateOf({ latestGossip: g, selfUniqueAddress: b }),
      fixed(0),
      options,
    );
    expect([fromA?.node, fromB?.node]).toEqual([b, a]);
    // the same node in a data center without members has no candidate
    const otherDc = membershipStateOf({ latestGossip: g, selfUniqueAddress: a, selfDc: "dc2" });
    expect(selectGossipTarget(otherDc, fixed(0), options)).toBeUndefined();
    expect(
      selectGossipTarget(
        membershipStateOf({ latestGossip: g, selfUniqueAddress: a }),
        fixed(0),
        options,
      )?.node,
    ).toBe(b);
  });

  it("speeds up while fewer than half of the members have seen the version", () => {
    const members = [up(a), up(b), up(c), up(d)];
    const rounds = (seen: UniqueAddress[]) =>
      gossipRoundsPerInterval(
        membershipStateOf({ latestGossip: gossipOf({ members, seen }), selfUniqueAddress: a }),
      );
    expect(rounds([a])).toBe(GOSSIP_SPEEDUP_ROUNDS);
    expect(rounds([a, b])).toBe(1);
    expect(rounds([a, b, c])).toBe(1);
  });

  it("a gossip of the same version keeps the union of both seen sets", () => {
    const v = vectorClockOf({ [clockKeyOf(a)]: 2 });
    const local = gossipOf({ members: [up(a), up(b), up(c)], seen: [a, c], version: v });
    const remote = gossipOf({ members: [up(a), up(b), up(c)], seen: [b], version: v });
    expect(seenBy(gossipAfterReceive(local, remote, "same"))).toEqual([a, b, c]);
    const r = receiveGossip(
      membershipStateOf({ latestGossip: local, selfUniqueAddress: a }),
      { from: b, to: a, gossip: remote, sentAtMs: 0 },
      0,
      { gossipTimeToLiveMs: 2000 },
    );
    if (r.type !== "accepted") throw new Error(r.reason);
    expect(r.comparison).toBe("same");
    expect(seenBy(r.state.latestGossip)).toEqual([a, b, c]);
  });

  it("a concurrent gossip is answered also while self's exiting tasks run", () => {
    const base = gossipOf({
      members: [up(a), up(b)],
      version: vectorClockOf({ [clockKeyOf(a)]: 1 }),
    });
    const atA = withOnlySeen(incrementVersion(base, clockKeyOf(a)), a);
    const atB = withOnlySeen(incrementVersion(base, clockKeyOf(b)), b);
    const r = receiveGossip(
      membershipStateOf({ latestGossip: atB, selfUniqueAddress: b }),
      { from: a, to: b, gossip: atA, sentAtMs: 0 },
      0,
      { gossipTimeToLiveMs: 2000, exitingTasksInProgress: true },
    );
    if (r.type !== "accepted") throw new Error(r.reason);
    expect(r.comparison).toBe("concurrent");
    expect(seenBy(r.state.latestGossip)).toEqual([]); // not marked while exiting tasks run
    expect(r.replyTo).toBe(a);
  });

  it("digests the sorted seen nodes joined by newlines", () => {
    const g = gossipOf({ members: [up(a), up(b), up(c)], seen: [c, a] });
    expect(seenDigestOf(g)).toBe(
      murmur3OfString("shardkit://sys@a:2552#1\nshardkit://sys@c:2552#1"),
    );
    // the same number of seen nodes, other nodes: another digest
    const h = gossipOf({ members: [up(a), up(b), up(c)], seen: [b, a] });
    expect(seenDigestOf(g)).not.toBe(seenDigestOf(h));
  });

  it("digests each of a run of seen lists, sharing first nodes or not, like the joined text", () => {
    // seenDigestOf restarts from the hash state of a recent list with the same first nodes
    // (every DIGEST_CHECKPOINT_NODES nodes): each digest must still be the joined text's
    const pool = Array.from({ length: 150 }, (_, i) =>
      nodeOf("shardkit", "sys", `n${String(i).padStart(3, "0")}`, 2552, 1),
    );
    const members = pool.map(up);
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.nat(pool.length - 1), { maxLength: 40 }), {
          minLength: 1,
          maxLength: 30,
        }),
        (steps) => {
          // each list: the previous one with some nodes added (or, every third, removed)
          let seen = new Set<number>();
          steps.forEach((change, k) => {
            seen = new Set(seen);
            for (const i of change)
              if (k % 3 === 2) seen.delete(i);
              else seen.add(i);
            const nodes = [...seen].sort((x, y) => x - y).map((i) => pool[i] as UniqueAddress);
            const g = gossipOf({ members, seen: nodes });
            // as seen by one of three holders (the last list of each is a starting point)
            expect(seenDigestOf(g, k % 4 === 3 ? undefined : pool[k % 3])).toBe(
              murmur3OfString(nodes.map((n) => uniqueAddressToString(n)).join("\n")),
            );
          });
        },
      ),
      { numRuns: 200, seed: 7 },
    );
  });

  it("gossip partners over successive tables of one member list are the valid gossip nodes", () => {
    // a node's partners are kept while the nodes a new table excludes stay the same: each
    // must still be exactly the members validNodeForGossip accepts, in member order
    const nodes = ["a", "b", "c", "d", "e", "f"].map(n);
    const members = nodes.map((x, i) =>
      memberFrom({ uniqueAddress: x, status: i === 5 ? "down" : "up", upNumber: 1 }),
    );
    const base = gossipOf({ members });
    const partnersOf = (s: ReturnType<typeof membershipStateOf>) => {
      const out: UniqueAddress[] = [];
      let count = 0;
      const draw = (k: number) => ({
        next: () => 0.99, // no preference for a different view: any valid partner
        nextInt: (max: number) => {
          count = max;
          return k;
        },
      });
      const first = selectGossipTarget(s, draw(0), options);
      if (first === undefined) return out;
      for (let k = 0; k < count; k++)
        out.push((selectGossipTarget(s, draw(k), options) as { node: UniqueAddress }).node);
      return out;
    };
    fc.assert(
      fc.property(
        fc.array(
          fc.array(
            fc.tuple(
              fc.nat(5),
              fc.nat(5),
              fc.constantFrom("unreachable", "terminated", "reachable"),
            ),
            { maxLength: 6 },
          ),
          { minLength: 1, maxLength: 8 },
        ),
        fc.nat(5), // f, the down member, too: its own rows count only for itself
        (tables, selfAt) => {
          const self = nodes[selfAt] as UniqueAddress;
          let r = emptyReachability;
          for (const marks of tables) {
            r = withMarks(r, nodes, marks);
            // one member list (as a node's successive gossips share it)
            const g = withReachability(base, r);
            const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: self });
            expect(partnersOf(s)).toEqual(
              g.members.map((m) => m.uniqueAddress).filter((x) => validNodeForGossip(s, x)),
            );
          }
        },
      ),
      { numRuns: 300, seed: 11 },
    );
    // a down self: its own rows leave the in-DC table but still rule out its partners
    const f = nodes[5] as UniqueAddress;
    const [na, nb] = [nodes[0] as UniqueAddress, nodes[1] as UniqueAddress];
    const r1 = markUnreachable(emptyReachability, f, na);
    const r2 = markReachable(r1, f, na);
    const viewOf = (r: typeof r1) =>
      membershipStateOf({
        latestGossip: gossipOf({ members, reachability: r }),
        selfUniqueAddress: f,
      });
    expect(partnersOf(viewOf(r1))).not.toContainEqual(na);
    expect(partnersOf(viewOf(r2))).toContainEqual(na);
    expect(partnersOf(viewOf(r2))).toContainEqual(nb);
  });

  it("ignores a status digest from a sender self observes as unreachable", () => {
    const g = withReachability(
      gossipOf({ members: [up(a), up(b)] }),
      markUnreachable(emptyReachability, a, b),
    );
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    const status = gossipStatusOf(membershipStateOf({ latestGossip: g, selfUniqueAddress: b }));
    expect(receiveGossipStatus(s, status)).toEqual({
      type: "ignored",
      reason: "sender-unreachable",
    });
  });
});
