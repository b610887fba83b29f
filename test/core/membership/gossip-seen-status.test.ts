/**
 * The seen status (src/core/membership/gossip-logic.ts, "Seen status"; gossip.ts
 * seenBitsOf): a seen set as a bitmap over the version's members, merged by a receiver
 * of the same version and answered only with marks the sender lacks; the reply to a
 * gossip whose sender only lacks this member's mark.
 */
import { describe, expect, it } from "vitest";
import {
  gossipOf,
  incrementVersion,
  isSeenBitsOf,
  membersHashOf,
  seenBitsOf,
  seenBy,
  withReachability,
  withSeen,
  withSeenBits,
} from "../../../src/core/membership/gossip.js";
import {
  gossipStatusOf,
  receiveGossip,
  receiveGossipStatus,
  versionHashOf,
} from "../../../src/core/membership/gossip-logic.js";
import { memberFrom, withStatus } from "../../../src/core/membership/member.js";
import { membershipStateOf } from "../../../src/core/membership/membership-state.js";
import { emptyReachability, markUnreachable } from "../../../src/core/membership/reachability.js";
import {
  nodeOf,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";
import { vectorClockOf } from "../../../src/core/membership/vector-clock.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const hosts = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
const nodes = hosts.map(n);
const [a, b, c] = nodes as [UniqueAddress, UniqueAddress, UniqueAddress];
const up = (node: UniqueAddress) => memberFrom({ uniqueAddress: node, status: "up", upNumber: 1 });
const base = incrementVersion(gossipOf({ members: nodes.map(up) }), "x");
const state = (self: UniqueAddress, seen: UniqueAddress[]) =>
  membershipStateOf({
    latestGossip: seen.reduce((g, s) => withSeen(g, s), base),
    selfUniqueAddress: self,
  });

describe("seen bitmap", () => {
  it("puts member i at bit i mod 7 of element i / 7 and round-trips", () => {
    const g = state(a, [a, nodes[7] as UniqueAddress]).latestGossip;
    expect(seenBitsOf(g)).toEqual([1, 1]);
    expect(isSeenBitsOf(base, [1, 1])).toBe(true);
    // a bit beyond the 9 members, a wrong length, an element out of range
    expect(isSeenBitsOf(base, [0, 4])).toBe(false);
    expect(isSeenBitsOf(base, [0])).toBe(false);
    expect(isSeenBitsOf(base, [128, 0])).toBe(false);
    expect(seenBy(withSeenBits(base, [1, 1]))).toEqual([a, nodes[7]]);
  });

  it("merges to the union, and adding nobody keeps the same gossip", () => {
    const g = state(a, [a, b]).latestGossip;
    expect(withSeenBits(g, [0b1, 0])).toBe(g);
    expect(seenBy(withSeenBits(g, [0b100, 0]))).toEqual([a, b, c]);
  });
});

describe("seen status", () => {
  it("a status with the same version and a seen set is merged; marks the sender lacks go back", () => {
    const status = gossipStatusOf(state(b, [b, c]), true);
    const reply = receiveGossipStatus(state(a, [a]), status);
    expect(reply.type).toBe("send-seen");
    if (reply.type !== "send-seen") return;
    expect(seenBy((reply.state ?? state(a, [a])).latestGossip)).toEqual([a, b, c]);
  });

  it("a seen set holding every mark of the receiver is merged and not answered", () => {
    const status = gossipStatusOf(state(b, [a, b]), true);
    const reply = receiveGossipStatus(state(a, [a]), status);
    expect(reply.type).toBe("none");
    if (reply.type !== "none") return;
    expect(seenBy(reply.state?.latestGossip ?? base)).toEqual([a, b]);
  });

  it("a digest-only status of the same version with another digest gets a seen status", () => {
    const reply = receiveGossipStatus(state(a, [a]), gossipStatusOf(state(b, [b])));
    // a status without a member-list hash: the reply is a whole status
    expect(reply).toEqual({ type: "send-seen", to: b, state: undefined, compact: false });
  });

  it("a newer status still asks for the full gossip", () => {
    const newer = membershipStateOf({
      latestGossip: incrementVersion(base, "y"),
      selfUniqueAddress: b,
    });
    expect(receiveGossipStatus(state(a, [a]), gossipStatusOf(newer, true))).toEqual({
      type: "send-status",
      to: b,
      compact: false,
    });
  });

  it("the reply to a gossip whose sender only lacks our mark is a seen status", () => {
    const r = receiveGossip(
      membershipStateOf({
        latestGossip: gossipOf({ members: nodes.map(up) }),
        selfUniqueAddress: a,
      }),
      { from: b, to: a, gossip: state(b, [b]).latestGossip, sentAtMs: 0 },
      0,
      { gossipTimeToLiveMs: 2000 },
    );
    expect(r.type).toBe("accepted");
    if (r.type !== "accepted") return;
    expect([r.comparison, r.replyTo, r.replyWith]).toEqual(["newer", b, "seen"]);
  });
});

describe("hashed status", () => {
  it("the hash depends on the version only, and differs between versions", () => {
    const h = versionHashOf(base.version);
    expect(versionHashOf(vectorClockOf([...base.version.entries]))).toEqual(h);
    expect(versionHashOf(incrementVersion(base, "y").version)).not.toEqual(h);
    expect(versionHashOf(incrementVersion(base, "x").version)).not.toEqual(h);
    for (const x of h) expect(x >>> 0).toBe(x);
  });

  it("a receiver of the same version handles it as a status of its own version", () => {
    const hashed = gossipStatusOf(state(b, [a, b]), false, true);
    expect(hashed.versionHash).toEqual(versionHashOf(base.version));
    expect(receiveGossipStatus(state(a, [a, b]), hashed)).toEqual({ type: "none" });
    // the seen digests differ: our seen set goes back, as for a full digest
    // (the reply to a hashed status is compact: its sender is of this version)
    expect(receiveGossipStatus(state(a, [a]), hashed)).toEqual({
      type: "send-seen",
      to: b,
      state: undefined,
      compact: true,
    });
  });

  it("compact replies: to a status whose member-list hash is ours, not to one with another", () => {
    const newer = membershipStateOf({
      latestGossip: incrementVersion(base, "y"),
      selfUniqueAddress: b,
    });
    const withHash = (h: readonly [number, number]) => ({
      ...gossipStatusOf(newer),
      membersHash: h,
    });
    const ours = membersHashOf(base.members);
    expect(receiveGossipStatus(state(a, [a]), withHash(ours))).toEqual({
      type: "send-status",
      to: b,
      compact: true,
    });
    expect(receiveGossipStatus(state(a, [a]), withHash([ours[0] ^ 1, ours[1]]))).toEqual({
      type: "send-status",
      to: b,
      compact: false,
    });
  });

  it("a hashed seen status of the same version is merged like a full one", () => {
    const status = gossipStatusOf(state(b, [b, c]), true, true);
    expect(status.seen).toBeDefined();
    const reply = receiveGossipStatus(state(a, [a]), status);
    expect(reply.type).toBe("send-seen");
    if (reply.type !== "send-seen") return;
    expect(seenBy((reply.state ?? state(a, [a])).latestGossip)).toEqual([a, b, c]);
  });

  it("a receiver of another version, older or newer, answers with its full status", () => {
    const newer = membershipStateOf({
      latestGossip: withSeen(incrementVersion(base, "y"), b),
      selfUniqueAddress: b,
    });
    const fromNewer = gossipStatusOf(newer, false, true);
    expect(receiveGossipStatus(state(a, [a]), fromNewer)).toEqual({
      type: "send-status",
      to: b,
      compact: true,
    });
    const fromOlder = gossipStatusOf(state(b, [b]), false, true);
    const ahead = membershipStateOf({ latestGossip: newer.latestGossip, selfUniqueAddress: a });
    expect(receiveGossipStatus(ahead, fromOlder)).toEqual({
      type: "send-status",
      to: b,
      compact: true,
    });
    // that full status then decides as always: the older side asks, the newer one sends
    expect(receiveGossipStatus(state(b, [b]), gossipStatusOf(ahead))).toEqual({
      type: "send-status",
      to: a,
      compact: false,
    });
    expect(receiveGossipStatus(ahead, gossipStatusOf(state(b, [b])))).toEqual({
      type: "send-gossip",
      to: b,
      compact: false,
    });
  });
});

describe("compact gossip", () => {
  const withReach = (self: UniqueAddress, observer: UniqueAddress, subject: UniqueAddress) =>
    membershipStateOf({
      latestGossip: withSeen(
        incrementVersion(
          withReachability(base, markUnreachable(emptyReachability, observer, subject)),
          uniqueAddressToString(observer),
        ),
        self,
      ),
      selfUniqueAddress: self,
    });

  it("the answer to a status whose member list hashes like ours goes without the members", () => {
    const ours = withReach(a, a, c);
    const theirs = {
      ...gossipStatusOf(withReach(b, b, c)),
      membersHash: membersHashOf(base.members),
    };
    expect(receiveGossipStatus(ours, theirs)).toEqual({
      type: "send-gossip",
      to: b,
      compact: true,
    });
    // no hash (a member of an earlier version) or another member list: the whole gossip
    expect(receiveGossipStatus(ours, gossipStatusOf(withReach(b, b, c)))).toEqual({
      type: "send-gossip",
      to: b,
      compact: false,
    });
    const other = { ...theirs, membersHash: [1, 2] as const };
    expect(receiveGossipStatus(ours, other)).toEqual({
      type: "send-gossip",
      to: b,
      compact: false,
    });
  });

  it("the merge sent back after a concurrent gossip is compact when the member lists agree", () => {
    const remote = withReach(b, b, c).latestGossip;
    const envelope = { from: b, to: a, gossip: remote, sentAtMs: 0 };
    const r = receiveGossip(
      withReach(a, a, c),
      { ...envelope, membersHash: membersHashOf(remote.members) },
      0,
      { gossipTimeToLiveMs: 1_000 },
    );
    expect(r.type === "accepted" && r.comparison).toBe("concurrent");
    expect(r.type === "accepted" && r.replyWith === "gossip" && r.replyCompact).toBe(true);
    const whole = receiveGossip(withReach(a, a, c), envelope, 0, { gossipTimeToLiveMs: 1_000 });
    expect(whole.type === "accepted" && whole.replyCompact).toBe(false);
  });

  it("the members hash depends on every member field, not on the array", () => {
    const h = membersHashOf(base.members);
    expect(membersHashOf([...base.members])).toEqual(h);
    const leaving = base.members.map((m, i) => (i === 1 ? withStatus(m, "leaving") : m));
    expect(membersHashOf(leaving)).not.toEqual(h);
  });
});
