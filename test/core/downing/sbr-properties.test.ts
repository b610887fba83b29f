/**
 * Safety of the Split Brain Resolver under clean partitions, checked by fast-check:
 * for any members (statuses, roles, ages) split into two sides where each side fully
 * observes the other as unreachable, the two sides' independent decisions never both
 * keep running ("no member is Up on both sides"). With all members up and no role,
 * keep-majority, keep-oldest and lease-majority keep EXACTLY one side, and the two
 * decisions are complementary: the survivor downs exactly the other side, which downs
 * exactly itself. Also: the decision does not depend on member input order, and every
 * member of a side reaches the same decision.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideDowning, type SbrOutcome } from "../../../src/core/downing/downing-decision.js";
import type { DowningStrategy } from "../../../src/core/downing/downing-strategy.js";
import type { SbrView } from "../../../src/core/downing/sbr-view.js";
import { gossipOf } from "../../../src/core/membership/gossip.js";
import { type Member, memberFrom } from "../../../src/core/membership/member.js";
import type { MemberStatus } from "../../../src/core/membership/member-status.js";
import { leader, membershipStateOf } from "../../../src/core/membership/membership-state.js";
import { emptyReachability, markUnreachable } from "../../../src/core/membership/reachability.js";
import {
  nodeOf,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";

const STATUSES: readonly MemberStatus[] = ["up", "up", "up", "leaving", "joining", "weakly-up"];

interface Scenario {
  readonly members: readonly Member[];
  readonly sideA: readonly boolean[];
}

const memberArb = (allUp: boolean, withRoles: boolean) =>
  fc.record({
    status: allUp ? fc.constant<MemberStatus>("up") : fc.constantFrom(...STATUSES),
    hasRole: withRoles ? fc.boolean() : fc.constant(false),
    sideA: fc.boolean(),
  });

function scenarioArb(allUp: boolean, withRoles: boolean): fc.Arbitrary<Scenario> {
  return fc.array(memberArb(allUp, withRoles), { minLength: 2, maxLength: 9 }).chain((specs) =>
    fc
      .shuffledSubarray(
        specs.map((_, i) => i + 1),
        { minLength: specs.length, maxLength: specs.length },
      )
      .map((ages) => {
        const members = specs.map((s, i) => {
          const joining = s.status === "joining" || s.status === "weakly-up";
          return memberFrom({
            uniqueAddress: nodeOf("shardkit", "sys", `n${i}`, 2552, 1),
            status: s.status,
            roles: s.hasRole ? ["r"] : [],
            ...(joining ? {} : { upNumber: ages[i] as number }),
          });
        });
        return { members, sideA: specs.map((s) => s.sideA) };
      }),
  );
}

const strategyArb: fc.Arbitrary<DowningStrategy> = fc.oneof(
  fc.record({ type: fc.constant("keep-majority" as const), role: fc.constantFrom(undefined, "r") }),
  fc.record({
    type: fc.constant("static-quorum" as const),
    quorumSize: fc.integer({ min: 1, max: 6 }),
    role: fc.constantFrom(undefined, "r"),
  }),
  fc.record({
    type: fc.constant("keep-oldest" as const),
    downIfAlone: fc.boolean(),
    role: fc.constantFrom(undefined, "r"),
  }),
  fc.constant({ type: "down-all" as const }),
  fc.record({
    type: fc.constant("lease-majority" as const),
    acquireLeaseDelayForMinorityMs: fc.constant(2000),
    role: fc.constantFrom(undefined, "r"),
  }),
);

const key = uniqueAddressToString;

/** The view of the side `inA` (true: side A): every member there observes the others. */
function viewOf(
  s: Scenario,
  inA: boolean,
  self: UniqueAddress,
  members: readonly Member[] = s.members,
): SbrView {
  let reachability = emptyReachability;
  s.members.forEach((observer, i) => {
    if (s.sideA[i] !== inA) return;
    s.members.forEach((subject, j) => {
      if (s.sideA[j] !== inA)
        reachability = markUnreachable(reachability, observer.uniqueAddress, subject.uniqueAddress);
    });
  });
  return { self, members, reachability, seenBy: [] };
}

function sideNodes(s: Scenario, inA: boolean): UniqueAddress[] {
  return s.members.filter((_, i) => s.sideA[i] === inA).map((m) => m.uniqueAddress);
}

function decide(s: Scenario, strategy: DowningStrategy, inA: boolean, leaseHolderA: boolean) {
  const self = sideNodes(s, inA)[0] as UniqueAddress;
  const leaseAcquired = strategy.type === "lease-majority" ? leaseHolderA === inA : undefined;
  return decideDowning(strategy, viewOf(s, inA, self), { leaseAcquired });
}

function survives(outcome: SbrOutcome): boolean {
  if (outcome.type !== "down") throw new Error(`expected a decision, got ${outcome.type}`);
  return !outcome.selfDowned;
}

function downable(nodes: readonly UniqueAddress[], s: Scenario): string[] {
  const byKey = new Map(s.members.map((m) => [key(m.uniqueAddress), m]));
  return nodes
    .filter((n) => {
      const status = byKey.get(key(n))?.status;
      return status !== "down" && status !== "exiting";
    })
    .map(key)
    .sort();
}

/**
 * The members after the leader's next convergence actions, applied to the members
 * selected by `mask`: joining / weakly-up -> up (new up-numbers after the youngest),
 * leaving -> exiting. A view that missed this gossip still has the old statuses.
 */
function advanced(members: readonly Member[], mask: readonly boolean[]): Member[] {
  let next = Math.max(
    0,
    ...members
      .filter((m) => m.status !== "joining" && m.status !== "weakly-up")
      .map((m) => m.upNumber),
  );
  return members.map((m, i) => {
    if (mask[i] !== true) return m;
    if (m.status === "joining" || m.status === "weakly-up") {
      next += 1;
      return memberFrom({ ...m, status: "up", upNumber: next });
    }
    if (m.status === "leaving") return memberFrom({ ...m, status: "exiting" });
    return m;
  });
}

/** The leader of the unpartitioned cluster (index into members), -1 if none. */
function indexOfLeader(members: readonly Member[]): number {
  const state = membershipStateOf({
    latestGossip: gossipOf({ members }),
    selfUniqueAddress: (members[0] as Member).uniqueAddress,
  });
  const l = leader(state);
  return l === undefined ? -1 : members.findIndex((m) => key(m.uniqueAddress) === key(l));
}

const bothSidesNonEmpty = (s: Scenario) => s.sideA.some((x) => x) && s.sideA.some((x) => !x);

describe("split brain resolver safety (fast-check)", () => {
  it("never keeps both sides of a clean partition running, for every strategy", () => {
    fc.assert(
      fc.property(scenarioArb(false, true), strategyArb, fc.boolean(), (s, strategy, leaseA) => {
        fc.pre(bothSidesNonEmpty(s));
        const a = survives(decide(s, strategy, true, leaseA));
        const b = survives(decide(s, strategy, false, leaseA));
        expect(a && b).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it("keep-majority with all members up keeps exactly one side, and the decisions are complementary", () => {
    fc.assert(
      fc.property(scenarioArb(true, false), (s) => {
        fc.pre(bothSidesNonEmpty(s));
        const strategy: DowningStrategy = { type: "keep-majority" };
        const a = decide(s, strategy, true, true);
        const b = decide(s, strategy, false, true);
        expect(survives(a) !== survives(b)).toBe(true);
        const loser = !survives(a); // true: side A lost
        const loserNodes = downable(sideNodes(s, loser), s);
        if (a.type !== "down" || b.type !== "down") throw new Error("decision expected");
        expect(a.down.map(key).sort()).toEqual(loserNodes);
        expect(b.down.map(key).sort()).toEqual(loserNodes);
        // the bigger side wins; on a tie the side holding the lowest address n0
        const sizeA = sideNodes(s, true).length;
        const sizeB = sideNodes(s, false).length;
        const aWins = sizeA === sizeB ? (s.sideA[0] as boolean) : sizeA > sizeB;
        expect(survives(a)).toBe(aWins);
      }),
      { numRuns: 1000 },
    );
  });

  it("keep-oldest and lease-majority with all members up keep exactly one side", () => {
    fc.assert(
      fc.property(
        scenarioArb(true, false),
        fc.boolean(),
        fc.boolean(),
        (s, downIfAlone, leaseA) => {
          fc.pre(bothSidesNonEmpty(s));
          const strategies: DowningStrategy[] = [
            { type: "keep-oldest", downIfAlone },
            { type: "lease-majority", acquireLeaseDelayForMinorityMs: 2000 },
          ];
          for (const strategy of strategies) {
            const a = survives(decide(s, strategy, true, leaseA));
            const b = survives(decide(s, strategy, false, leaseA));
            expect(a !== b).toBe(true);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("stays safe when the leader's side saw its last membership change and the other did not", () => {
    fc.assert(
      fc.property(
        scenarioArb(false, true),
        strategyArb,
        fc.boolean(),
        fc.array(fc.boolean(), { minLength: 9, maxLength: 9 }),
        (s, strategy, leaseA, advance) => {
          fc.pre(bothSidesNonEmpty(s));
          // The change was made by the leader (before the partition), so the leader's
          // side has it; the other side may have missed that last gossip.
          const leaderIndex = indexOfLeader(s.members);
          fc.pre(leaderIndex >= 0);
          const newerIsA = s.sideA[leaderIndex] as boolean;
          const newer = advanced(s.members, advance);
          const viewMembers = (inA: boolean) => (newerIsA === inA ? newer : s.members);
          const keepsRunning = (inA: boolean) => {
            const members = viewMembers(inA);
            const alive = members.filter(
              (m, i) => s.sideA[i] === inA && m.status !== "exiting" && m.status !== "down",
            );
            const self = alive[0]?.uniqueAddress;
            if (self === undefined) return false; // nobody left to lead this side
            const lease =
              strategy.type === "lease-majority" ? { leaseAcquired: leaseA === inA } : {};
            const outcome = decideDowning(strategy, viewOf(s, inA, self, members), lease);
            if (outcome.type !== "down") throw new Error(`expected a decision: ${outcome.type}`);
            const downed = new Set(outcome.down.map(key));
            return alive.some((m) => !downed.has(key(m.uniqueAddress)));
          };
          expect(keepsRunning(true) && keepsRunning(false)).toBe(false);
        },
      ),
      { numRuns: Number(process.env.SBR_RUNS ?? 3000) },
    );
  });

  // S20 seed 292 (test/sharding/sharding-faults.sim.test.ts): side A took a decision just
  // before a new partition was detected, counting some members of B as its own, and
  // downed the others (D). B never learned it. With D down but not removed (the
  // partition blocks convergence), A decides again once it sees all of B unreachable.
  it("keep-majority stays safe when one side downed part of the other on a stale view", () => {
    fc.assert(
      fc.property(
        scenarioArb(false, true),
        fc.constantFrom(undefined, "r"),
        fc.array(fc.boolean(), { minLength: 9, maxLength: 9 }),
        (s, role, downedMask) => {
          fc.pre(bothSidesNonEmpty(s));
          const strategy: DowningStrategy = { type: "keep-majority", role };
          // A's view: the members of B picked by the mask are down
          const membersOfA = s.members.map((m, i) =>
            s.sideA[i] === false && downedMask[i] === true
              ? memberFrom({ ...m, status: "down" })
              : m,
          );
          const keepsRunning = (inA: boolean) => {
            const members = inA ? membersOfA : s.members;
            const self = sideNodes(s, inA)[0] as UniqueAddress;
            const outcome = decideDowning(strategy, viewOf(s, inA, self, members));
            if (outcome.type !== "down") throw new Error(`expected a decision: ${outcome.type}`);
            return !outcome.selfDowned;
          };
          expect(keepsRunning(true) && keepsRunning(false)).toBe(false);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("decides nothing when every member is reachable", () => {
    fc.assert(
      fc.property(scenarioArb(false, true), strategyArb, (s, strategy) => {
        const all: Scenario = { ...s, sideA: s.sideA.map(() => true) };
        const outcome = decide(all, strategy, true, true);
        expect(outcome.type).toBe("no-decision");
      }),
      { numRuns: 300 },
    );
  });

  it("reaches the same decision whatever the member order and whichever side member decides", () => {
    fc.assert(
      fc.property(scenarioArb(false, true), strategyArb, fc.boolean(), (s, strategy, leaseA) => {
        fc.pre(bothSidesNonEmpty(s));
        const nodes = sideNodes(s, true);
        const lease = strategy.type === "lease-majority" ? { leaseAcquired: leaseA } : {};
        const reference = decideDowning(
          strategy,
          viewOf(s, true, nodes[0] as UniqueAddress),
          lease,
        );
        const reversed: Scenario = {
          members: [...s.members].reverse(),
          sideA: [...s.sideA].reverse(),
        };
        for (const self of nodes) {
          const other = decideDowning(strategy, viewOf(reversed, true, self), lease);
          expect(other.type).toBe(reference.type);
          if (other.type === "down" && reference.type === "down") {
            expect(other.down.map(key)).toEqual(reference.down.map(key));
            expect(other.decision).toBe(reference.decision);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
