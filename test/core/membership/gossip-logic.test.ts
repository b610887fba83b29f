/**
 * Gossip decisions beyond the scripts: the reduced different-view probability, the
 * random draws consumed per target choice, the seen digest, and a concurrent merge that
 * must not resurrect a member removed on one side.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  clockKeyOf,
  gossipOf,
  hasMember,
  incrementVersion,
  removeMember,
  withOnlySeen,
} from "../../../src/core/membership/gossip.js";
import {
  adjustedGossipDifferentViewProbability,
  receiveGossip,
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
  markTerminated,
  markUnreachable,
} from "../../../src/core/membership/reachability.js";
import { nodeOf, type UniqueAddress } from "../../../src/core/membership/unique-address.js";
import { vectorClockOf } from "../../../src/core/membership/vector-clock.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const [a, b, c] = [n("a"), n("b"), n("c")] as const;
const up = (node: UniqueAddress, upNumber: number) =>
  memberFrom({ uniqueAddress: node, status: "up", upNumber });
const options = {
  gossipDifferentViewProbability: 0.8,
  reduceGossipDifferentViewProbabilityAboveMembers: 400,
};

describe("gossip logic", () => {
  it("reduces the different-view probability linearly above the threshold, to a tenth", () => {
    expect(adjustedGossipDifferentViewProbability(400, options)).toBe(0.8);
    expect(adjustedGossipDifferentViewProbability(800, options)).toBeCloseTo(0.44, 10);
    expect(adjustedGossipDifferentViewProbability(1200, options)).toBeCloseTo(0.08, 10);
    expect(adjustedGossipDifferentViewProbability(5000, options)).toBeCloseTo(0.08, 10);
  });

  it("draws exactly one next() and one nextInt() per choice", () => {
    const g = gossipOf({ members: [up(a, 1), up(b, 2), up(c, 3)], seen: [a] });
    const calls: string[] = [];
    const random = {
      next: () => {
        calls.push("next");
        return 0.5;
      },
      nextInt: (max: number) => {
        calls.push(`nextInt(${max})`);
        return max - 1;
      },
    };
    const target = selectGossipTarget(
      membershipStateOf({ latestGossip: g, selfUniqueAddress: a }),
      random,
      options,
    );
    expect(calls).toEqual(["next", "nextInt(2)"]);
    expect(target).toEqual({ node: c, send: "gossip" });
  });

  it("the gossip candidates are the self-DC members validNodeForGossip accepts, in member order", () => {
    const nodes = Array.from({ length: 8 }, (_, i) => n(`m${i}`));
    const marks = fc.array(
      fc.record({
        observer: fc.nat({ max: 7 }),
        subject: fc.nat({ max: 7 }),
        mark: fc.constantFrom(markUnreachable, markReachable, markTerminated),
      }),
      { maxLength: 20 },
    );
    const statuses = fc.array(fc.constantFrom("up", "up", "leaving", "down", "joining" as const), {
      minLength: 8,
      maxLength: 8,
    });
    const dcs = fc.array(fc.constantFrom("default", "default", "east"), {
      minLength: 8,
      maxLength: 8,
    });
    fc.assert(
      fc.property(marks, statuses, dcs, fc.nat({ max: 7 }), (ms, st, dc, self) => {
        let r = emptyReachability;
        for (const m of ms)
          if (m.observer !== m.subject)
            r = m.mark(r, nodes[m.observer] as UniqueAddress, nodes[m.subject] as UniqueAddress);
        const members = nodes.map((node, i) =>
          memberFrom({
            uniqueAddress: node,
            status: st[i] as "up",
            upNumber: i + 1,
            dataCenter: dc[i] as string,
          }),
        );
        const g = gossipOf({ members, reachability: r, seen: nodes });
        const selfNode = nodes[self] as UniqueAddress;
        const state = membershipStateOf({
          latestGossip: g,
          selfUniqueAddress: selfNode,
          selfDc: dc[self] as string,
        });
        const expected = g.members
          .filter(
            (m) => m.dataCenter === state.selfDc && validNodeForGossip(state, m.uniqueAddress),
          )
          .map((m) => m.uniqueAddress);
        // every candidate, by asking for each index (all have seen: the valid list is used)
        let count = 0;
        const first = selectGossipTarget(
          state,
          {
            next: () => 0.99,
            nextInt: (max) => {
              count = max;
              return 0;
            },
          },
          options,
        );
        const got: UniqueAddress[] = [];
        if (first !== undefined)
          for (let k = 0; k < count; k++) {
            const t = selectGossipTarget(state, { next: () => 0.99, nextInt: () => k }, options);
            if (t !== undefined) got.push(t.node);
          }
        expect(got).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("digests the seen set", () => {
    const g = gossipOf({ members: [up(a, 1), up(b, 2)], seen: [a] });
    const h = gossipOf({ members: [up(a, 1), up(b, 2)], seen: [a, b] });
    expect(seenDigestOf(g)).toBe(
      seenDigestOf(gossipOf({ members: [up(b, 2), up(a, 1)], seen: [a] })),
    );
    expect(seenDigestOf(g)).not.toBe(seenDigestOf(h));
  });

  it("does not resurrect a member that the other side removed", () => {
    const base = gossipOf({
      members: [
        up(a, 1),
        up(b, 2),
        memberFrom({ uniqueAddress: c, status: "exiting", upNumber: 3 }),
      ],
      version: vectorClockOf({ [clockKeyOf(a)]: 1 }),
    });
    // a (leader) removes c; b concurrently stamps a change of its own
    const atA = withOnlySeen(incrementVersion(removeMember(base, c, 10), clockKeyOf(a)), a);
    const atB = withOnlySeen(incrementVersion(base, clockKeyOf(b)), b);
    const result = receiveGossip(
      membershipStateOf({ latestGossip: atB, selfUniqueAddress: b }),
      { from: a, to: b, gossip: atA, sentAtMs: 0 },
      0,
      { gossipTimeToLiveMs: 2000 },
    );
    if (result.type !== "accepted") throw new Error(result.reason);
    expect(result.comparison).toBe("concurrent");
    expect(hasMember(result.state.latestGossip, c)).toBe(false);
    expect(result.replyTo).toEqual(a);
    expect(result.events.map((e) => e.type)).toEqual(["member-removed"]);
  });
});
