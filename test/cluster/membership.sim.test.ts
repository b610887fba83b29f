/**
 * Membership scenarios in the simulator (scenarios M1, M2, M4, M5, M6, M7 in docs/scenarios.md), each over
 * several seeds. A failure names its seed.
 */
import { describe, expect, it } from "vitest";
import { simSeeds } from "../support/sim-seeds.js";
import { SimClusterHarness } from "./sim-cluster.js";

const SEEDS = simSeeds([1, 2, 3]);
const seeds = ["a:2552", "b:2552", "c:2552"];

function upEverywhere(h: SimClusterHarness, names: string[]): boolean {
  return names.every((n) => {
    const st = h.members.get(n)?.cluster.state;
    return (
      st !== undefined &&
      st.members.length === names.length &&
      st.members.every((m) => m.status === "up") &&
      st.convergence
    );
  });
}

describe.each(SEEDS)("membership (seed %i)", (seed) => {
  it("M1/M2: seed nodes started at once form one cluster; all Up, same members and leader", async () => {
    const h = new SimClusterHarness(seed);
    for (const n of ["a", "b", "c"]) await h.member(n, { seedNodes: seeds });
    await h.until(() => upEverywhere(h, ["a", "b", "c"]), 30_000);
    const leaders = ["a", "b", "c"].map(
      (n) => h.members.get(n)?.cluster.state.leader?.address.host,
    );
    expect(new Set(leaders).size).toBe(1);
    expect(leaders[0]).toBe("a");
  });

  it("M1: a node that joins later is Joining, then Up once everyone has seen it", async () => {
    const h = new SimClusterHarness(seed);
    for (const n of ["a", "b"]) await h.member(n, { seedNodes: ["a:2552", "b:2552"] });
    await h.until(() => upEverywhere(h, ["a", "b"]), 30_000);
    const seen: string[] = [];
    h.members.get("a")?.cluster.subscribe((e) => {
      if ("member" in e && e.member.uniqueAddress.address.host === "d") seen.push(e.type);
    });
    await h.member("d", { seedNodes: ["a:2552", "b:2552"] });
    await h.until(() => upEverywhere(h, ["a", "b", "d"]), 30_000);
    expect(seen).toEqual(["member-joined", "member-up"]);
  });

  it("M4: a leaving member goes Leaving -> Exiting -> Removed; the others see each step (leader leaving too)", async () => {
    const h = new SimClusterHarness(seed);
    for (const n of ["a", "b", "c"]) await h.member(n, { seedNodes: seeds });
    await h.until(() => upEverywhere(h, ["a", "b", "c"]), 30_000);
    const seenOnC: string[] = [];
    h.members.get("c")?.cluster.subscribe((e) => {
      if ("member" in e && e.member.uniqueAddress.address.host === "a") seenOnC.push(e.type);
    });
    h.members.get("a")?.cluster.leave("a:2552"); // a is the leader
    await h.until(() => h.members.get("a")?.removedReason !== undefined, 30_000);
    await h.until(() => upEverywhere(h, ["b", "c"]), 30_000);
    expect(seenOnC).toEqual(["member-left", "member-exited", "member-removed"]);
    expect(h.members.get("b")?.cluster.state.leader?.address.host).toBe("b");
  });

  it("M5: a crashed node is unreachable, downed by the SBR after stableAfterMs, then removed", async () => {
    const h = new SimClusterHarness(seed);
    for (const n of ["a", "b", "c"]) await h.member(n, { seedNodes: seeds });
    await h.until(() => upEverywhere(h, ["a", "b", "c"]), 30_000);
    const c = h.members.get("c");
    if (c === undefined) throw new Error("no c");
    const events: string[] = [];
    h.members.get("a")?.cluster.subscribe((e) => {
      if ("member" in e && e.member.uniqueAddress.address.host === "c") events.push(e.type);
    });
    const crashedAt = h.world.now;
    h.crash(c);
    h.members.delete("c");
    await h.until(() => upEverywhere(h, ["a", "b"]), 60_000);
    expect(events).toEqual(["unreachable-member", "member-downed", "member-removed"]);
    expect(h.world.now - crashedAt).toBeGreaterThan(2_000);
  });
});

describe.each(SEEDS)("membership faults (seed %i)", (seed) => {
  it("M7: partition 3|2 with keep-majority: the minority downs itself, the majority keeps running", async () => {
    const h = new SimClusterHarness(seed);
    const names = ["a", "b", "c", "d", "e"];
    for (const n of names) await h.member(n, { seedNodes: ["a:2552", "b:2552", "c:2552"] });
    await h.until(() => upEverywhere(h, names), 60_000);
    h.network.partition(["a", "b", "c"], ["d", "e"]);
    await h.until(
      () =>
        h.members.get("d")?.removedReason !== undefined &&
        h.members.get("e")?.removedReason !== undefined &&
        upEverywhere(h, ["a", "b", "c"]),
      60_000,
    );
    for (const n of ["a", "b", "c"]) expect(h.members.get(n)?.removedReason).toBeUndefined();
    // each side's leader decided once (the metrics' shardkit_cluster_downing_decisions_total)
    const decisions = (n: string) => h.members.get(n)?.cluster.downingDecisions;
    expect(decisions("a")?.of("down-unreachable")).toBe(1);
    expect(decisions("a")?.of("down-reachable")).toBe(0);
    expect(decisions("d")?.of("down-reachable")).toBe(1);
    expect(decisions("b")?.of("down-unreachable")).toBe(0);
  });

  it("M7: an equal split 2|2 keeps the side with the lowest address", async () => {
    const h = new SimClusterHarness(seed);
    const names = ["a", "b", "c", "d"];
    for (const n of names) await h.member(n, { seedNodes: ["a:2552", "b:2552"] });
    await h.until(() => upEverywhere(h, names), 60_000);
    h.network.partition(["a", "c"], ["b", "d"]);
    await h.until(
      () =>
        h.members.get("b")?.removedReason !== undefined &&
        h.members.get("d")?.removedReason !== undefined,
      60_000,
    );
    await h.until(() => upEverywhere(h, ["a", "c"]), 60_000);
    expect(h.members.get("a")?.removedReason).toBeUndefined();
  });

  it("M6: a restarted node (same host:port, new uid) joins as a new member; the old one is removed", async () => {
    const h = new SimClusterHarness(seed);
    for (const n of ["a", "b", "c"]) await h.member(n, { seedNodes: seeds });
    await h.until(() => upEverywhere(h, ["a", "b", "c"]), 30_000);
    const old = h.members.get("c");
    if (old === undefined) throw new Error("no c");
    const oldUid = old.cluster.self.uid;
    h.crash(old);
    const fresh = await h.member("c", { seedNodes: seeds });
    await h.until(() => upEverywhere(h, ["a", "b", "c"]), 60_000);
    const cs =
      h.members
        .get("a")
        ?.cluster.state.members.filter((m) => m.uniqueAddress.address.host === "c") ?? [];
    expect(cs).toHaveLength(1);
    expect(cs[0]?.uniqueAddress.uid).toBe(fresh.cluster.self.uid);
    expect(cs[0]?.uniqueAddress.uid).not.toBe(oldUid);
  });

  it("M6b: the first seed node restarted while the others' links to it back off joins them; it does not form a cluster of its own", async () => {
    // The others keep sending to the crashed incarnation (heartbeats, gossip), so their
    // reconnects to it back off (up to reconnectBackoffMaxMs, 5 s). With a short seed-node
    // timeout the restarted first seed node gave up on its InitJoins before their acks left
    // (they waited for the backoff timer) and formed a new cluster of its own: the real
    // rolling restart saw that (docs/cluster.md, "Joining"). A peer that reaches us now cuts
    // our backoff to it short.
    const h = new SimClusterHarness(seed);
    const settings = { seedNodeTimeoutMs: 1_000 };
    for (const n of ["a", "b", "c"]) await h.member(n, { seedNodes: seeds, settings });
    await h.until(() => upEverywhere(h, ["a", "b", "c"]), 30_000);
    const old = h.members.get("a");
    if (old === undefined) throw new Error("no a");
    h.crash(old);
    // long enough for the backoff towards a to grow well past the seed-node timeout
    await h.world.advance(4_500);
    const fresh = await h.member("a", { seedNodes: seeds, settings });
    await h.until(() => upEverywhere(h, ["a", "b", "c"]), 90_000);
    const d = `[sim ${h.world.describe()}]`;
    expect(
      fresh.cluster.state.members.map((m) => m.uniqueAddress.address.host),
      d,
    ).toEqual(["a", "b", "c"]);
    expect(
      h.members.get("b")?.cluster.state.members.find((m) => m.uniqueAddress.address.host === "a")
        ?.uniqueAddress.uid,
      d,
    ).toBe(fresh.cluster.self.uid);
  });

  it("M9: nobody becomes Up before minNrOfMembers have joined", async () => {
    const h = new SimClusterHarness(seed);
    const settings = { minNrOfMembers: 3, allowWeaklyUpMembersMs: 0 };
    const { FAST } = await import("./sim-cluster.js");
    for (const n of ["a", "b"])
      await h.member(n, { seedNodes: ["a:2552", "b:2552"], settings: { ...FAST, ...settings } });
    await h.world.advance(10_000);
    for (const n of ["a", "b"])
      expect(h.members.get(n)?.cluster.state.members.every((m) => m.status === "joining")).toBe(
        true,
      );
    await h.member("c", { seedNodes: ["a:2552", "b:2552"], settings: { ...FAST, ...settings } });
    await h.until(() => upEverywhere(h, ["a", "b", "c"]), 30_000);
  });

  it("M3: no member moves to Up while a member is unreachable; with weakly-up the joiner is WeaklyUp, then Up on heal", async () => {
    const h = new SimClusterHarness(seed);
    const { FAST } = await import("./sim-cluster.js");
    const settings = { ...FAST, allowWeaklyUpMembersMs: 1_000 };
    for (const n of ["a", "b", "c"])
      await h.member(n, { seedNodes: seeds, settings, downing: { stableAfterMs: 600_000 } });
    await h.until(() => upEverywhere(h, ["a", "b", "c"]), 30_000);
    h.network.partition(["c"], ["a", "b"]);
    await h.until(() => (h.members.get("a")?.cluster.state.unreachable.length ?? 0) === 1, 30_000);
    const statuses: string[] = [];
    h.members.get("a")?.cluster.subscribe((e) => {
      if ("member" in e && e.member.uniqueAddress.address.host === "d") statuses.push(e.type);
    });
    await h.member("d", { seedNodes: seeds, settings, downing: { stableAfterMs: 600_000 } });
    await h.world.advance(10_000);
    expect(statuses).toContain("member-weakly-up");
    expect(statuses).not.toContain("member-up");
    h.network.heal();
    await h.until(() => upEverywhere(h, ["a", "b", "c", "d"]), 60_000);
    expect(statuses.at(-1)).toBe("member-up");
  });
});

describe.each(SEEDS)("split brain resolver strategies (seed %i)", (seed) => {
  const names = ["a", "b", "c", "d", "e"];
  async function splitCluster(
    downing: Record<string, unknown>,
    sideA: string[],
    sideB: string[],
    extra: {
      lease?: (name: string, h: SimClusterHarness) => import("../../src/ports/lease.js").Lease;
    } = {},
  ) {
    const h = new SimClusterHarness(seed);
    for (const n of names)
      await h.member(n, {
        seedNodes: ["a:2552", "b:2552", "c:2552"],
        downing: { stableAfterMs: 2_000, ...downing } as never,
        ...(extra.lease ? { lease: extra.lease(n, h) } : {}),
      });
    await h.until(() => upEverywhere(h, names), 60_000);
    h.network.partition(sideA, sideB);
    await h.world.advance(30_000);
    const survivors = names.filter((n) => h.members.get(n)?.removedReason === undefined);
    return { h, survivors };
  }

  it("static-quorum (quorumSize 3): the side with the quorum survives", async () => {
    const { survivors } = await splitCluster(
      { activeStrategy: "static-quorum", staticQuorum: { quorumSize: 3 } },
      ["a", "b", "c"],
      ["d", "e"],
    );
    expect(survivors).toEqual(["a", "b", "c"]);
  });

  it("keep-oldest: the side with the oldest member survives, even as the minority", async () => {
    const { survivors } = await splitCluster(
      { activeStrategy: "keep-oldest" },
      ["a", "b"],
      ["c", "d", "e"],
    );
    expect(survivors).toEqual(["a", "b"]);
  });

  it("keep-oldest with downIfAlone: an oldest member alone is downed, the rest survive", async () => {
    const { survivors } = await splitCluster(
      { activeStrategy: "keep-oldest", keepOldest: { downIfAlone: true } },
      ["a"],
      ["b", "c", "d", "e"],
    );
    expect(survivors).toEqual(["b", "c", "d", "e"]);
  });

  it("down-all: every member is downed", async () => {
    const { survivors } = await splitCluster(
      { activeStrategy: "down-all" },
      ["a", "b", "c"],
      ["d", "e"],
    );
    expect(survivors).toEqual([]);
  });

  it("lease-majority: the side that acquires the lease survives", async () => {
    const { MemoryLeaseStore, MemoryLease } = await import(
      "../../src/persistence/memory/memory-lease.js"
    );
    let store: InstanceType<typeof MemoryLeaseStore> | undefined;
    const { survivors } = await splitCluster(
      {
        activeStrategy: "lease-majority",
        leaseMajority: { leaseImplementation: "memory", acquireLeaseDelayForMinorityMs: 2_000 },
      },
      ["a", "b", "c"],
      ["d", "e"],
      {
        // the node's runtime exists only once the member starts: build the lease lazily
        lease: (n, h) => {
          store ??= new MemoryLeaseStore(h.world.createRuntime("lease-db").clock);
          const s = store;
          let real: InstanceType<typeof MemoryLease> | undefined;
          const get = () => {
            const rt = h.world.getRuntime(n);
            if (rt === undefined) throw new Error(`no runtime for ${n}`);
            real ??= new MemoryLease(s, "sbr", n, rt.clock, rt.scheduler, {
              ttlMs: 60_000,
              heartbeatIntervalMs: 5_000,
            });
            return real;
          };
          return {
            name: "sbr",
            owner: n,
            acquire: (onLost) => get().acquire(onLost),
            release: () => get().release(),
            checkLease: () => get().checkLease(),
          };
        },
      },
    );
    expect(survivors).toEqual(["a", "b", "c"]);
  });
});
