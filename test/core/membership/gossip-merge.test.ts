/**
 * Gossip merge properties (fast-check) over random gossips of a small node pool:
 * commutative (members, statuses, versions, tombstones and, when each observer's rows
 * come from one side only as in a real cluster, reachability), idempotent, monotonic in
 * status precedence, an upper bound of both versions (up to pruned tombstoned entries),
 * never resurrecting a tombstoned node, and always producing a valid, unseen gossip.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  clockKeyOf,
  findMember,
  type Gossip,
  gossipOf,
  hasMember,
  hasTombstone,
  mergeGossip,
  sharingPartsOf,
} from "../../../src/core/membership/gossip.js";
import {
  type Member,
  memberFrom,
  UP_NUMBER_UNASSIGNED,
  withStatus,
} from "../../../src/core/membership/member.js";
import { STATUS_MERGE_PRECEDENCE } from "../../../src/core/membership/member-ordering.js";
import type { MemberStatus } from "../../../src/core/membership/member-status.js";
import {
  emptyReachability,
  markReachable,
  markTerminated,
  markUnreachable,
  type Reachability,
} from "../../../src/core/membership/reachability.js";
import { nodeOf, type UniqueAddress } from "../../../src/core/membership/unique-address.js";
import {
  isSameOrAfter,
  pruneClockNodes,
  vectorClockOf,
} from "../../../src/core/membership/vector-clock.js";

/** Pool: six hosts plus a second incarnation (uid 2) of host h0; h4/h5 in dc2. */
const POOL: readonly UniqueAddress[] = [
  ...[0, 1, 2, 3, 4, 5].map((i) => nodeOf("shardkit", "sys", `h${i}`, 2552, 1)),
  nodeOf("shardkit", "sys", "h0", 2552, 2),
];
const DC = (i: number) => (i === 4 || i === 5 ? "dc2" : "default");
const ROLES = (i: number) => (i % 2 === 0 ? ["even"] : ["odd", "x"]);
const LIVE_STATUSES: readonly MemberStatus[] = [
  "joining",
  "weakly-up",
  "up",
  "leaving",
  "exiting",
  "down",
  "preparing-for-shutdown",
  "ready-for-shutdown",
];
const CLOCK_KEYS = [...POOL.map(clockKeyOf), "other"];
const idx = fc.nat({ max: POOL.length - 1 });

interface Spec {
  readonly members: readonly { idx: number; status: MemberStatus; up: number }[];
  readonly tombstones: readonly { idx: number; ts: number }[];
  readonly version: Readonly<Record<string, number>>;
  readonly seen: readonly number[];
  readonly reach: readonly { o: number; s: number; st: 0 | 1 | 2 }[];
}

const arbSpec: fc.Arbitrary<Spec> = fc.record({
  members: fc.array(
    fc.record({
      idx,
      status: fc.constantFrom(...LIVE_STATUSES),
      up: fc.constantFrom(1, 2, 3, UP_NUMBER_UNASSIGNED),
    }),
    { maxLength: 7 },
  ),
  tombstones: fc.array(fc.record({ idx, ts: fc.integer({ min: 1, max: 5 }) }), { maxLength: 3 }),
  version: fc.dictionary(fc.constantFrom(...CLOCK_KEYS), fc.integer({ min: 0, max: 3 })),
  seen: fc.array(idx, { maxLength: 7 }),
  reach: fc.array(fc.record({ o: idx, s: idx, st: fc.constantFrom<0 | 1 | 2>(0, 1, 2) }), {
    maxLength: 8,
  }),
});

function memberAt(i: number, status: MemberStatus, up: number): Member {
  const uniqueAddress = POOL[i] as UniqueAddress;
  return memberFrom({ uniqueAddress, status, upNumber: up, dataCenter: DC(i), roles: ROLES(i) });
}

function applyReach(r: Reachability, o: UniqueAddress, s: UniqueAddress, st: 0 | 1 | 2) {
  if (st === 0) return markUnreachable(r, o, s);
  if (st === 1) return markReachable(r, o, s);
  return markTerminated(r, o, s);
}

/** A valid gossip from a spec; only pool indices accepted by `mayObserve` write rows. */
function toGossip(spec: Spec, mayObserve: (i: number) => boolean): Gossip {
  const byIdx = new Map(spec.members.map((m) => [m.idx, m]));
  const tombs = new Map(spec.tombstones.filter((t) => !byIdx.has(t.idx)).map((t) => [t.idx, t.ts]));
  const isMember = (i: number) => byIdx.has(i);
  let reachability = emptyReachability;
  for (const op of spec.reach) {
    if (isMember(op.o) && isMember(op.s) && mayObserve(op.o))
      reachability = applyReach(
        reachability,
        POOL[op.o] as UniqueAddress,
        POOL[op.s] as UniqueAddress,
        op.st,
      );
  }
  return gossipOf({
    members: [...byIdx.values()].map((m) => memberAt(m.idx, m.status, m.up)),
    tombstones: [...tombs].map(([i, ts]) => ({ node: POOL[i] as UniqueAddress, removedAtMs: ts })),
    version: vectorClockOf(Object.entries(spec.version)),
    seen: spec.seen.filter(isMember).map((i) => POOL[i] as UniqueAddress),
    reachability,
  });
}

const anyObserver = () => true;
const evenObservers = (i: number) => i % 2 === 0;
const oddObservers = (i: number) => i % 2 === 1;
const arbGossip = arbSpec.map((s) => toGossip(s, anyObserver));
/** Two gossips whose reachability rows come from disjoint observers (one writer each). */
const arbPair = fc
  .tuple(arbSpec, arbSpec)
  .map(([a, b]) => [toGossip(a, evenObservers), toGossip(b, oddObservers)] as const);

function tombstoneKeys(...gs: Gossip[]): string[] {
  return gs.flatMap((g) => g.tombstones.map((t) => clockKeyOf(t.node)));
}

describe("gossip merge", () => {
  it("is commutative (whole value, with one writer per observer)", () => {
    fc.assert(
      fc.property(arbPair, ([a, b]) => {
        expect(mergeGossip(a, b)).toEqual(mergeGossip(b, a));
      }),
    );
  });

  it("is commutative on members, statuses, versions and tombstones for any inputs", () => {
    fc.assert(
      fc.property(arbGossip, arbGossip, (a, b) => {
        const ab = mergeGossip(a, b);
        const ba = mergeGossip(b, a);
        expect(ab.members).toEqual(ba.members);
        expect(ab.version).toEqual(ba.version);
        expect(ab.tombstones).toEqual(ba.tombstones);
      }),
    );
  });

  it("is idempotent", () => {
    fc.assert(
      fc.property(arbGossip, arbGossip, (a, b) => {
        const aa = mergeGossip(a, a);
        expect(aa.members).toEqual(a.members);
        expect(aa.tombstones).toEqual(a.tombstones);
        expect(aa.overview.reachability).toEqual(a.overview.reachability);
        expect(aa.version).toEqual(pruneClockNodes(a.version, tombstoneKeys(a)));
        const m = mergeGossip(a, b);
        expect(mergeGossip(m, m)).toEqual(m);
        expect(mergeGossip(m, b).members).toEqual(m.members);
      }),
    );
  });

  it("is monotonic: a node's status never moves back in merge precedence", () => {
    fc.assert(
      fc.property(arbGossip, arbGossip, (a, b) => {
        for (const m of mergeGossip(a, b).members) {
          const rank = STATUS_MERGE_PRECEDENCE[m.status];
          const sides = [findMember(a, m.uniqueAddress), findMember(b, m.uniqueAddress)];
          const present = sides.filter((x): x is Member => x !== undefined);
          expect(present.length).toBeGreaterThan(0);
          for (const x of present)
            expect(rank).toBeGreaterThanOrEqual(STATUS_MERGE_PRECEDENCE[x.status]);
          expect(rank).toBe(Math.max(...present.map((x) => STATUS_MERGE_PRECEDENCE[x.status])));
        }
      }),
    );
  });

  it("produces a version >= both inputs (entries of tombstoned nodes pruned)", () => {
    fc.assert(
      fc.property(arbGossip, arbGossip, (a, b) => {
        const m = mergeGossip(a, b);
        const pruned = tombstoneKeys(a, b);
        expect(isSameOrAfter(m.version, pruneClockNodes(a.version, pruned))).toBe(true);
        expect(isSameOrAfter(m.version, pruneClockNodes(b.version, pruned))).toBe(true);
        for (const k of pruned) expect(m.version.entries.map((e) => e[0])).not.toContain(k);
      }),
    );
  });

  it("never resurrects a removed node and drops one-sided down/exiting members", () => {
    fc.assert(
      fc.property(arbGossip, arbGossip, (a, b) => {
        const m = mergeGossip(a, b);
        for (const t of [...a.tombstones, ...b.tombstones]) {
          expect(hasMember(m, t.node)).toBe(false);
          expect(hasTombstone(m, t.node)).toBe(true);
        }
        for (const [one, other] of [
          [a, b],
          [b, a],
        ] as const) {
          for (const x of one.members) {
            const oneSided = !hasMember(other, x.uniqueAddress);
            if (oneSided && (x.status === "down" || x.status === "exiting"))
              expect(hasMember(m, x.uniqueAddress)).toBe(false);
          }
        }
      }),
    );
  });

  it("keeps the later removal time of a node tombstoned on both sides", () => {
    const n = POOL[3] as UniqueAddress;
    const a = gossipOf({ tombstones: [{ node: n, removedAtMs: 10 }] });
    const b = gossipOf({ tombstones: [{ node: n, removedAtMs: 20 }] });
    expect(mergeGossip(a, b).tombstones).toEqual([{ node: n, removedAtMs: 20 }]);
    expect(mergeGossip(b, a).tombstones).toEqual([{ node: n, removedAtMs: 20 }]);
  });

  it("yields a frozen gossip that nobody has seen yet", () => {
    fc.assert(
      fc.property(arbGossip, arbGossip, (a, b) => {
        const m = mergeGossip(a, b);
        expect(m.overview.seen).toEqual([]);
        expect(Object.isFrozen(m) && Object.isFrozen(m.members)).toBe(true);
      }),
    );
  });
});

describe("merge keeps the parts equal to one side by identity", () => {
  const [x, y, z] = POOL as [UniqueAddress, UniqueAddress, UniqueAddress];
  const up = (u: UniqueAddress, n: number) =>
    memberFrom({ uniqueAddress: u, status: "up", roles: [], upNumber: n });
  const members = [up(x, 1), up(y, 2), up(z, 3)];

  it("two versions differing only in reachability share the members array of both", () => {
    const base = gossipOf({ members, version: vectorClockOf([["leader", 1]]) });
    // `observer`'s own version: it marked z unreachable
    const markedBy = (observer: UniqueAddress) =>
      gossipOf({
        members: base.members,
        reachability: markUnreachable(emptyReachability, observer, z),
        version: vectorClockOf([
          ["leader", 1],
          [clockKeyOf(observer), 1],
        ]),
      });
    const fromX = markedBy(x);
    const fromY = markedBy(y);
    const sameMembers = { ...fromY, members: fromX.members } as Gossip;
    const merged = mergeGossip(fromX, sameMembers);
    expect(merged.members).toBe(fromX.members);
    expect(merged.tombstones).toBe(fromX.tombstones);
    expect(merged.overview.reachability.records).toHaveLength(2);
    // a side that is newer in every observer: its table itself
    const ahead = mergeGossip(fromX, gossipOf({ members, version: fromX.version }));
    expect(ahead.overview.reachability).toBe(fromX.overview.reachability);
  });

  it("a member that changed on one side: that side's members array", () => {
    const a = gossipOf({ members, version: vectorClockOf([["leader", 1]]) });
    const b = gossipOf({
      // the unchanged members are the same objects (as decoding interns them)
      members: [
        a.members[0] as Member,
        withStatus(a.members[1] as Member, "leaving"),
        a.members[2] as Member,
      ],
      version: vectorClockOf([["other", 1]]),
    });
    expect(mergeGossip(a, b).members).toBe(b.members);
    expect(mergeGossip(b, a).members).toBe(b.members);
  });
});

describe("sharingPartsOf", () => {
  const [x, y] = POOL as [UniqueAddress, UniqueAddress];
  const up = (u: UniqueAddress, n: number) =>
    memberFrom({ uniqueAddress: u, status: "up", roles: [], upNumber: n });

  it("takes the other's arrays and table for parts with the same elements, keeps the rest", () => {
    const members = [up(x, 1), up(y, 2)];
    const local = gossipOf({ members, seen: [x], version: vectorClockOf([["l", 1]]) });
    const remote = gossipOf({
      members,
      seen: [y],
      reachability: markUnreachable(emptyReachability, x, y),
      version: vectorClockOf([["l", 2]]),
    });
    expect(remote.members).not.toBe(local.members);
    const shared = sharingPartsOf(remote, local);
    expect(shared.members).toBe(local.members);
    expect(shared.tombstones).toBe(local.tombstones);
    expect(shared.overview.reachability).toBe(remote.overview.reachability);
    expect(shared.overview.seen).toBe(remote.overview.seen);
    expect(shared.version).toBe(remote.version);
    expect(sharingPartsOf(shared, local)).toBe(shared);
    // another member object: nothing to share
    const changed = gossipOf({ members: [up(x, 1), up(y, 3)] });
    expect(sharingPartsOf(changed, local).members).toBe(changed.members);
  });
});
