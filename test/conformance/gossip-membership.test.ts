/**
 * Conformance of the membership model with reference-vectors/gossip-membership.json
 * (Pekko GossipSpec, MembershipStateSpec, MemberOrderingSpec: 48 cases / 117 checks).
 * Every case is a named test and every `expected` / `expect` value is asserted.
 *
 * Adapter mapping (representation only, no behavioural difference):
 * - statuses: Pekko names ("WeaklyUp") <-> shardkit kebab strings ("weakly-up");
 * - clock keys: "vclock:<node>" -> clockKeyOf(node) (the node's string form, where Pekko
 *   used an MD5 of "<address>-<uid>"); "name:<s>" -> s;
 * - node refs are parsed with parseUniqueAddress, and every fixture's string form is
 *   checked to round-trip;
 * - a `self` fixture becomes a MembershipState with its node and data center;
 *   crossDcConnections defaults to 5 (Pekko's GossipSpec value) unless given.
 */
import { describe, expect, it } from "vitest";
import {
  addressToString,
  compareAddresses,
  parseAddress,
} from "../../src/core/membership/address.js";
import {
  clockKeyOf,
  findMember,
  type Gossip,
  gossipOf,
  incrementVersion,
  isReachableInGossip,
  markAsDown,
  mergeGossip,
  pruneTombstones,
  removeMember,
  updateMembers,
  withSeen,
} from "../../src/core/membership/gossip.js";
import {
  type Member,
  memberEquals,
  memberFrom,
  withoutMember,
} from "../../src/core/membership/member.js";
import {
  compareByLeaderStatus,
  compareMembers,
} from "../../src/core/membership/member-ordering.js";
import type { MemberStatus } from "../../src/core/membership/member-status.js";
import {
  ageSortedTopOldestMembersPerDc,
  convergence,
  gossipTargetsForExitingMembers,
  isReachableExcludingDownedObservers,
  leader,
  leaderOf,
  type MembershipState,
  membershipStateOf,
  youngestMember,
} from "../../src/core/membership/membership-state.js";
import {
  allUnreachable,
  emptyReachability,
  markReachable,
  markTerminated,
  markUnreachable,
  type Reachability,
} from "../../src/core/membership/reachability.js";
import {
  nodeOf,
  parseUniqueAddress,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../src/core/membership/unique-address.js";
import { clockNodes, vectorClockOf } from "../../src/core/membership/vector-clock.js";
import { loadVectors } from "./vectors.js";

// ---------------------------------------------------------------- vector file shapes

type PekkoStatus =
  | "Joining"
  | "WeaklyUp"
  | "Up"
  | "Leaving"
  | "Exiting"
  | "Down"
  | "Removed"
  | "PreparingForShutdown"
  | "ReadyForShutdown";

interface Fixture {
  readonly node: string;
  readonly address: string;
  readonly protocol: string;
  readonly system: string;
  readonly host: string;
  readonly port: number;
  readonly uid: number;
  readonly status: PekkoStatus;
  readonly dataCenter: string;
  readonly upNumber: number;
  readonly roles: readonly string[];
}

interface ReachOp {
  readonly observer: string;
  readonly subject: string;
  readonly status: "Reachable" | "Unreachable" | "Terminated";
}

type GossipOp =
  | { readonly op: "seen"; readonly node: string }
  | { readonly op: "remove"; readonly node: string; readonly timestamp: number }
  | { readonly op: "markAsDown"; readonly member: string }
  | { readonly op: "update"; readonly members: readonly string[] }
  | { readonly op: "pruneTombstones"; readonly removeEarlierThan: number }
  | { readonly op: "incrementVersion"; readonly clockKey: string };

interface ExplicitGossip {
  readonly members: readonly string[];
  readonly reachability?: readonly ReachOp[];
  readonly version?: Readonly<Record<string, number>>;
  readonly tombstones?: Readonly<Record<string, number>>;
  readonly seen?: readonly string[];
  readonly apply?: readonly GossipOp[];
}
type GossipDef =
  | ExplicitGossip
  | { readonly from: string; readonly apply: readonly GossipOp[] }
  | { readonly merge: readonly [string, string] };

interface InspectExpect {
  readonly members?: readonly { readonly node: string; readonly status: PekkoStatus }[];
  readonly memberNodes?: readonly string[];
  readonly memberNodesInclude?: readonly string[];
  readonly memberNodesExclude?: readonly string[];
  readonly memberStatuses?: Readonly<Record<string, PekkoStatus>>;
  readonly seen?: readonly string[];
  readonly seenInclude?: readonly string[];
  readonly seenExclude?: readonly string[];
  readonly allUnreachable?: readonly string[];
  readonly tombstoneNodesInclude?: readonly string[];
  readonly tombstoneNodesExclude?: readonly string[];
  readonly reachabilityRecordsExcludeNodes?: readonly string[];
  readonly reachabilityVersionsExcludeNodes?: readonly string[];
  readonly versionKeys?: readonly string[];
  readonly versionKeysInclude?: readonly string[];
  readonly versionKeysExclude?: readonly string[];
}

type SelfCheck = { readonly gossip: string; readonly self: string };
type GossipCheck =
  | (SelfCheck & {
      readonly check: "convergence";
      readonly exitingConfirmed: readonly string[];
      readonly expected: boolean;
    })
  | (SelfCheck & { readonly check: "leader"; readonly expected: string | null })
  | (SelfCheck & {
      readonly check: "leaderOf";
      readonly candidates: "allMembers";
      readonly expected: string | null;
    })
  | {
      readonly check: "isReachable";
      readonly gossip: string;
      readonly from: string;
      readonly to: string;
      readonly expected: boolean;
    }
  | (SelfCheck & {
      readonly check: "isReachableExcludingDownedObservers";
      readonly to: string;
      readonly expected: boolean;
    })
  | (SelfCheck & { readonly check: "youngestMember"; readonly expected: string })
  | (SelfCheck & {
      readonly check: "ageSortedTopOldestMembersPerDc";
      readonly crossDcConnections: number;
      readonly expected: Readonly<Record<string, readonly string[]>>;
    })
  | (SelfCheck & {
      readonly check: "gossipTargetsForExitingMembers";
      readonly crossDcConnections: number;
      readonly exitingMembers: readonly string[];
      readonly expected: readonly string[];
    })
  | { readonly check: "inspect"; readonly gossip: string; readonly expect: InspectExpect };

type OrderingCheck =
  | {
      readonly check: "sortMembers";
      readonly ordering: "address" | "leaderStatus";
      readonly input: readonly string[];
      readonly expected: readonly string[];
    }
  | {
      readonly check: "memberEquals";
      readonly a: string;
      readonly b: string;
      readonly expected: boolean;
    }
  | {
      readonly check: "compareMembers";
      readonly a: string;
      readonly b: string;
      readonly expectedSign: -1 | 0 | 1;
    }
  | {
      readonly check: "compareMembersSameSign";
      readonly left: readonly [string, string];
      readonly right: readonly [string, string];
    }
  | {
      readonly check: "memberSetRemove";
      readonly set: readonly string[];
      readonly remove: string;
      readonly expected: readonly string[];
    }
  | {
      readonly check: "sortAddresses";
      readonly input: readonly string[];
      readonly expected: readonly string[];
    };

type MembershipCase =
  | {
      readonly name: string;
      readonly kind: "gossip";
      readonly members: Readonly<Record<string, Fixture>>;
      readonly gossips: Readonly<Record<string, GossipDef>>;
      readonly checks: readonly GossipCheck[];
    }
  | {
      readonly name: string;
      readonly kind: "memberOrdering";
      readonly members: Readonly<Record<string, Fixture>>;
      readonly checks: readonly OrderingCheck[];
    };

const FILE = loadVectors<MembershipCase>("gossip-membership.json");

// ---------------------------------------------------------------- mapping helpers

const STATUS: Readonly<Record<PekkoStatus, MemberStatus>> = {
  Joining: "joining",
  WeaklyUp: "weakly-up",
  Up: "up",
  Leaving: "leaving",
  Exiting: "exiting",
  Down: "down",
  Removed: "removed",
  PreparingForShutdown: "preparing-for-shutdown",
  ReadyForShutdown: "ready-for-shutdown",
};

const node = (ref: string): UniqueAddress => parseUniqueAddress(ref);
const str = uniqueAddressToString;
const sortedStrings = (xs: Iterable<string>) => [...xs].sort();

function clockKey(ref: string): string {
  if (ref.startsWith("vclock:")) return clockKeyOf(node(ref.slice("vclock:".length)));
  if (ref.startsWith("name:")) return ref.slice("name:".length);
  throw new Error(`unknown clock key form ${ref}`);
}

function fixtureMembers(fixtures: Readonly<Record<string, Fixture>>): Map<string, Member> {
  const out = new Map<string, Member>();
  for (const [id, f] of Object.entries(fixtures)) {
    const ua = nodeOf(f.protocol, f.system, f.host, f.port, f.uid);
    expect(str(ua), `fixture ${id} string form`).toBe(f.node);
    expect(addressToString(ua.address), `fixture ${id} address`).toBe(f.address);
    const m = memberFrom({
      uniqueAddress: ua,
      status: STATUS[f.status],
      roles: f.roles,
      dataCenter: f.dataCenter,
      upNumber: f.upNumber,
    });
    out.set(id, m);
  }
  return out;
}

function lookup<T>(map: ReadonlyMap<string, T>, id: string, what: string): T {
  const value = map.get(id);
  if (value === undefined) throw new Error(`unknown ${what} ${id}`);
  return value;
}

// ---------------------------------------------------------------- gossip construction

function applyReachOp(r: Reachability, op: ReachOp): Reachability {
  switch (op.status) {
    case "Unreachable":
      return markUnreachable(r, node(op.observer), node(op.subject));
    case "Reachable":
      return markReachable(r, node(op.observer), node(op.subject));
    case "Terminated":
      return markTerminated(r, node(op.observer), node(op.subject));
  }
}

function applyGossipOp(g: Gossip, op: GossipOp, members: ReadonlyMap<string, Member>): Gossip {
  switch (op.op) {
    case "seen":
      return withSeen(g, node(op.node));
    case "remove":
      return removeMember(g, node(op.node), op.timestamp);
    case "markAsDown":
      return markAsDown(g, lookup(members, op.member, "member").uniqueAddress);
    case "update":
      return updateMembers(
        g,
        op.members.map((id) => lookup(members, id, "member")),
      );
    case "pruneTombstones":
      return pruneTombstones(g, op.removeEarlierThan);
    case "incrementVersion":
      return incrementVersion(g, clockKey(op.clockKey));
  }
}

function explicitGossip(def: ExplicitGossip, members: ReadonlyMap<string, Member>): Gossip {
  const reachability = (def.reachability ?? []).reduce(applyReachOp, emptyReachability);
  const version = vectorClockOf(
    Object.entries(def.version ?? {}).map(([k, v]) => [clockKey(k), v] as const),
  );
  const tombstones = Object.entries(def.tombstones ?? {}).map(([n, ts]) => ({
    node: node(n),
    removedAtMs: ts,
  }));
  return gossipOf({
    members: def.members.map((id) => lookup(members, id, "member")),
    seen: (def.seen ?? []).map(node),
    reachability,
    version,
    tombstones,
  });
}

function buildGossips(
  defs: Readonly<Record<string, GossipDef>>,
  members: ReadonlyMap<string, Member>,
): Map<string, Gossip> {
  const built = new Map<string, Gossip>();
  for (const [name, def] of Object.entries(defs)) {
    let g: Gossip;
    if ("merge" in def)
      g = mergeGossip(lookup(built, def.merge[0], "gossip"), lookup(built, def.merge[1], "gossip"));
    else if ("from" in def) g = lookup(built, def.from, "gossip");
    else g = explicitGossip(def, members);
    for (const op of "apply" in def ? (def.apply ?? []) : []) g = applyGossipOp(g, op, members);
    built.set(name, g);
  }
  return built;
}

// ---------------------------------------------------------------- checks

function stateFor(g: Gossip, self: Member, crossDcConnections?: number): MembershipState {
  return membershipStateOf({
    latestGossip: g,
    selfUniqueAddress: self.uniqueAddress,
    selfDc: self.dataCenter,
    crossDcConnections,
  });
}

function runSelfCheck(
  check: Exclude<GossipCheck, { check: "inspect" | "isReachable" }>,
  s: MembershipState,
  members: ReadonlyMap<string, Member>,
): void {
  const orNull = (n: UniqueAddress | undefined) => (n === undefined ? null : str(n));
  switch (check.check) {
    case "convergence":
      expect(convergence(s, check.exitingConfirmed.map(node))).toBe(check.expected);
      return;
    case "leader":
      expect(orNull(leader(s))).toBe(check.expected);
      return;
    case "leaderOf":
      expect(orNull(leaderOf(s, s.latestGossip.members))).toBe(check.expected);
      return;
    case "isReachableExcludingDownedObservers":
      expect(isReachableExcludingDownedObservers(s, node(check.to))).toBe(check.expected);
      return;
    case "youngestMember":
      expect(orNull(youngestMember(s)?.uniqueAddress)).toBe(check.expected);
      return;
    case "ageSortedTopOldestMembersPerDc": {
      const perDc = ageSortedTopOldestMembersPerDc(s);
      const actual = Object.fromEntries(
        [...perDc].map(([dc, ms]) => [dc, ms.map((m) => str(m.uniqueAddress))]),
      );
      expect(actual).toEqual(check.expected);
      return;
    }
    case "gossipTargetsForExitingMembers": {
      const exiting = check.exitingMembers.map((id) => lookup(members, id, "member"));
      const targets = gossipTargetsForExitingMembers(s, exiting).map((m) => str(m.uniqueAddress));
      expect(sortedStrings(targets)).toEqual(sortedStrings(check.expected));
      return;
    }
  }
}

function inspectMembers(g: Gossip, e: InspectExpect): void {
  const nodes = g.members.map((m) => str(m.uniqueAddress));
  if (e.members)
    expect(g.members.map((m) => ({ node: str(m.uniqueAddress), status: m.status }))).toEqual(
      e.members.map((m) => ({ node: m.node, status: STATUS[m.status] })),
    );
  if (e.memberNodes) expect(nodes).toEqual(e.memberNodes);
  for (const n of e.memberNodesInclude ?? []) expect(nodes).toContain(n);
  for (const n of e.memberNodesExclude ?? []) expect(nodes).not.toContain(n);
  for (const [n, status] of Object.entries(e.memberStatuses ?? {}))
    expect(findMember(g, node(n))?.status, `status of ${n}`).toBe(STATUS[status]);
}

function inspectOverview(g: Gossip, e: InspectExpect): void {
  const seen = g.overview.seen.map(str);
  const r = g.overview.reachability;
  if (e.seen) expect(sortedStrings(seen)).toEqual(sortedStrings(e.seen));
  for (const n of e.seenInclude ?? []) expect(seen).toContain(n);
  for (const n of e.seenExclude ?? []) expect(seen).not.toContain(n);
  if (e.allUnreachable)
    expect(sortedStrings(allUnreachable(r).map(str))).toEqual(sortedStrings(e.allUnreachable));
  const recordNodes = r.records.flatMap((rec) => [str(rec.observer), str(rec.subject)]);
  for (const n of e.reachabilityRecordsExcludeNodes ?? []) expect(recordNodes).not.toContain(n);
  const versionNodes = r.versions.map((v) => str(v.observer));
  for (const n of e.reachabilityVersionsExcludeNodes ?? []) expect(versionNodes).not.toContain(n);
}

function inspectVersionAndTombstones(g: Gossip, e: InspectExpect): void {
  const keys = clockNodes(g.version);
  if (e.versionKeys)
    expect(sortedStrings(keys)).toEqual(sortedStrings(e.versionKeys.map(clockKey)));
  for (const k of e.versionKeysInclude ?? []) expect(keys).toContain(clockKey(k));
  for (const k of e.versionKeysExclude ?? []) expect(keys).not.toContain(clockKey(k));
  const tombstones = g.tombstones.map((t) => str(t.node));
  for (const n of e.tombstoneNodesInclude ?? []) expect(tombstones).toContain(n);
  for (const n of e.tombstoneNodesExclude ?? []) expect(tombstones).not.toContain(n);
}

const INSPECT_KEYS = new Set<string>([
  "members",
  "memberNodes",
  "memberNodesInclude",
  "memberNodesExclude",
  "memberStatuses",
  "seen",
  "seenInclude",
  "seenExclude",
  "allUnreachable",
  "tombstoneNodesInclude",
  "tombstoneNodesExclude",
  "reachabilityRecordsExcludeNodes",
  "reachabilityVersionsExcludeNodes",
  "versionKeys",
  "versionKeysInclude",
  "versionKeysExclude",
]);

function runInspect(g: Gossip, e: InspectExpect): void {
  for (const k of Object.keys(e)) expect(INSPECT_KEYS.has(k), `inspect key ${k}`).toBe(true);
  inspectMembers(g, e);
  inspectOverview(g, e);
  inspectVersionAndTombstones(g, e);
}

function runGossipCheck(
  check: GossipCheck,
  gossips: ReadonlyMap<string, Gossip>,
  members: ReadonlyMap<string, Member>,
): void {
  const g = lookup(gossips, check.gossip, "gossip");
  if (check.check === "inspect") {
    runInspect(g, check.expect);
    return;
  }
  if (check.check === "isReachable") {
    expect(isReachableInGossip(g, node(check.from), node(check.to))).toBe(check.expected);
    return;
  }
  const cross = "crossDcConnections" in check ? check.crossDcConnections : undefined;
  runSelfCheck(check, stateFor(g, lookup(members, check.self, "member"), cross), members);
}

function sortIds(
  ids: readonly string[],
  members: ReadonlyMap<string, Member>,
  cmp: (a: Member, b: Member) => number,
) {
  return [...ids].sort((a, b) => cmp(lookup(members, a, "member"), lookup(members, b, "member")));
}

function runOrderingCheck(check: OrderingCheck, members: ReadonlyMap<string, Member>): void {
  const m = (id: string) => lookup(members, id, "member");
  switch (check.check) {
    case "sortMembers": {
      const cmp = check.ordering === "address" ? compareMembers : compareByLeaderStatus;
      expect(sortIds(check.input, members, cmp)).toEqual(check.expected);
      return;
    }
    case "memberEquals":
      expect(memberEquals(m(check.a), m(check.b))).toBe(check.expected);
      // Pekko also asserts equal hash codes; shardkit's hash key is the node string.
      if (check.expected) expect(str(m(check.a).uniqueAddress)).toBe(str(m(check.b).uniqueAddress));
      return;
    case "compareMembers":
      expect(Math.sign(compareMembers(m(check.a), m(check.b)))).toBe(check.expectedSign);
      return;
    case "compareMembersSameSign": {
      const left = Math.sign(compareMembers(m(check.left[0]), m(check.left[1])));
      const right = Math.sign(compareMembers(m(check.right[0]), m(check.right[1])));
      expect(left).toBe(right);
      return;
    }
    case "memberSetRemove": {
      const set = check.set.map(m).sort(compareMembers);
      const rest = withoutMember(set, m(check.remove).uniqueAddress).map((x) =>
        str(x.uniqueAddress),
      );
      expect(sortedStrings(rest)).toEqual(
        sortedStrings(check.expected.map((id) => str(m(id).uniqueAddress))),
      );
      return;
    }
    case "sortAddresses": {
      const sorted = check.input.map(parseAddress).sort(compareAddresses).map(addressToString);
      expect(sorted).toEqual(check.expected);
      return;
    }
  }
}

// ---------------------------------------------------------------- the suite

let casesRun = 0;
let checksRun = 0;

describe("reference vectors: gossip-membership.json", () => {
  for (const c of FILE.cases) {
    it(c.name, () => {
      casesRun++;
      const members = fixtureMembers(c.members);
      if (c.kind === "gossip") {
        const gossips = buildGossips(c.gossips, members);
        for (const check of c.checks) {
          checksRun++;
          runGossipCheck(check, gossips, members);
        }
      } else {
        expect(c.kind).toBe("memberOrdering");
        for (const check of c.checks) {
          checksRun++;
          runOrderingCheck(check, members);
        }
      }
    });
  }

  it("exercises all 48 cases and 117 checks of the file", () => {
    const fileChecks = FILE.cases.reduce((n, c) => n + c.checks.length, 0);
    expect(FILE.cases.length).toBe(48);
    expect(fileChecks).toBe(117);
    expect(casesRun).toBe(48);
    expect(checksRun).toBe(117);
  });
});
