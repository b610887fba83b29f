/**
 * Membership scenario M8 in the simulator, over several seeds (a failure names its seed;
 * `npm run sim -- --scenario membership-flaky --seeds 200` explores more):
 * - a one-way partition d -> e (d's packets to e vanish, e's still reach d: d sees e, e
 *   does not see d) makes d and e indirectly connected (request/response heartbeats fail
 *   both ways): the Split Brain Resolver downs both, the other three converge;
 * - while d | e stays cut, a link that keeps flapping (a | c, partition / heal about
 *   every second) never lets the unreachable set settle: with down-all-when-unstable every
 *   node downs all, itself included; with it turned off the same flapping leaves the
 *   uninvolved b running (the control: without the feature the test before would fail).
 */
import { describe, expect, it } from "vitest";
import type { ClusterOptions } from "../../src/cluster/membership/cluster.js";
import { simSeeds } from "../support/sim-seeds.js";
import { SimClusterHarness as Harness, type SimClusterHarness } from "./sim-cluster.js";

const SEEDS = simSeeds([1, 2, 3]);
const NAMES = ["a", "b", "c", "d", "e"];
const SEED_NODES = ["a:2552", "b:2552", "c:2552"];
/**
 * The flapping link is cut for about CUT_MS and healed for about HEAL_MS, each varied by
 * up to FLAP_JITTER_MS (from the seed). A cut must outlast detection: QUICK_FD notices
 * 0.6-0.8 s of silence (more as it learns the cuts), the reaper looks every 200 ms.
 */
const CUT_MS = 1_200;
const HEAL_MS = 1_000;
const FLAP_JITTER_MS = 100;
/**
 * Quiet time before flapping: a detector learns from every interval it sees, so one that
 * was created at the join (two seeded samples) would take the first cut as normal.
 */
const WARM_UP_MS = 10_000;

function hosts(h: SimClusterHarness, name: string): string[] {
  return (h.members.get(name)?.cluster.state.members ?? []).map(
    (m) => m.uniqueAddress.address.host,
  );
}

/** Every node of `names` sees exactly `names`, all Up, with convergence. */
function upEverywhere(h: SimClusterHarness, names: readonly string[]): boolean {
  return names.every((n) => {
    const st = h.members.get(n)?.cluster.state;
    return (
      st !== undefined &&
      st.members.length === names.length &&
      st.members.every((m) => m.status === "up" && names.includes(m.uniqueAddress.address.host)) &&
      st.convergence
    );
  });
}

function removed(h: SimClusterHarness, names: readonly string[]): boolean {
  return names.every((n) => h.members.get(n)?.removedReason !== undefined);
}

/** A failure detector that notices a one-second cut (heartbeats every 200 ms). */
const QUICK_FD = {
  acceptableHeartbeatPauseMs: 100,
  firstHeartbeatEstimateMs: 200,
  minStdDeviationMs: 50,
};

async function fiveNodeCluster(
  seed: number,
  options: Pick<ClusterOptions, "downing" | "failureDetector">,
): Promise<SimClusterHarness> {
  const h = new Harness(seed);
  for (const n of NAMES) await h.member(n, { seedNodes: SEED_NODES, ...options });
  await h.until(() => upEverywhere(h, NAMES), 60_000);
  await h.world.advance(WARM_UP_MS);
  return h;
}

/**
 * Keeps d | e cut and flaps the link a | c (cut, heal) for `totalMs` or until `stop`: the
 * unreachable set alternates between {d, e} and {a, c, d, e} and is never empty. (A lone flapping link would not do: like Akka's SBR, the instability
 * episode ends whenever nothing is unreachable, i.e. at every heal.)
 */
async function flap(h: SimClusterHarness, totalMs: number, stop: () => boolean): Promise<void> {
  const end = h.world.now + totalMs;
  h.network.partition(["d"], ["e"]);
  let cut = false;
  while (h.world.now < end && !stop()) {
    cut = !cut;
    if (cut) h.network.partition(["a"], ["c"]);
    else h.network.heal(["a"], ["c"]);
    const jitter = (h.world.random.next() * 2 - 1) * FLAP_JITTER_MS;
    await h.world.runUntil(stop, (cut ? CUT_MS : HEAL_MS) + jitter);
  }
}

describe.each(SEEDS)("membership M8 (seed %i)", (seed) => {
  it("one-way partition d -> e: the indirectly connected d and e are downed, a, b, c converge", async () => {
    const h = await fiveNodeCluster(seed, { downing: { stableAfterMs: 2_000 } });
    const downedOnA: string[] = [];
    h.members.get("a")?.cluster.subscribe((e) => {
      if (e.type === "member-downed") downedOnA.push(e.member.uniqueAddress.address.host);
    });
    h.network.partition(["d"], ["e"], { oneWay: true });
    expect(h.network.isBlocked("d", "e")).toBe(true);
    expect(h.network.isBlocked("e", "d")).toBe(false);
    await h.until(() => removed(h, ["d", "e"]) && upEverywhere(h, ["a", "b", "c"]), 60_000);
    for (const n of ["a", "b", "c"]) {
      expect(h.members.get(n)?.removedReason, `${n} must keep running`).toBeUndefined();
      expect(hosts(h, n).sort()).toEqual(["a", "b", "c"]);
    }
    expect([...downedOnA].sort()).toEqual(["d", "e"]);
  });

  it("a flapping link never lets the view stabilise: down-all-when-unstable downs every node", async () => {
    const stableAfterMs = 3_000;
    const downAllWhenUnstable = 4_000;
    const h = await fiveNodeCluster(seed, {
      downing: { stableAfterMs, downAllWhenUnstable },
      failureDetector: QUICK_FD,
    });
    const startedAt = h.world.now;
    let firstRemovalAt: number | undefined;
    const allRemoved = () => {
      if (firstRemovalAt === undefined && NAMES.some((n) => removed(h, [n])))
        firstRemovalAt = h.world.now;
      return removed(h, NAMES);
    };
    await flap(h, 30_000, allRemoved);
    expect(allRemoved(), `[sim ${h.world.describe()}] every node downed`).toBe(true);
    // b is in the majority and never observes or is observed as unreachable: only down-all
    // downs it, and not before the view was unstable for stableAfterMs + downAllWhenUnstable.
    expect((firstRemovalAt ?? 0) - startedAt).toBeGreaterThan(stableAfterMs + downAllWhenUnstable);
  });

  it("control: the same flapping with down-all-when-unstable off leaves b running", async () => {
    const h = await fiveNodeCluster(seed, {
      downing: { stableAfterMs: 3_000, downAllWhenUnstable: "off" },
      failureDetector: QUICK_FD,
    });
    await flap(h, 20_000, () => false);
    expect(h.members.get("b")?.removedReason, "b must keep running").toBeUndefined();
    expect(h.members.get("b")?.cluster.selfMember?.status).toBe("up");
    expect(h.members.get("b")?.cluster.state.unreachable.length).toBeGreaterThan(0);
  });
});
