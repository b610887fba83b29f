/**
 * Scripted interaction tests of the membership machine (src/core/membership/
 * membership-machine.ts): a few machines in a MembershipWorld (./membership-world.ts,
 * which also explains the trace lines), fed step by step; each test states the outputs
 * or decisions the inputs must produce. Heartbeats are left out of the traces.
 */
import { describe, expect, it } from "vitest";
import {
  downAllWhenUnstableMsOf,
  resolveSbrSettings,
} from "../../../src/core/downing/sbr-settings.js";
import { addressOf } from "../../../src/core/membership/address.js";
import type { ClusterSettings } from "../../../src/core/membership/cluster-settings.js";
import {
  clockKeyOf,
  gossipOf,
  incrementVersion,
  membersHashOf,
  withOnlySeen,
} from "../../../src/core/membership/gossip.js";
import type {
  MembershipInput,
  MembershipOutput,
} from "../../../src/core/membership/membership-machine.js";
import {
  MembershipKind,
  type MembershipMessage,
} from "../../../src/core/membership/membership-messages.js";
import type { MembershipState } from "../../../src/core/membership/membership-state.js";
import {
  type UniqueAddress,
  uniqueAddressOf,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";
import { MembershipWorld, TICK_MS } from "./membership-world.js";

/** a, b, c under lease-majority (with or without a lease), then c cut off from a and b. */
function leaseMajorityPartition(hasLease: boolean): MembershipWorld {
  const w = new MembershipWorld({
    seeds: ["a"],
    hasLease,
    downing: {
      stableAfterMs: 5000,
      activeStrategy: "lease-majority",
      leaseMajority: { leaseImplementation: "test-lease" },
    },
  });
  w.formCluster(["a", "b", "c"]);
  w.partition(["a", "b"], ["c"]);
  return w;
}

const downingKinds = (w: MembershipWorld) =>
  w.outputs.flatMap(({ node, output }) =>
    output.type === "downing" ? [`${node} ${output.decision}`] : [],
  );
const noGossip = (lines: readonly string[]) =>
  lines.filter((l) => !/ (Gossip|GossipStatus)$/.test(l));
const decisions = (w: MembershipWorld, from = 0) =>
  w.trace
    .map((l, i) => ({ l, t: w.times[i] as number }))
    .filter((x) => x.t >= from && / DOWN |self-removed/.test(x.l))
    .map((x) => `${x.t} ${x.l}`);

describe("membership machine: joining", () => {
  it("a new member joins through the seed and the leader moves it to up", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.add("a").add("b");
    // the first seed alone forms the cluster and is up at once
    expect(w.feed("a", { type: "start" })).toEqual([
      "a: info formed a new cluster",
      "a: member-joined a",
      "a: leader-changed a",
      "a: member-up a",
    ]);
    expect(w.feed("b", { type: "start" })).toEqual(["b -> a InitJoin"]);
    expect(w.deliver()).toEqual([
      "a -> b InitJoinAck",
      "b -> a Join",
      "a: info node joining",
      "a: member-joined b",
      "a -> b Welcome",
      "b: info welcomed into the cluster",
      "b: member-up a",
      "b: member-joined b",
      "b: leader-changed a",
      // b has seen the welcome gossip and tells a so
      "b -> a Gossip",
    ]);
    expect(w.view("a")).toBe("a=up b=joining");
    expect(logsOf(w, "a", "node joining")).toEqual([
      { level: "info", fields: { node: "shardkit://sk@b:2552#2" } },
    ]);
    // the seed-node conversations are over: each cancels its seed timers
    expect(w.outputs.filter((o) => o.output.type.startsWith("cancel-seed"))).toEqual([
      { node: "a", output: { type: "cancel-seed-timers" } },
      { node: "b", output: { type: "cancel-seed-timer", timer: "seed-node-timeout" } },
      { node: "b", output: { type: "cancel-seed-timer", timer: "join-retry" } },
      { node: "b", output: { type: "cancel-seed-timers" } },
    ]);
    // every member has seen the state: the leader moves b up on its next round
    expect(w.feed("a", { type: "leader-tick" })).toEqual(["a: member-up b"]);
    // the change goes to every member with the next gossip round
    expect(w.feed("a", { type: "gossip-tick" })).toEqual(["a -> b Gossip"]);
    // b holds a's version now and tells a only its seen mark: a seen status
    expect(w.deliver()).toEqual(["b: member-up b", "b -> a GossipStatus"]);
    expect(w.view("b")).toBe("a=up b=up");
    // no second broadcast: later rounds are digests and targeted gossip
    expect(w.feed("a", { type: "gossip-tick" })).toEqual(["a -> b GossipStatus"]);
  });

  it("a member notes once, at debug level, that it is up and the resolver may act", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b"]);
    const note = "up, so the cluster has converged once: the split brain resolver may act";
    expect([...logsOf(w, "a", note), ...logsOf(w, "b", note)]).toEqual([
      { level: "debug", fields: undefined },
      { level: "debug", fields: undefined },
    ]);
  });

  it("a join request to a node that is no member yet gets no welcome, but a refusal", () => {
    const w = new MembershipWorld();
    w.add("a").add("b");
    expect(w.feed("b", { type: "join", to: { ...addressOfName("a") } })).toEqual(["b -> a Join"]);
    expect(noGossip(w.deliver())).toEqual([
      "a: info join refused",
      "a -> b JoinRefused",
      "b: info join request refused",
    ]);
    expect(logsOf(w, "a", "join refused")).toEqual([
      { level: "info", fields: { node: "shardkit://sk@b:2552#2", reason: "not-initialized" } },
    ]);
    expect(w.isMember("b")).toBe(false);
  });

  it("a machine has joined once only after it formed a cluster or was welcomed", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.add("a").add("b");
    expect([w.machine("a").joinedOnce, w.machine("b").joinedOnce]).toEqual([false, false]);
    w.feed("a", { type: "start" });
    w.feed("b", { type: "start" });
    expect(w.machine("b").joinedOnce).toBe(false);
    w.deliver();
    expect([w.machine("a").joinedOnce, w.machine("b").joinedOnce]).toEqual([true, true]);
  });

  it("a member just welcomed into the cluster has no change of its own to broadcast", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "c"]);
    w.add("b");
    w.feed("b", { type: "start" });
    // b tells a (its welcomer) that it has seen the welcome gossip
    expect(w.deliver()).toContain("b -> a Gossip");
    // its first round goes to the one member that has not seen it, not to every member:
    // a seen status (c asks for the full gossip only if it lacks the version)
    expect(w.feed("b", { type: "gossip-tick" })).toEqual(["b -> c GossipStatus"]);
  });
});

describe("membership machine: messages", () => {
  const join: MembershipMessage = { kind: MembershipKind.Join, roles: [], appVersion: "1.0.0" };
  const hostsOf = (outputs: readonly MembershipOutput[]) =>
    outputs.flatMap((o) =>
      o.type === "send" ? [`${o.to.host} ${KIND_NAME.get(o.message.kind)}`] : [],
    );

  it("two seeds started together: neither is a member, each nacks the other, the first forms the cluster", () => {
    const w = new MembershipWorld({ seeds: ["a", "b"] });
    w.add("a").add("b");
    w.feed("b", { type: "start" });
    w.feed("a", { type: "start" });
    expect(w.deliver()).toEqual([
      "a -> b InitJoinNack",
      "b -> a InitJoinNack",
      "a: info formed a new cluster",
      "a: member-joined a",
      "a: leader-changed a",
      "a: member-up a",
    ]);
    w.run(6000);
    expect(w.view("b")).toBe("a=up b=up");
  });

  it("a gossip for another incarnation or an unreadable recipient is ignored without a reply", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    const a = w.machine("a");
    const b = w.machine("b").state.selfUniqueAddress;
    const gossip = a.state.latestGossip;
    const other = uniqueAddressToString(uniqueAddressOf(a.state.selfUniqueAddress.address, 99));
    for (const to of [other, "not an address"])
      expect(
        a.handle(
          { type: "received", from: b, message: { kind: MembershipKind.Gossip, to, gossip } },
          w.now,
        ),
      ).toEqual([]);
  });

  it("a gossip status with an unreadable version is ignored; a newer one is answered with a status", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    const a = w.machine("a");
    const b = w.machine("b").state.selfUniqueAddress;
    const status = (version: [string, number][]) =>
      a.handle(
        {
          type: "received",
          from: b,
          message: { kind: MembershipKind.GossipStatus, version, seenDigest: 0 },
        },
        w.now,
      );
    expect(status([["x", -1]])).toEqual([]);
    const newer: [string, number][] = [
      ...a.state.latestGossip.version.entries.map(([k, c]): [string, number] => [k, c]),
      ["zzz", 1],
    ];
    // b has something a has not: a sends its status, so that b sends its gossip
    expect(hostsOf(status(newer))).toEqual(["b GossipStatus"]);
  });

  it("compact status: a hashed status of another version gets a compact reply; an unreadable compact status gets the full one", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    const a = w.machine("a");
    const b = w.machine("b").state.selfUniqueAddress;
    const sent = (outputs: readonly MembershipOutput[]) =>
      outputs.flatMap((o) =>
        o.type === "send" && o.message.kind === MembershipKind.GossipStatus ? [o.message] : [],
      );
    // a hashed status of a version a does not hold: a's full status goes back, compact
    const hashed = a.handle(
      {
        type: "received",
        from: b,
        message: {
          kind: MembershipKind.GossipStatus,
          version: [],
          seenDigest: 0,
          versionHash: [1, 2],
        },
      },
      w.now,
    );
    const [reply] = sent(hashed);
    expect(reply?.compactOn).toBe(a.state.latestGossip.members);
    expect(reply?.version).toBe(a.state.latestGossip.version.entries);
    // b could not read a compact status: a answers with its whole status
    const [whole, ...rest] = sent(a.handle({ type: "status-unreadable", from: b }, w.now));
    expect(rest).toEqual([]);
    expect(whole?.compactOn).toBeUndefined();
    expect(whole?.versionHash).toBeUndefined();
    expect(whole?.version).toBe(a.state.latestGossip.version.entries);
    // from a node that is no member: nothing
    const stranger = uniqueAddressOf(b.address, 12345);
    expect(sent(a.handle({ type: "status-unreadable", from: stranger }, w.now))).toEqual([]);
  });

  it("own versions: a merge no other member holds goes to an unseen target as the gossip itself; once another holds it, rounds lead with a seen status", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c", "d"]);
    const a = w.machine("a");
    const node = (n: string) => w.machine(n).state.selfUniqueAddress;
    const to = uniqueAddressToString(a.state.selfUniqueAddress);
    const base = a.state.latestGossip;
    const gossipFrom = (from: string, gossip: typeof base) =>
      a.handle(
        {
          type: "received",
          from: node(from),
          message: {
            kind: MembershipKind.Gossip,
            to,
            gossip,
            membersHash: membersHashOf(gossip.members),
          },
        },
        w.now,
      );
    const sends = (outputs: readonly MembershipOutput[]) =>
      outputs.flatMap((o) => (o.type === "send" ? [o.message] : []));
    // c's newer version: a takes it (c holds it), then b's concurrent one: a merges
    gossipFrom("c", withOnlySeen(incrementVersion(base, clockKeyOf(node("c"))), node("c")));
    gossipFrom("b", withOnlySeen(incrementVersion(base, clockKeyOf(node("b"))), node("b")));
    const merged = a.state.latestGossip;
    expect(merged.version.entries.map((e) => e[0])).toEqual(
      expect.arrayContaining([clockKeyOf(node("b")), clockKeyOf(node("c"))]),
    );
    // a round: the merge itself, without the member list (others hold ours)
    const round = sends(a.handle({ type: "gossip-tick" }, w.now));
    expect(round.length).toBeGreaterThan(0);
    for (const m of round) {
      expect(m.kind).toBe(MembershipKind.Gossip);
      if (m.kind !== MembershipKind.Gossip) continue;
      expect(m.compact).toBe(true);
      expect(m.gossip.version).toBe(merged.version);
    }
    // b sends the merge back with its mark: b holds a's version now
    gossipFrom("b", withOnlySeen(merged, node("b")));
    const later = sends(a.handle({ type: "gossip-tick" }, w.now));
    expect(later.length).toBeGreaterThan(0);
    for (const m of later) expect(m.kind).toBe(MembershipKind.GossipStatus);
  });

  it("compact seen reply: a gossip of our version that lacks our mark gets a compact seen status when its sender holds our member list", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    const a = w.machine("a");
    const b = w.machine("b").state.selfUniqueAddress;
    const to = uniqueAddressToString(a.state.selfUniqueAddress);
    const reply = (membersHash: readonly [number, number] | undefined) => {
      const gossip = withOnlySeen(a.state.latestGossip, b);
      const outputs = a.handle(
        {
          type: "received",
          from: b,
          message: {
            kind: MembershipKind.Gossip,
            to,
            gossip,
            ...(membersHash === undefined ? {} : { membersHash }),
          },
        },
        w.now,
      );
      return outputs.flatMap((o) => (o.type === "send" ? [o.message] : []));
    };
    const members = a.state.latestGossip.members;
    const [compact, ...more] = reply(membersHashOf(members));
    expect(more).toEqual([]);
    expect(compact?.kind).toBe(MembershipKind.GossipStatus);
    if (compact?.kind !== MembershipKind.GossipStatus) return;
    expect(compact.seen).toBeDefined();
    expect(compact.compactOn).toBe(members);
    // a sender of an earlier version sends no hash: the whole version goes back
    const [whole] = reply(undefined);
    expect(whole?.kind).toBe(MembershipKind.GossipStatus);
    if (whole?.kind !== MembershipKind.GossipStatus) return;
    expect(whole.seen).toBeDefined();
    expect(whole.compactOn).toBeUndefined();
    expect(whole.version).toBe(a.state.latestGossip.version.entries);
  });

  it("a member that asks to join again is welcomed again; a new incarnation downs the old one", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c", "d"]);
    const b = w.machine("b").state.selfUniqueAddress;
    expect(w.feed("a", { type: "received", from: b, message: join })).toEqual(["a -> b Welcome"]);
    expect(
      w.feed("a", { type: "received", from: uniqueAddressOf(b.address, 99), message: join }),
    ).toEqual(["a: member-downed b", "a: unreachable-member b"]);
    // the change goes to every member but the downed one with the next round
    expect(w.feed("a", { type: "gossip-tick" })).toEqual(["a -> c Gossip", "a -> d Gossip"]);
  });

  it("joins beyond the admission rate wait in the queue; beyond the queue they are dropped", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      settings: { joinAdmissionQueueMax: 1, maxJoinsAdmittedPerSecond: 1 },
    });
    w.formCluster(["a"]);
    const b = w.machine("a").state.selfUniqueAddress;
    const node = (host: string) => uniqueAddressOf({ ...b.address, host }, 50);
    const a = w.machine("a");
    expect(hostsOf(a.handle({ type: "received", from: node("x"), message: join }, w.now))).toEqual([
      "x Welcome",
    ]);
    expect(a.handle({ type: "received", from: node("y"), message: join }, w.now)).toEqual([]);
    expect(a.handle({ type: "received", from: node("z"), message: join }, w.now)).toEqual([
      {
        type: "log",
        level: "info",
        message: "join request dropped: admission queue full (the node retries)",
        fields: { node: "shardkit://sk@z:2552#50", queued: 1 },
      },
    ]);
  });

  it("a welcome counts only from the node this one asked to join", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "c"]);
    w.add("b");
    const [a, c] = ["a", "c"].map((n) => w.machine(n).state.selfUniqueAddress) as [
      UniqueAddress,
      UniqueAddress,
    ];
    expect(w.feed("b", { type: "join", to: a.address })).toEqual(["b -> a Join"]);
    const reply = w
      .machine("a")
      .handle(
        { type: "received", from: w.machine("b").state.selfUniqueAddress, message: join },
        w.now,
      )
      .find((o) => o.type === "send");
    const welcome = reply?.type === "send" ? reply.message : join;
    expect(welcome.kind).toBe(MembershipKind.Welcome);
    expect(w.feed("b", { type: "received", from: c, message: welcome })).toEqual([]);
    expect(w.feed("b", { type: "received", from: a, message: welcome })).toContain(
      "b: info welcomed into the cluster",
    );
    expect(logsOf(w, "b", "welcomed into the cluster")).toEqual([
      { level: "info", fields: { by: "shardkit://sk@a:2552#1" } },
    ]);
  });

  it("a welcome counts only from the seed node this one sent its Join to", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "c"]);
    w.add("b");
    const [a, c] = ["a", "c"].map((n) => w.machine(n).state.selfUniqueAddress) as [
      UniqueAddress,
      UniqueAddress,
    ];
    const b = w.machine("b");
    b.handle({ type: "start" }, w.now);
    expect(
      hostsOf(
        b.handle(
          { type: "received", from: a, message: { kind: MembershipKind.InitJoinAck } },
          w.now,
        ),
      ),
    ).toEqual(["a Join"]);
    const reply = w
      .machine("a")
      .handle({ type: "received", from: b.state.selfUniqueAddress, message: join }, w.now)
      .find((o) => o.type === "send");
    const welcome = reply?.type === "send" ? reply.message : join;
    expect(b.handle({ type: "received", from: c, message: welcome }, w.now)).toEqual([]);
    expect(b.joinedOnce).toBe(false);
  });
});

describe("membership machine: read-only view", () => {
  it("joins through seeds only once started with seed nodes, and starting again does nothing", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.add("a");
    expect(w.machine("a").joinsThroughSeeds).toBe(false);
    expect(w.feed("a", { type: "start" })).toContain("a: info formed a new cluster");
    expect(w.machine("a").joinsThroughSeeds).toBe(true);
    expect(w.feed("a", { type: "start" })).toEqual([]);
    // not even a seed timer: the seed-node conversation is not started again
    expect(w.machine("a").handle({ type: "start" }, w.now)).toEqual([]);
    const noSeeds = new MembershipWorld();
    noSeeds.add("a");
    expect(noSeeds.feed("a", { type: "start" })).toEqual([]);
    expect(noSeeds.machine("a").joinsThroughSeeds).toBe(false);
  });

  it("exposes one failure detector per monitored member", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    expect([...w.machine("a").failureDetectors.keys()]).toEqual([
      "shardkit://sk@b:2552#2",
      "shardkit://sk@c:2552#3",
    ]);
  });
});

describe("membership machine: commands", () => {
  it("a join to its own address forms a cluster; to another port of its host it sends Join", () => {
    const w = new MembershipWorld();
    w.add("a");
    expect(w.feed("a", { type: "join", to: { ...addressOfName("a"), port: 2553 } })).toEqual([
      "a -> a Join",
    ]);
    expect(w.feed("a", { type: "join", to: addressOfName("a") })).toEqual([
      "a: info formed a new cluster",
      "a: member-joined a",
      "a: leader-changed a",
      "a: member-up a",
    ]);
  });

  it("down once per member, none for an unknown node; the next broadcast skips the down member", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    expect(w.feed("a", { type: "down", host: "c", port: 2552 })).toEqual(["a: member-downed c"]);
    expect(w.feed("a", { type: "down", host: "c", port: 2552 })).toEqual([]);
    // not even a new version of the gossip
    expect(w.machine("a").handle({ type: "down", host: "c", port: 2552 }, w.now)).toEqual([]);
    expect(w.feed("a", { type: "down", host: "zz", port: 2552 })).toEqual([]);
    // host and port both name the member: another port of b's host is no member
    expect(w.feed("a", { type: "down", host: "b", port: 2553 })).toEqual([]);
    expect(w.feed("a", { type: "leave", host: "b", port: 2553 })).toEqual([]);
    expect(w.feed("a", { type: "leave", host: "zz", port: 2552 })).toEqual([]);
    expect(w.feed("a", { type: "gossip-tick" })).toEqual(["a -> b Gossip"]);
  });

  it("exiting-completed without exiting tasks running changes nothing, held or not", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b"]);
    expect(w.feed("a", { type: "exiting-completed" })).toEqual([]);
    w.feed("a", { type: "hold-removal-until-exiting-completed" });
    expect(w.feed("a", { type: "exiting-completed" })).toEqual([]);
    // nothing changed, so nothing is broadcast
    expect(w.feed("a", { type: "gossip-tick" })).toEqual(["a -> b GossipStatus"]);
  });

  it("the leader counts a leaver's ExitingConfirmed until it removes it", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    const a = w.machine("a");
    w.feed("b", { type: "leave", host: "b", port: 2552 });
    const seen: string[] = [];
    let whileExiting: MembershipState | undefined;
    for (let i = 0; i < 10; i++) {
      w.run(TICK_MS);
      if (whileExiting === undefined && a.exitingConfirmedIn(a.state).length > 0)
        whileExiting = a.state;
      seen.push(
        a
          .exitingConfirmedIn(a.state)
          .map((u) => u.address.host)
          .join(","),
      );
    }
    expect(seen).toContain("b");
    expect(seen.at(-1)).toBe("");
    expect(a.exitingConfirmedIn(w.machine("c").state)).toEqual([]);
    // the confirmation itself is forgotten with the removal, not just filtered out
    expect(a.exitingConfirmedIn(whileExiting as MembershipState)).toEqual([]);
  });
});

const KIND_NAME = new Map<number, string>(
  Object.entries(MembershipKind).map(([name, kind]) => [kind, name]),
);

/** The log outputs of `node` with `message`, as level and fields. */
function logsOf(w: MembershipWorld, node: string, message: string) {
  return w.outputs.flatMap(({ node: n, output }) =>
    n === node && output.type === "log" && output.message === message
      ? [{ level: output.level, fields: output.fields }]
      : [],
  );
}

function addressOfName(name: string) {
  return { protocol: "shardkit", system: "sk", host: name, port: 2552 };
}

describe("membership machine: split brain resolver", () => {
  it("keep-majority downs an unreachable member once the view was stable for stable-after", () => {
    const stableAfterMs = 5000;
    const w = new MembershipWorld({ seeds: ["a"], downing: { stableAfterMs } });
    w.formCluster(["a", "b", "c"]);
    const cut = w.now;
    w.partition(["a", "b"], ["c"]);
    w.run(stableAfterMs + 10_000);
    const seen = w.when("a: unreachable-member c") as number;
    expect(seen).toBeGreaterThan(cut);
    const downed = w.when(
      "a: DOWN c (keep-majority: majority: 2 reachable vs 1 unreachable members)",
    );
    // on the first leader round once the view has not changed for stableAfterMs
    expect(downed).toBeGreaterThanOrEqual(seen + stableAfterMs);
    expect(downed).toBeLessThan(seen + stableAfterMs + TICK_MS + 1);
    // the other side decides the same on its own and stops
    expect(decisions(w, cut)).toEqual([
      `${downed} a: DOWN c (keep-majority: majority: 2 reachable vs 1 unreachable members)`,
      `${downed} c: DOWN c (keep-majority: minority: 1 reachable vs 2 unreachable members)`,
      `${downed} c: self-removed (this member was downed)`,
    ]);
    // each decision passes the `downing` output once, with its kind (the counting hook)
    expect(downingKinds(w)).toEqual(["a down-unreachable", "c down-reachable"]);
    // b is no leader: it only learns the decision; the leader removes c and quarantines it
    expect(w.trace.filter((l) => l.startsWith("b: DOWN"))).toEqual([]);
    expect(w.trace).toContain("a: quarantine c");
    // a downed member is quarantined at once and stops with a warning (it did not leave)
    expect(w.trace).not.toContain("a: quarantine c after 5000");
    expect(w.trace).toContain("c: warn removed from the cluster; stopping");
    expect(logsOf(w, "c", "removed from the cluster; stopping")).toEqual([
      { level: "warn", fields: { reason: "this member was downed" } },
    ]);
    expect(w.trace).toContain("a: member-removed c (was down)");
    expect(w.view("a")).toBe("a=up b=up");
  });

  it("down-all-when-unstable: a view that never settles around a lasting failure downs all", () => {
    const stableAfterMs = 10_000;
    const w = new MembershipWorld({ seeds: ["a"], downing: { stableAfterMs } });
    const boundMs = downAllWhenUnstableMsOf(resolveSbrSettings({ stableAfterMs }));
    w.formCluster(["a", "b", "c"]);
    const cut = w.now;
    // c is cut off for good; the link a-b flaps, so b's view keeps changing
    w.partition(["a", "b"], ["c"]);
    for (let i = 0; i < 4; i++) {
      w.partition(["a"], ["b"]);
      w.run(6000);
      w.heal(["a"], ["b"]);
      w.run(2000);
    }
    const firstChange = w.when("b: unreachable-member a") as number;
    const all = decisions(w, cut);
    const bDown = all.find((l) => l.includes("b: DOWN")) as string;
    expect(bDown).toMatch(/^\d+ b: DOWN a,b,c \(down-all-when-unstable after \d+ ms\)$/);
    const at = Number(bDown.split(" ")[0]);
    const unstableFor = Number(/after (\d+) ms/.exec(bDown)?.[1]);
    // only after stable-after plus the bound, counted from the episode's first change
    expect(unstableFor).toBeGreaterThan(stableAfterMs + boundMs);
    expect(at - firstChange).toBe(unstableFor);
    expect(all).toEqual([
      // c's own view ({a, b} away) was stable: keep-majority, it is the minority
      expect.stringMatching(/^\d+ c: DOWN c \(keep-majority: minority/),
      expect.stringMatching(/^\d+ c: self-removed/),
      // a and b see the same flapping view: both down all, at the same round
      `${at} a: DOWN a,b,c (down-all-when-unstable after ${unstableFor} ms)`,
      `${at} a: self-removed (this member was downed)`,
      bDown,
      `${at} b: self-removed (this member was downed)`,
    ]);
    expect(downingKinds(w)).toEqual([
      "c down-reachable",
      "a down-all-when-unstable",
      "b down-all-when-unstable",
    ]);
  });

  it("lease-majority asks for the lease and decides on the answer", () => {
    const w = leaseMajorityPartition(true);
    const lines = w.run(12_000);
    // the majority side asks at once, the minority after acquireLeaseDelayForMinorityMs
    expect(lines).toContain("a: acquire-lease 0");
    expect(lines).toContain("c: acquire-lease 2000");
    // asked once while the answer is outstanding
    expect(lines.filter((l) => l === "a: acquire-lease 0")).toHaveLength(1);
    expect(noGossip(w.feed("c", { type: "lease-result", acquired: false }))).toEqual([
      expect.stringMatching(/^c: DOWN c \(lease-majority/),
      "c: member-downed c",
      "c: leader-changed -",
      "c: warn removed from the cluster; stopping",
      "c: self-removed (this member was downed)",
    ]);
    expect(noGossip(w.feed("a", { type: "lease-result", acquired: true }))).toEqual([
      expect.stringMatching(/^a: DOWN c \(lease-majority/),
      "a: member-downed c",
    ]);
  });
});

describe("membership machine: weakly-up", () => {
  it("a joiner moves to weakly-up allowWeaklyUpMembersMs after the leader's last convergence", () => {
    const w = new MembershipWorld({ seeds: ["a"], settings: { allowWeaklyUpMembersMs: 12_000 } });
    w.formCluster(["a", "b"]);
    w.add("d");
    w.feed("d", { type: "start" });
    w.run(3000);
    // the last convergence: every member has seen d up (on the leader round that moved it)
    const converged = w.when("a: member-up d") as number;
    w.partition(["a", "d"], ["b"]);
    w.run(6000);
    expect(w.when("a: unreachable-member b")).toBeDefined();
    w.add("c");
    w.feed("c", { type: "start" });
    w.run(15_000);
    const joined = w.when("a: member-joined c") as number;
    const weaklyUp = w.when("a: member-weakly-up c") as number;
    // counted from the last convergence, neither from the start nor from the latest change
    expect(joined).toBeLessThan(converged + 12_000);
    expect(weaklyUp).toBe(converged + 12_000);
  });
});

describe("membership machine: lease-majority without a lease", () => {
  it("asks for no lease and downs no one", () => {
    const w = leaseMajorityPartition(false);
    const lines = w.run(12_000);
    expect(lines).toContain("a: unreachable-member c");
    expect(lines.filter((l) => / (acquire-lease|DOWN) /.test(l))).toEqual([]);
  });
});

describe("membership machine: before the first convergence", () => {
  it("a member that was never up downs only itself, and says why it withholds the others", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      downing: { activeStrategy: "down-all", stableAfterMs: 5000 },
    });
    w.add("a").add("b");
    w.feed("a", { type: "start" });
    w.feed("b", { type: "start" });
    w.deliver();
    expect(w.view("b")).toBe("a=up b=joining");
    w.partition(["a"], ["b"]);
    w.run(20_000);
    expect(w.trace.filter((l) => l.startsWith("b: DOWN"))).toEqual([
      "b: DOWN b (down-all: down-all strategy)",
    ]);
    expect(w.trace).toContain(
      "b: warn split brain resolver: not downing other members: this member was never up, so the cluster has not converged with it yet (downing.actBeforeFirstConvergence is false)",
    );
  });
});

describe("membership machine: failure detection", () => {
  it("a member paused before it answered any heartbeat still becomes unreachable", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    const names = ["a", "b", "c"];
    for (const n of names) w.add(n);
    for (const n of names) w.feed(n, { type: "start" });
    w.deliver();
    w.runUntil(() => names.every((o) => names.every((m) => w.statusOf(o, m) === "up")), 30_000);
    expect(w.now).toBe(1000);
    // c is up from a's leader round at 1000; the first heartbeat to it goes out at 2000
    w.pause("c");
    w.run(10_000);
    // no answer: the first heartbeat is assumed expectedResponseAfterMs (1 s) later, and phi
    // grows from there past the acceptable pause (3 s)
    expect(w.when("a: unreachable-member c")).toBe(9000);
    expect(w.when("b: unreachable-member c")).toBe(9000);
  });

  it("a joining member is not monitored until it is weakly-up or up", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b"]);
    w.partition(["a"], ["b"]);
    w.run(6000);
    w.add("c");
    w.feed("c", { type: "start" });
    w.run(500);
    expect(w.view("a")).toBe("a=up b=up c=joining");
    w.feed("a", { type: "heartbeat-tick" });
    expect([...w.machine("a").failureDetectors.keys()]).toEqual(["shardkit://sk@b:2552#2"]);
    w.runUntil(() => w.statusOf("a", "c") === "weakly-up", 20_000);
    w.feed("a", { type: "heartbeat-tick" });
    expect([...w.machine("a").failureDetectors.keys()]).toEqual([
      "shardkit://sk@b:2552#2",
      "shardkit://sk@c:2552#3",
    ]);
  });

  it("heartbeats are answered ahead of other frames, and not for a removed member", () => {
    const w = new MembershipWorld({ seeds: ["a"], downing: { stableAfterMs: 5000 } });
    w.formCluster(["a", "b", "c"]);
    const [b, c] = [w.machine("b"), w.machine("c")].map((m) => m.state.selfUniqueAddress);
    const heartbeat = { kind: MembershipKind.Heartbeat, seq: 7 } as const;
    expect(
      w
        .machine("a")
        .handle({ type: "received", from: b as UniqueAddress, message: heartbeat }, w.now),
    ).toEqual([
      {
        type: "send",
        to: (b as UniqueAddress).address,
        message: { kind: MembershipKind.HeartbeatRsp, seq: 7 },
        urgent: true,
      },
    ]);
    w.pause("c");
    w.run(30_000);
    expect(w.view("a")).toBe("a=up b=up");
    expect(
      w
        .machine("a")
        .handle({ type: "received", from: c as UniqueAddress, message: heartbeat }, w.now),
    ).toEqual([]);
  });

  it("only answers to the last three heartbeat requests feed the failure detector", () => {
    const w = new MembershipWorld({ seeds: ["a"], downing: { activeStrategy: "down-all" } });
    w.formCluster(["a", "b"]);
    const a = w.machine("a");
    const b = w.machine("b").state.selfUniqueAddress;
    w.partition(["a"], ["b"]);
    w.run(8000);
    const detector = a.failureDetectors.get(uniqueAddressToString(b));
    expect(detector?.isAvailable(w.now)).toBe(false);
    const seqs = w.outputs.flatMap(({ node, output }) =>
      node === "a" && output.type === "send" && output.message.kind === MembershipKind.Heartbeat
        ? [output.message.seq]
        : [],
    );
    expect(seqs.length).toBeGreaterThan(4);
    const answer = (seq: number) =>
      a.handle(
        { type: "received", from: b, message: { kind: MembershipKind.HeartbeatRsp, seq } },
        w.now,
      );
    // an answer held up by the cut, to the fourth-last request: no heartbeat
    expect(answer(seqs.at(-4) as number)).toEqual([]);
    expect(detector?.isAvailable(w.now)).toBe(false);
    // to the third-last: heard again
    answer(seqs.at(-3) as number);
    expect(detector?.isAvailable(w.now)).toBe(true);
  });

  it("an observer the ring no longer assigns to an unreachable member withdraws its mark", () => {
    // one monitor per member: on the ring c -> a -> b -> c, a alone watches b
    const w = new MembershipWorld({ seeds: ["a"], settings: { monitoredByNrOfMembers: 1 } });
    w.formCluster(["a", "b", "c"]);
    w.pause("b");
    w.runUntil(() => w.when("a: unreachable-member b") !== undefined, 20_000);
    const from = w.trace.length;
    // d lands between a and b on the ring: once weakly-up it is a's receiver, and d watches b
    w.add("d");
    w.feed("d", { type: "start" });
    w.run(12_000);
    const lines = w.trace.slice(from).filter((l) => /^a: .*(monitor|reachable)|^d: warn/.test(l));
    expect(lines).toEqual([
      "a: info no longer monitoring node: withdrawing its unreachable mark",
      "a: reachable-member b",
      "d: warn marking node as unreachable",
      "a: unreachable-member b",
    ]);
    expect(logsOf(w, "a", "no longer monitoring node: withdrawing its unreachable mark")).toEqual([
      { level: "info", fields: { node: "shardkit://sk@b:2552#2" } },
    ]);
  });

  it("tombstones are pruned pruneGossipTombstonesAfterMs after the removal", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      settings: { pruneGossipTombstonesAfterMs: 5000 },
    });
    w.formCluster(["a", "b", "c"]);
    w.feed("b", { type: "leave", host: "b", port: 2552 });
    w.runUntil(() => w.when("a: member-removed b (was exiting)") !== undefined, 10_000);
    const tombstones = () =>
      ["a", "c"].map((n) => w.machine(n).state.latestGossip.tombstones.length);
    expect(tombstones()).toEqual([1, 1]);
    // a's detector of b is dropped only on the next heartbeat round: a reaper round before
    // it skips the detector of a node that is no member any more
    expect(w.feed("a", { type: "reaper-tick", latenessMs: 0, loopDelayMs: 0 })).toEqual([]);
    w.run(4000);
    expect(tombstones()).toEqual([1, 1]);
    w.run(1000);
    expect(tombstones()).toEqual([0, 0]);
  });
});

describe("membership machine: lease-majority on a member that was never up", () => {
  it("withholds the others once per withheld list, changes nothing, and asks again", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      hasLease: true,
      downing: {
        stableAfterMs: 5000,
        activeStrategy: "lease-majority",
        leaseMajority: { leaseImplementation: "test-lease" },
      },
    });
    w.formCluster(["a"]);
    w.add("c");
    w.feed("c", { type: "start" });
    w.deliver();
    // cut before c sees itself up: it moves itself to weakly-up, but was never up
    w.partition(["a"], ["c"]);
    w.run(15_000);
    expect(w.view("c")).toBe("a=up c=weakly-up");
    const reason =
      "lease-majority: minority side: acquire the lease after a delay (lease acquired)";
    expect(w.feed("c", { type: "lease-result", acquired: true })).toEqual([
      "c: warn split brain resolver: not downing other members: this member was never up, so the cluster has not converged with it yet (downing.actBeforeFirstConvergence is false)",
      `c: DOWN nothing (${reason})`,
    ]);
    // the answer is in: the next decision asks for the lease again
    expect(w.run(3000)).toContain("c: acquire-lease 2000");
    // the same withheld list again: no second warning, and nothing changes (no new state)
    const c = w.machine("c");
    expect(c.handle({ type: "lease-result", acquired: true }, w.now)).toEqual([
      {
        type: "downing",
        by: "split brain resolver",
        decision: "down-unreachable",
        nodes: [],
        reason,
      },
    ]);
    expect(
      logsOf(
        w,
        "c",
        "split brain resolver: not downing other members: this member was never up, so the cluster has not converged with it yet (downing.actBeforeFirstConvergence is false)",
      ),
    ).toEqual([{ level: "warn", fields: { withheld: ["shardkit://sk@a:2552#1"], reason } }]);
    // the lease lost: c downs only itself, which withholds nothing, so no warning at all
    const lost = c.handle({ type: "lease-result", acquired: false }, w.now);
    expect(lost).toContainEqual(
      expect.objectContaining({ type: "downing", nodes: [w.uniqueAddressOf("c")] }),
    );
    expect(
      lost.flatMap((o) => (o.type === "log" && o.level === "warn" ? [o.message] : [])),
    ).toEqual(["removed from the cluster; stopping"]);
  });
});

describe("membership machine: own stall", () => {
  const STALL_WARNING =
    "a: warn this member itself was stalled (event loop blocked or starved of CPU) longer " +
    "than the acceptable heartbeat pause: that time does not count against the members it " +
    "monitors, and it marks no member unreachable until it has heard them again";

  it("a stalled member marks no one unreachable after the stall; its peers see it again", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    w.pause("a");
    w.run(8000);
    // meanwhile its monitors did see a stop answering
    expect(w.machine("b").state.latestGossip.overview.reachability.records.length).toBeGreaterThan(
      0,
    );
    expect(w.resume("a")).toEqual([STALL_WARNING]);
    // 7 s of the 8 s pause (one tick late is on time); suspect for a heartbeat round trip
    expect(logsOf(w, "a", STALL_WARNING.slice("a: warn ".length))).toEqual([
      { level: "warn", fields: { stalledMs: 7000, suspectUntilMs: 2000 } },
    ]);
    const after = w.run(5000);
    expect(after.filter((l) => l.startsWith("a: warn marking"))).toEqual([]);
    expect(after).toContain("b: reachable-member a");
    expect(after).toContain("c: reachable-member a");
    expect(after).toContain("b: info marking node as reachable again");
    expect(logsOf(w, "b", "marking node as reachable again")).toEqual([
      { level: "info", fields: { node: "shardkit://sk@a:2552#1" } },
    ]);
    expect(w.machine("a").state.latestGossip.overview.reachability.records).toEqual([]);
  });

  it("right after a stall, a member that stopped answering before it is marked only once the verdicts are no longer suspect", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    w.pause("c");
    w.run(2500);
    w.pause("a");
    w.run(8000);
    const resumed = w.now;
    w.resume("a");
    w.run(6000);
    // suspect for 2 s after the stall: the first reaper round after that marks c
    expect(w.when("a: warn marking node as unreachable")).toBe(resumed + 2500);
    expect(
      logsOf(w, "a", "not marking node as unreachable: own verdicts suspect after a stall"),
    ).toEqual([{ level: "debug", fields: { node: "shardkit://sk@c:2552#3" } }]);
    expect(logsOf(w, "a", "marking node as unreachable")).toEqual([
      { level: "warn", fields: { node: "shardkit://sk@c:2552#3", phi: expect.any(Number) } },
    ]);
  });

  it("the resolver does not count this member's own stall as time the view was stable", () => {
    const downAt = (pauseMs: number) => {
      const w = new MembershipWorld({ seeds: ["a"], downing: { stableAfterMs: 10_000 } });
      w.formCluster(["a", "b", "c"]);
      w.pause("c");
      w.runUntil(() => w.when("a: unreachable-member c") !== undefined, 20_000);
      const seen = w.now;
      w.run(3000);
      if (pauseMs > 0) {
        w.pause("a");
        w.run(pauseMs);
        w.resume("a");
      }
      w.run(20_000);
      const line = "a: DOWN c (keep-majority: majority: 2 reachable vs 1 unreachable members)";
      return (w.when(line) as number) - seen;
    };
    expect(downAt(0)).toBe(10_000);
    // a 4 s pause reported as a 3 s stall (one tick late is on time): 3 s later
    expect(downAt(4000)).toBe(13_000);
  });

  it("a stall within the acceptable pause is not reported; the event-loop delay counts as a stall", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    expect(w.feed("a", { type: "reaper-tick", latenessMs: 2500, loopDelayMs: 0 })).toEqual([]);
    expect(w.feed("a", { type: "reaper-tick", latenessMs: 0, loopDelayMs: 3500 })).toEqual([
      STALL_WARNING,
    ]);
  });

  it("without the stall measured, the same pause makes it mark both peers unreachable", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    w.pause("a");
    w.run(8000);
    expect(noGossip(w.resume("a", false)).filter((l) => l.startsWith("a: "))).toEqual([
      "a: warn marking node as unreachable",
      "a: warn marking node as unreachable",
      "a: unreachable-member b",
      "a: unreachable-member c",
    ]);
  });
});

describe("membership machine: a partition within one failure-detection time of a decision", () => {
  /**
   * The seed 692 family (docs/cluster.md, "Known issue"): e is paused, a, b and d mark it
   * unreachable; 3 s before a's stable deadline the partition {a,d} | {b,e} begins and e
   * resumes. a decides on records that are out of date, each side goes on by itself.
   */
  it("each side decides on its own view; the downed e runs on until its own resolver stops it", () => {
    const stableAfterMs = 10_000;
    const w = new MembershipWorld({ seeds: ["a"], downing: { stableAfterMs } });
    w.formCluster(["a", "b", "d", "e"]);
    const start = w.now;
    w.pause("e");
    w.runUntil(() => w.when("a: unreachable-member e") !== undefined, 20_000);
    const seen = w.when("a: unreachable-member e") as number;
    // 3 s before a's stable deadline: less than one failure-detection time
    w.run(seen + stableAfterMs - 3000 - w.now);
    const cut = w.now;
    w.partition(["a", "d"], ["b", "e"]);
    w.resume("e");
    w.run(30_000);
    expect(decisions(w, start)).toEqual([
      // a, at its stable deadline 3 s after the cut, still counts b on its side
      `${cut + 3000} a: DOWN e (keep-majority: majority: 3 reachable vs 1 unreachable members)`,
      // b's view changes (e back, then a and d away): it never settles, b downs all
      `${cut + 11_000} b: DOWN a,b,d,e (down-all-when-unstable after 18000 ms)`,
      `${cut + 11_000} b: self-removed (this member was downed)`,
      // a's side settles on {b} unreachable and goes on as {a, d}
      `${cut + 15_000} a: DOWN b (keep-majority: majority: 2 reachable vs 1 unreachable members)`,
      // e, downed by a 19 s earlier, learns nothing of it and stops only by its own resolver
      `${cut + 22_000} e: DOWN a,b,d,e (down-all-when-unstable after 18000 ms)`,
      `${cut + 22_000} e: self-removed (this member was downed)`,
    ]);
    // a removes e only once b is downed too (convergence needs it), 16 s after the cut:
    // with the removal margin counted from there, e has stopped before its shards move
    const removed = w.when("a: member-removed e (was down)") as number;
    expect(removed).toBe(cut + 16_000);
    const marginMs = stableAfterMs + downAllWhenUnstableMsOf(resolveSbrSettings({ stableAfterMs }));
    expect(cut + 22_000).toBeLessThan(removed + marginMs);
    expect(w.view("a")).toBe("a=up d=up");
  });
});

describe("membership machine: leave", () => {
  it("a leave command moves an up member to leaving; leaving again, or leaving a down member, changes nothing", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    expect(w.feed("a", { type: "leave", host: "b", port: 2552 })).toContain("a: member-left b");
    expect(w.statusOf("a", "b")).toBe("leaving");
    expect(w.feed("a", { type: "leave", host: "b", port: 2552 })).toEqual([]);
    expect(w.statusOf("a", "b")).toBe("leaving");
    // a down member does not leave
    w.feed("a", { type: "down", host: "c", port: 2552 });
    expect(w.statusOf("a", "c")).toBe("down");
    expect(w.feed("a", { type: "leave", host: "c", port: 2552 })).toEqual([]);
    expect(w.statusOf("a", "c")).toBe("down");
  });

  it("a leaving member that holds no removal is moved to exiting and removed", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    w.feed("b", { type: "leave", host: "b", port: 2552 });
    w.run(30_000);
    expect(w.view("a")).toBe("a=up c=up");
    expect(w.trace).toContain("a: member-removed b (was exiting)");
  });

  it("a leaving member confirms exiting to the leader only, stops as one that left, and is quarantined after the delay", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    const from = w.trace.length;
    w.feed("b", { type: "leave", host: "b", port: 2552 });
    w.run(30_000);
    const lines = noGossip(w.trace.slice(from));
    expect(lines).toEqual([
      "b: member-left b",
      "a: member-left b",
      "c: member-left b",
      "a: member-exited b",
      "b: member-exited b",
      "b -> a ExitingConfirmed",
      "c: member-exited b",
      "b -> a ExitingConfirmed",
      // a graceful leaver is quarantined only after quarantineRemovedNodeAfterMs (5 s)
      "a: quarantine b after 5000",
      "a: member-removed b (was exiting)",
      "b -> a ExitingConfirmed",
      "b: info left the cluster; stopping",
      "b: self-removed (the cluster removed this member)",
      "c: quarantine b after 5000",
      "c: member-removed b (was exiting)",
    ]);
    expect(logsOf(w, "b", "left the cluster; stopping")).toEqual([
      { level: "info", fields: { reason: "the cluster removed this member" } },
    ]);
    expect(
      w.outputs.flatMap(({ node, output }) =>
        output.type === "quarantine" ? [`${node} ${output.reason}`] : [],
      ),
    ).toEqual(["a cluster member removed (was exiting)", "c cluster member removed (was exiting)"]);
    // the driver stops b at self-removed; were it fed more, it would not signal it again
    const a = w.machine("a").state;
    expect(
      w.machine("b").handle(
        {
          type: "received",
          from: a.selfUniqueAddress,
          message: {
            kind: MembershipKind.Gossip,
            to: uniqueAddressToString(w.machine("b").state.selfUniqueAddress),
            gossip: a.latestGossip,
          },
        },
        w.now,
      ),
    ).toEqual([]);
  });

  it("a leaving member that holds its removal is removed only after its exiting tasks completed", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    w.feed("b", { type: "hold-removal-until-exiting-completed" });
    w.feed("b", { type: "leave", host: "b", port: 2552 });
    w.run(30_000);
    expect(w.trace).not.toContain("a: member-removed b (was exiting)");
    expect(w.statusOf("a", "b")).toBe("exiting");
    // now b sees the gossip, confirms to the leader and broadcasts its seen mark
    expect(w.feed("b", { type: "exiting-completed" })).toEqual(["b -> a ExitingConfirmed"]);
    expect(w.feed("b", { type: "gossip-tick" })).toEqual(["b -> a Gossip", "b -> c Gossip"]);
    w.run(30_000);
    expect(w.view("a")).toBe("a=up c=up");
  });

  it("a member that leaves and is downed before it exits stops as one that left", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    const from = w.trace.length;
    w.feed("b", { type: "leave", host: "b", port: 2552 });
    w.feed("a", { type: "down", host: "b", port: 2552 });
    w.run(3000);
    expect(w.trace.slice(from).filter((l) => l.startsWith("b: "))).toEqual([
      "b: member-left b",
      "b: member-downed b",
      "b: info left the cluster; stopping",
      "b: self-removed (this member was downed)",
    ]);
  });

  it("a single member that leaves removes itself as its own leader and stops as one that left", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a"]);
    const from = w.trace.length;
    w.feed("a", { type: "leave", host: "a", port: 2552 });
    w.run(5 * TICK_MS);
    expect(w.trace.slice(from)).toEqual([
      "a: member-left a",
      "a: member-exited a",
      // no quarantine: a member never quarantines itself
      "a: member-removed a (was exiting)",
      "a: leader-changed -",
      "a: info left the cluster; stopping",
      "a: self-removed (this member was removed)",
    ]);
    expect(logsOf(w, "a", "left the cluster; stopping")).toEqual([
      { level: "info", fields: { reason: "this member was removed" } },
    ]);
  });

  it("when every member leaves, the exiting leader confirms to no one and quarantines only the others", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b"]);
    const from = w.trace.length;
    w.feed("a", { type: "leave", host: "a", port: 2552 });
    w.feed("a", { type: "leave", host: "b", port: 2552 });
    w.run(30_000);
    const lines = noGossip(w.trace.slice(from));
    // a, exiting, is the leader: it confirms exiting to no one (not to itself)
    expect(lines.filter((l) => l.startsWith("a -> "))).toEqual([]);
    expect(lines.filter((l) => l.includes("quarantine"))).toEqual(["a: quarantine b after 5000"]);
    expect(lines).toContain("a: self-removed (this member was removed)");
    expect(lines).toContain("b: self-removed (the cluster removed this member)");
  });

  it("a weakly-up member may leave too", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b"]);
    w.partition(["a"], ["b"]);
    w.run(6000);
    w.add("c");
    w.feed("c", { type: "start" });
    w.runUntil(() => w.statusOf("a", "c") === "weakly-up", 20_000);
    expect(w.feed("a", { type: "leave", host: "c", port: 2552 })).toContain("a: member-left c");
    expect(w.statusOf("a", "c")).toBe("leaving");
  });

  it("a joining member may leave too", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.add("a").add("b");
    w.feed("a", { type: "start" });
    w.feed("b", { type: "start" });
    w.deliver();
    expect(w.view("a")).toBe("a=up b=joining");
    w.feed("a", { type: "leave", host: "b", port: 2552 });
    expect(w.statusOf("a", "b")).toBe("leaving");
  });
});

describe("membership machine: a removed member that talks again", () => {
  it("is sent the gossip with its tombstone and stops", () => {
    const w = new MembershipWorld({ seeds: ["a"], downing: { stableAfterMs: 5000 } });
    w.formCluster(["a", "b", "c"]);
    w.pause("c");
    w.run(30_000);
    expect(w.view("a")).toBe("a=up b=up");
    w.resume("c");
    const lines = w.run(1000);
    expect(lines.slice(lines.indexOf("c -> a GossipStatus"))).toEqual([
      "c -> a GossipStatus",
      "a -> c Gossip",
      "c: warn removed from the cluster; stopping",
      "c: self-removed (the cluster removed this member)",
    ]);
  });

  it("is told at most once per gossip interval", () => {
    const w = new MembershipWorld({ seeds: ["a"], downing: { stableAfterMs: 5000 } });
    w.formCluster(["a", "b", "c"]);
    const c = w.machine("c").state.selfUniqueAddress;
    w.pause("c");
    w.run(30_000);
    const status: MembershipInput = {
      type: "received",
      from: c,
      message: { kind: MembershipKind.GossipStatus, version: [], seenDigest: 0 },
    };
    expect(w.feed("a", status)).toEqual(["a -> c Gossip"]);
    expect(w.feed("a", status)).toEqual([]);
    w.run(TICK_MS);
    expect(w.feed("a", status)).toEqual(["a -> c Gossip"]);
    // a full gossip from it is answered the same way
    w.run(TICK_MS);
    const gossip: MembershipInput = {
      type: "received",
      from: c,
      message: {
        kind: MembershipKind.Gossip,
        to: uniqueAddressToString(w.machine("a").state.selfUniqueAddress),
        gossip: w.machine("c").state.latestGossip,
      },
    };
    expect(w.feed("a", gossip)).toEqual(["a -> c Gossip"]);
  });
});

describe("membership machine: a removed member that talks again, many of them", () => {
  it("the once-per-interval table is forgotten when a 1001st removed member is told", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b"]);
    const a = w.machine("a");
    const b = w.machine("b").state.selfUniqueAddress;
    // b's gossip names 1001 removed incarnations (tombstones) besides the members
    const removed = Array.from({ length: 1001 }, (_, i) =>
      uniqueAddressOf(addressOf("shardkit", "sk", `gone${i}`, 2552), 100 + i),
    );
    const g = a.state.latestGossip;
    const gossip = gossipOf({
      members: g.members,
      seen: [b],
      reachability: g.overview.reachability,
      version: incrementVersion(g, clockKeyOf(b)).version,
      tombstones: [...g.tombstones, ...removed.map((node) => ({ node, removedAtMs: w.now }))],
    });
    const to = uniqueAddressToString(a.state.selfUniqueAddress);
    a.handle(
      { type: "received", from: b, message: { kind: MembershipKind.Gossip, to, gossip } },
      w.now,
    );
    expect(a.state.latestGossip.tombstones).toHaveLength(1001);
    const toldOn = (i: number) =>
      a
        .handle(
          {
            type: "received",
            from: removed[i] as UniqueAddress,
            message: { kind: MembershipKind.GossipStatus, version: [], seenDigest: 0 },
          },
          w.now,
        )
        .flatMap((o) => (o.type === "send" ? [o.to.host] : []));
    for (let i = 0; i < 1000; i++) expect(toldOn(i)).toEqual([`gone${i}`]);
    // within the interval: gone0 is still in the table
    expect(toldOn(0)).toEqual([]);
    // the table holds 1000 entries: the 1001st clears it before it is recorded
    expect(toldOn(1000)).toEqual(["gone1000"]);
    expect(toldOn(0)).toEqual(["gone0"]);
    expect(toldOn(1000)).toEqual([]);
  });
});

describe("membership machine: a member that was never up, cut off from every up member", () => {
  /**
   * a forms a cluster; c and e are welcomed, neither up yet, then cut off from a, the only
   * up member, for 30 s. c stands for a joiner that went on to another cluster (S20wL seed
   * 116): it answers heartbeats but never decides for this view.
   */
  const cutOffJoiners = (actBeforeFirstConvergence: boolean): MembershipWorld => {
    const w = new MembershipWorld({
      seeds: ["a"],
      downing: { stableAfterMs: 5000, activeStrategy: "keep-majority", actBeforeFirstConvergence },
      downingByNode: { c: { stableAfterMs: 3_600_000 } },
    });
    w.formCluster(["a"]);
    w.add("c").add("e");
    w.feed("c", { type: "start" });
    w.deliver();
    w.feed("e", { type: "start" });
    w.deliver();
    expect(w.statusOf("e", "c")).toBe("joining");
    expect(w.statusOf("e", "e")).toBe("joining");
    w.partition(["a"], ["c", "e"]);
    w.run(30_000);
    return w;
  };

  it("decides for itself and downs only itself when the joiner it still reaches does not act", () => {
    const w = cutOffJoiners(false);
    // c sorts first, so it is the fallback leader of e's view; e decides anyway, and the
    // formation gate lets it down itself only (not a, not c)
    const downs = w.trace.filter((l) => / DOWN /.test(l) && !l.startsWith("a: "));
    expect(downs).toHaveLength(1);
    expect(downs[0]).toMatch(/^e: DOWN e \(keep-majority: /);
    expect(w.isStopped("e")).toBe(true);
    expect(w.isStopped("c")).toBe(false);
  });

  it("with actBeforeFirstConvergence the rule is off: a never-up member may down others, so it waits for a leader", () => {
    const w = cutOffJoiners(true);
    expect(w.trace.filter((l) => l.startsWith("e: ") && / DOWN /.test(l))).toEqual([]);
    expect(w.isStopped("e")).toBe(false);
  });

  it("a member that has been up, now exiting, waits for its side's leader (here a joiner)", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      downing: { stableAfterMs: 5000, activeStrategy: "keep-majority", downAllWhenUnstable: "off" },
      // "0" stands for a joiner that does not act (it sorts first: the fallback leader)
      downingByNode: { "0": { stableAfterMs: 3_600_000 } },
    });
    w.formCluster(["a", "b", "c"]);
    // c holds its removal (its shutdown's exiting tasks), leaves and becomes exiting
    w.feed("c", { type: "hold-removal-until-exiting-completed" });
    w.feed("c", { type: "leave", host: "c", port: 2552 });
    w.runUntil(() => w.statusOf("c", "c") === "exiting", 20_000);
    // a joiner arrives through a while c is still exiting; then c and it are cut off
    w.add("0");
    w.feed("0", { type: "start" });
    w.runUntil(() => w.statusOf("c", "0") === "joining", 20_000);
    w.partition(["a", "b"], ["c", "0"]);
    const start = w.trace.length;
    w.run(30_000);
    const lines = w.trace.slice(start);
    expect(w.statusOf("c", "c")).toBe("exiting");
    // every up member is unreachable from c, but c has been up: the never-up rule is not
    // its; its fallback leader is the joiner "0", so c downs no one
    expect(lines.filter((l) => l.startsWith("c: ") && / DOWN /.test(l))).toEqual([]);
  });

  it("does not decide while it still reaches a leaving member (that one leads its side)", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      downing: { stableAfterMs: 5000, activeStrategy: "keep-majority" },
      // b decides later than e could: e must still wait for it
      downingByNode: { b: { stableAfterMs: 8000 } },
    });
    w.formCluster(["a", "b"]);
    w.add("e");
    w.feed("e", { type: "start" });
    w.deliver();
    // e is still joining when it learns that b leaves (the leader waits for convergence
    // before moving either on)
    w.partition(["a"], ["e"]);
    w.feed("b", { type: "leave", host: "b", port: 2552 });
    w.runUntil(() => w.statusOf("e", "b") === "leaving", 10_000);
    expect(w.statusOf("e", "b")).toBe("leaving");
    expect(w.statusOf("e", "e")).toBe("joining");
    // cut off from a, the only up member; b, leaving, can not exit without convergence
    w.partition(["a"], ["b"]);
    const start = w.trace.length;
    w.run(30_000);
    const lines = w.trace.slice(start);
    // b, leaving and the first member e reaches, leads e's side and decides (its side is
    // the minority); e makes no decision of its own while b is there. Once b has gone, e
    // reaches no up or leaving member and downs itself (b's verdict never reached it).
    const bDecides = lines.findIndex((l) => l.startsWith("b: DOWN "));
    expect(lines[bDecides]).toBe(
      "b: DOWN b,e (keep-majority: minority: 1 reachable vs 1 unreachable members)",
    );
    const eDecisions = lines.flatMap((l, i) =>
      l.startsWith("e: ") && /DOWN|not downing/.test(l) ? [i] : [],
    );
    expect(eDecisions.length).toBeGreaterThan(0);
    expect(eDecisions.every((i) => i > bDecides)).toBe(true);
    expect(w.isStopped("e")).toBe(true);
  });

  it("does not decide while it still reaches an up member", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      downing: { stableAfterMs: 5000, activeStrategy: "keep-majority" },
    });
    w.formCluster(["a", "b", "c", "d"]);
    w.add("e");
    w.feed("e", { type: "start" });
    w.deliver();
    // e reaches a, b, c: the leader a decides about d, and e (never up) does not
    w.partition(["d"], ["a", "b", "c", "e"]);
    const start = w.trace.length;
    w.run(30_000);
    const lines = w.trace.slice(start);
    expect(lines.filter((l) => l.startsWith("e: ") && /DOWN|not downing/.test(l))).toEqual([]);
    expect(lines.filter((l) => / DOWN /.test(l) && !l.startsWith("d: "))).toEqual([
      expect.stringMatching(/^a: DOWN d \(keep-majority: /),
    ]);
  });
});

describe("membership machine: a joiner whose welcome nobody else heard of", () => {
  /**
   * a and c form a cluster; e asks c directly, c welcomes it and "crashes" (cut off from
   * a and e) before it gossips e to anyone. Returns the world at the cut.
   */
  const welcomedByCrashedC = (settings: Partial<ClusterSettings> = {}): MembershipWorld => {
    const w = new MembershipWorld({
      seeds: ["a"],
      settings,
      downing: { stableAfterMs: 5000, activeStrategy: "keep-majority" },
    });
    w.formCluster(["a", "c"]);
    w.add("e");
    w.feed("e", { type: "join", to: w.uniqueAddressOf("c").address });
    w.deliver();
    expect(w.statusOf("e", "e")).toBe("joining");
    expect(w.statusOf("a", "e")).toBe("-");
    w.partition(["c"], ["a", "e"]);
    return w;
  };

  it("joins again through its view's leader once that leader has not seen it for retryUnsuccessfulJoinAfterMs", () => {
    const w = welcomedByCrashedC();
    const start = w.trace.length;
    const start0 = w.now;
    w.run(40_000);
    const lines = w.trace.slice(start);
    // a ignores e's gossip (e is no member of its view) until e joins again through it,
    // retryUnsuccessfulJoinAfterMs (10 s) after its first leader round without a's seen mark
    const line = "e: info the leader has not seen this joining member: joining again";
    expect(lines.filter((l) => l.startsWith("e: info the leader has not seen"))).toEqual([line]);
    const after = (w.when(line) as number) - start0;
    // the first leader round (one tick after the cut) starts the count; the Join goes out
    // on the round 10 s later, not one round after that
    expect(after).toBe(TICK_MS + 10_000);
    expect(logsOf(w, "e", "the leader has not seen this joining member: joining again")).toEqual([
      { level: "info", fields: { leader: uniqueAddressToString(w.uniqueAddressOf("a")) } },
    ]);
    expect(w.statusOf("a", "e")).toBe("up");
    expect(w.statusOf("e", "e")).toBe("up");
  });

  it("with retryUnsuccessfulJoinAfterMs 0 (never) it does not join again", () => {
    const w = welcomedByCrashedC({ retryUnsuccessfulJoinAfterMs: 0 });
    w.run(40_000);
    expect(w.trace.filter((l) => l.includes("joining again"))).toEqual([]);
    expect(w.statusOf("a", "e")).toBe("-");
  });

  it("a weakly-up member joins again too", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      settings: { allowWeaklyUpMembersMs: 1000 },
      downing: { stableAfterMs: 3_600_000, activeStrategy: "keep-majority" },
    });
    w.formCluster(["a", "b", "c"]);
    // a can not converge (b and c are cut off from it): e joins through a, which moves it
    // to weakly-up; only a knows e
    w.partition(["a"], ["b", "c"]);
    w.add("e");
    w.feed("e", { type: "start" });
    w.runUntil(() => w.statusOf("e", "e") === "weakly-up", 20_000);
    expect(w.statusOf("b", "e")).toBe("-");
    // then a goes away for e too: e's leader is b, which ignores e's gossip
    w.partition(["a"], ["e"]);
    w.run(30_000);
    expect(w.trace.filter((l) => l.startsWith("e: info the leader has not seen"))).toHaveLength(1);
    expect(w.statusOf("b", "e")).not.toBe("-");
  });

  it("only a joiner joins again: up members whose leader has not seen their gossip do not", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      // a long acceptable pause: the paused leader a stays reachable
      failureDetector: { acceptableHeartbeatPauseMs: 60_000 },
    });
    w.formCluster(["a", "b", "c"]);
    w.pause("a");
    // b and c change their view while a can not see it: e joins through b
    w.add("e");
    w.feed("e", { type: "join", to: w.uniqueAddressOf("b").address });
    w.run(25_000);
    const again = w.trace
      .filter((l) => l.includes("joining again"))
      .map((l) => l.slice(0, l.indexOf(":")));
    expect([...new Set(again)]).toEqual(["e"]);
  });

  it("does not join again while its leader sees its gossip, however long it stays joining", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      // no weakly-up, and a resolver that does not decide within the test
      settings: { allowWeaklyUpMembersMs: 0 },
      downing: { stableAfterMs: 3_600_000, activeStrategy: "keep-majority" },
    });
    w.formCluster(["a", "b", "c"]);
    // b is cut off from a: no convergence, so the leader a moves nobody up
    w.partition(["a"], ["b"]);
    w.run(5000);
    w.add("e");
    w.feed("e", { type: "start" });
    w.run(40_000);
    expect(w.statusOf("e", "e")).toBe("joining");
    expect(w.statusOf("a", "e")).toBe("joining");
    expect(w.trace.filter((l) => l.includes("joining again"))).toEqual([]);
    w.heal();
    w.run(20_000);
    expect(w.statusOf("e", "e")).toBe("up");
  });
});

describe("membership machine: leave before joining", () => {
  it("without seed nodes there is no seed timer to cancel", () => {
    const w = new MembershipWorld({ seeds: [] });
    w.add("e");
    w.feed("e", { type: "start" });
    const before = w.outputs.length;
    w.feed("e", { type: "leave", host: "e", port: 2552 });
    expect(w.outputs.slice(before).map((o) => o.output.type)).toEqual(["log"]);
  });

  it("a node that leaves while it still tries to join stops trying and joins nothing", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a"]);
    w.add("e");
    w.partition(["a"], ["e"]);
    w.feed("e", { type: "start" });
    w.run(6000);
    expect(w.isMember("e")).toBe(false);
    // leave for another node, or for another port of this host, is no leave of e
    expect(w.feed("e", { type: "leave", host: "a", port: 2552 })).toEqual([]);
    expect(w.feed("e", { type: "leave", host: "e", port: 2553 })).toEqual([]);
    // its shutdown's cluster-leave phase asks it to leave: it is no member yet
    const before = w.outputs.length;
    expect(w.feed("e", { type: "leave", host: "e", port: 2552 })).toEqual([
      "e: info leaving before joining a cluster: no longer trying to join",
    ]);
    expect(w.outputs.slice(before).map((o) => o.output.type)).toEqual([
      "log",
      "cancel-seed-timers",
    ]);
    // a second leave changes nothing
    expect(w.feed("e", { type: "leave", host: "e", port: 2552 })).toEqual([]);
    w.heal();
    w.run(30_000);
    expect(w.isMember("e")).toBe(false);
    expect(w.view("a")).toBe("a=up");
    // a Welcome already on its way is not accepted either (a answers a Join e sent before)
    w.feed("a", {
      type: "received",
      from: w.uniqueAddressOf("e"),
      message: { kind: MembershipKind.Join, roles: [], appVersion: "1.0.0" },
    });
    w.deliver();
    expect(w.isMember("e")).toBe(false);
    // and a join asked by hand does nothing
    expect(w.feed("e", { type: "join", to: addressOf("shardkit", "sk", "a", 2552) })).toEqual([]);
  });
});

describe("membership machine: auto-down", () => {
  it("with auto-down active each side downs the other, whatever the sizes", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      downing: { activeStrategy: "auto-down", autoDown: { afterMs: 3000 } },
    });
    w.formCluster(["a", "b", "c"]);
    w.partition(["a", "b"], ["c"]);
    w.run(20_000);
    expect(downingKinds(w)).toEqual(["a auto-down", "c auto-down"]);
    // each leader downs what it has seen unreachable for afterMs, on its first round after
    const seen = w.when("a: unreachable-member c") as number;
    expect(decisions(w)).toEqual([
      `${seen + 3000} a: DOWN c (auto-down: unreachable for at least 3000 ms)`,
      `${seen + 3000} c: DOWN a,b (auto-down: unreachable for at least 3000 ms)`,
    ]);
  });

  it("a flaky link at the leader: the leader (which keeps itself) and the first member the others still reach both act", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      downing: { activeStrategy: "auto-down", autoDown: { afterMs: 3000 } },
    });
    w.formCluster(["a", "b", "c", "d", "e"]);
    // only the link a - e breaks: a still counts itself the leader (the membership rules keep
    // self even when others see it unreachable); b, c, d see a and e unreachable, so b is
    // the first up member they reach: auto-down runs on the leader of each view (e, seen
    // unreachable by a, is neither)
    w.partition(["a"], ["e"]);
    const start = w.trace.length;
    w.run(20_000);
    const deciders = new Set(
      w.trace
        .slice(start)
        .filter((l) => / DOWN /.test(l))
        .map((l) => l.slice(0, l.indexOf(":"))),
    );
    expect([...deciders].sort()).toEqual(["a", "b"]);
  });
});

describe("membership machine: quarantined by a member", () => {
  const by = (w: MembershipWorld, name: string): MembershipInput => ({
    type: "quarantined-by",
    node: w.uniqueAddressOf(name),
  });

  it("a member quarantined by a live member of its own view downs itself and stops", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    // c removed a on its side of a split (an island), a still counts c as up
    w.partition(["a", "b"], ["c"]);
    expect(w.feed("a", by(w, "c"))).toEqual([
      "a: warn quarantined by a member of this node's view: this member downs itself",
      "a: member-downed a",
      "a: leader-changed b",
      "a: warn removed from the cluster; stopping",
      "a: self-removed (this member was downed)",
    ]);
    expect(
      logsOf(w, "a", "quarantined by a member of this node's view: this member downs itself"),
    ).toEqual([
      {
        level: "warn",
        fields: {
          by: uniqueAddressToString(w.uniqueAddressOf("c")),
          reason:
            "that member removed this incarnation, so its cluster and this node's can never merge; restart this process to join again",
        },
      },
    ]);
    expect(w.statusOf("a", "a")).toBe("down");
    expect(w.isStopped("a")).toBe(true);
  });

  it("a refusal by a member already downed or unknown to this view, or by itself, changes nothing", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b", "c"]);
    // this side decided against c first: c's refusal is the expected answer
    w.feed("a", { type: "down", host: "c", port: 2552 });
    expect(w.feed("a", by(w, "c"))).toEqual([]);
    // another incarnation of b (another uid) is not the member b of this view
    const b = w.uniqueAddressOf("b");
    const otherB = uniqueAddressOf(b.address, b.uid + 1);
    expect(w.feed("a", { type: "quarantined-by", node: otherB })).toEqual([]);
    expect(w.feed("a", by(w, "a"))).toEqual([]);
    expect(w.statusOf("a", "a")).toBe("up");
    expect(w.isStopped("a")).toBe(false);
  });

  it("a member that is down or exiting already, or no member yet, is not downed again", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b"]);
    w.feed("b", { type: "leave", host: "b", port: 2552 });
    w.runUntil(() => w.statusOf("b", "b") === "exiting", 10_000);
    expect(w.statusOf("b", "b")).toBe("exiting");
    expect(w.feed("b", by(w, "a"))).toEqual([]);
    // a node that does not try to join (not started: no seed conversation, no join) is
    // not part of any cluster: nothing to stop
    w.add("d");
    expect(w.feed("d", by(w, "a"))).toEqual([]);
    expect(w.isStopped("d")).toBe(false);
  });
});

describe("membership machine: an incarnation removed before it learned it had joined", () => {
  const join: MembershipMessage = { kind: MembershipKind.Join, roles: [], appVersion: "1.0.0" };
  const joinFrom = (w: MembershipWorld, name: string): MembershipInput => ({
    type: "received",
    from: w.uniqueAddressOf(name),
    message: join,
  });

  /** a and b up; d asks to join, a admits it, and the Welcome is lost in a cut. */
  function admittedButCutOff(): MembershipWorld {
    const w = new MembershipWorld({ seeds: ["a"], downing: { stableAfterMs: 5000 } });
    w.formCluster(["a", "b"]);
    w.add("d");
    w.partition(["a", "b"], ["d"]);
    expect(w.feed("d", { type: "start" })).toEqual(["d -> a InitJoin"]);
    expect(w.feed("a", joinFrom(w, "d"))).toEqual([
      "a: info node joining",
      "a: member-joined d",
      "a -> d Welcome",
    ]);
    return w;
  }

  // Simulator S20wL seed 9154: the joiner was admitted, its Welcome never arrived, the
  // resolver downed and removed it; it asked to join for ever and was refused in silence.
  it("a joiner the cluster removed learns it from the refusal of its Join and stops", () => {
    const w = admittedButCutOff();
    w.runUntil(() => w.statusOf("a", "d") === "-" && w.statusOf("b", "d") === "-", 60_000);
    expect(w.isMember("d")).toBe(false);
    w.heal();
    const start = w.trace.length;
    w.runUntil(() => w.isStopped("d"), 30_000);
    expect(noGossip(w.trace.slice(start))).toEqual([
      "d -> a InitJoin",
      "a -> d InitJoinAck",
      "d -> a Join",
      "a: info join refused",
      "a -> d JoinRefused",
      "d: info join request refused",
      "d: warn removed from the cluster; stopping",
      `d: self-removed (join refused by ${uniqueAddressToString(w.uniqueAddressOf("a"))} (tombstoned): that cluster admitted this incarnation, then downed or removed it before this node learned it had joined; it can never join again; restart the process to join as a new incarnation)`,
    ]);
    expect(logsOf(w, "d", "join request refused")).toEqual([
      {
        level: "info",
        fields: { by: uniqueAddressToString(w.uniqueAddressOf("a")), reason: "tombstoned" },
      },
    ]);
  });

  it("a joiner refused as downed (not removed yet) stops too", () => {
    const w = admittedButCutOff();
    w.runUntil(() => w.statusOf("a", "d") === "down", 60_000);
    w.heal();
    expect(w.feed("a", joinFrom(w, "d"))).toEqual(["a: info join refused", "a -> d JoinRefused"]);
    expect(w.deliver()).toEqual([
      "d: info join request refused",
      "d: warn removed from the cluster; stopping",
      `d: self-removed (join refused by ${uniqueAddressToString(w.uniqueAddressOf("a"))} (downed): that cluster admitted this incarnation, then downed or removed it before this node learned it had joined; it can never join again; restart the process to join as a new incarnation)`,
    ]);
  });

  it("a transient refusal is kept for the join diagnostics; the joiner goes on trying", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.add("a").add("d");
    w.feed("d", { type: "start" });
    // a has not joined a cluster itself (not started): it refuses, and says why
    expect(w.feed("a", joinFrom(w, "d"))).toEqual(["a: info join refused", "a -> d JoinRefused"]);
    expect(w.deliver()).toEqual(["a -> d InitJoinNack", "d: info join request refused"]);
    expect(w.machine("d").joinRefusals).toEqual(new Map([["a:2552", "not-initialized"]]));
    expect(w.isStopped("d")).toBe(false);
    // the same reason again is not logged again
    w.feed("a", joinFrom(w, "d"));
    expect(w.deliver()).toEqual([]);
    // a node d never asked is not kept (the table holds the seeds and the join target)
    w.add("x");
    expect(w.feed("x", joinFrom(w, "d"))).toEqual(["x: info join refused", "x -> d JoinRefused"]);
    expect(w.deliver()).toEqual([]);
    expect(w.machine("d").joinRefusals).toEqual(new Map([["a:2552", "not-initialized"]]));
    // a forms the cluster: d's next attempt is welcomed
    w.feed("a", { type: "start" });
    w.runUntil(() => w.statusOf("a", "d") === "up", 30_000);
    expect(w.isStopped("d")).toBe(false);
  });

  it("a member ignores a refusal (it joined already)", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b"]);
    const refused: MembershipMessage = { kind: MembershipKind.JoinRefused, reason: "tombstoned" };
    expect(
      w.feed("b", { type: "received", from: w.uniqueAddressOf("a"), message: refused }),
    ).toEqual([]);
    expect(w.isStopped("b")).toBe(false);
  });

  it("a joiner whose handshake a seed refuses as quarantined stops", () => {
    const w = new MembershipWorld({ seeds: ["a"] });
    w.formCluster(["a", "b"]);
    w.add("d");
    w.partition(["a", "b"], ["d"]);
    w.feed("d", { type: "start" });
    expect(w.feed("d", { type: "quarantined-by", node: w.uniqueAddressOf("a") })).toEqual([
      "d: warn removed from the cluster; stopping",
      `d: self-removed (quarantined by ${uniqueAddressToString(w.uniqueAddressOf("a"))} before this node learned it had joined: that cluster removed this incarnation, which can never join again; restart the process to join as a new incarnation)`,
    ]);
    expect(w.isStopped("d")).toBe(true);
  });
});
