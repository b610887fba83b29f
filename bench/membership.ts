/**
 * Membership benchmarks in the simulator (virtual time, seeded; scenario M10 in docs/scenarios.md). Every
 * figure is virtual time or simulated wire bytes, so it does not depend on this machine;
 * only the `wall` rows do.
 *
 * Per cluster size N in 5, 25, 100, 250 (default settings: gossip, heartbeats and leader
 * actions every 1 s; 3 seed nodes):
 * - membership.formation.<N>.ms: N nodes started at once -> all Up with convergence on
 *   every node (the first seed forms the cluster after seedNodeTimeoutMs = 5 s);
 * - membership.gossip.bytesPerNodePerSec.<N>: gossip (full + status digests) in steady
 *   state over 30 s virtual; membership.heartbeat.bytesPerNodePerSec.<N> beside it;
 * - membership.convergence.<N>.ms: one more node joins the converged N-node cluster ->
 *   all N + 1 see it Up, with convergence;
 * - membership.formation.fullGossips.<N> / .gossipMiB.<N>: full gossip sent while forming.
 * Failover (5 nodes, one non-leader killed with kill -9 semantics): time until it is gone
 * from every remaining member list, with the default profile and with FAST_PROFILE.
 *
 * The group stops a size when it would overrun WALL_BUDGET_MS (2 minutes for the group)
 * and says how far it got; docs/cluster-scale.md explains where the time goes.
 * Profile: `node --cpu-prof --import tsx bench/run.ts membership`.
 */
import { ClusterProfiles } from "../src/api/cluster-profiles.js";
import type { ClusterOptions } from "../src/cluster/membership/cluster.js";
import { MeteredSimCluster, nodeNames } from "../test/cluster/sim-gossip-meter.js";
import { type BenchGroup, type Metric, median } from "./harness.js";

const SIZES = [5, 25, 100, 250] as const;
/** Seeds per size: more runs where they are cheap (the figure is their median). */
const SEEDS: Readonly<Record<number, readonly number[]>> = {
  5: [1, 2, 3, 4, 5],
  25: [1, 2, 3],
  100: [1],
  250: [1],
};
const SEED_NODES = 3;
const STEADY_WINDOW_MS = 30_000;
const FORMATION_LIMIT_MS = 300_000;
const JOIN_LIMIT_MS = 120_000;
const FAILOVER_LIMIT_MS = 120_000;
const FAILOVER_SEEDS = [1, 2, 3, 4, 5];
/** The whole group's wall-clock budget (the issue: 2 minutes), with a margin. */
const WALL_BUDGET_MS = 105_000;
/** Convergence is checked at most this often (virtual ms): the figures' resolution. */
const CHECK_EVERY_MS = 50;
const MIB = 1024 * 1024;

export const DEFAULT_PROFILE: ClusterOptions = { settings: {}, failureDetector: {}, downing: {} };

/** A tuned profile for fast failover (documented in docs/cluster-scale.md). */
export const FAST_PROFILE: ClusterOptions = ClusterProfiles.fast;

export class WallBudgetExceeded extends Error {}

/** Runs the world until `predicate` (checked every CHECK_EVERY_MS) or the wall deadline. */
export async function runUntil(
  h: MeteredSimCluster,
  predicate: () => boolean,
  limitMs: number,
  wallDeadline: number,
): Promise<void> {
  let overBudget = false;
  const throttled = h.throttled(predicate, CHECK_EVERY_MS);
  // The wall clock on every event: in a gossip storm virtual time hardly moves.
  const check = () => {
    overBudget = performance.now() > wallDeadline;
    return overBudget || throttled();
  };
  await h.until(check, limitMs);
  if (overBudget) throw new WallBudgetExceeded(h.world.describe());
}

interface SizeRun {
  formationMs: number;
  formationFullGossips: number;
  formationGossipBytes: number;
  gossipBytesPerNodePerSec: number;
  heartbeatBytesPerNodePerSec: number;
  joinMs: number;
  wallMs: number;
}

/** The rows reported per size: name ({N} = the size), value, unit, note. */
const SIZE_METRICS: readonly (readonly [string, (r: SizeRun) => number, string, string])[] = [
  ["formation.{N}.ms", (r) => r.formationMs, "ms", "virtual, N started at once"],
  ["convergence.{N}.ms", (r) => r.joinMs, "ms", "virtual, one more node joins"],
  ["gossip.bytesPerNodePerSec.{N}", (r) => r.gossipBytesPerNodePerSec, "B/s", "steady, 30 s"],
  ["heartbeat.bytesPerNodePerSec.{N}", (r) => r.heartbeatBytesPerNodePerSec, "B/s", "steady, 30 s"],
  ["formation.fullGossips.{N}", (r) => r.formationFullGossips, "msgs", "all nodes, forming"],
  ["formation.gossipMiB.{N}", (r) => r.formationGossipBytes / MIB, "MiB", "all nodes, forming"],
  ["wall.{N}.ms", (r) => r.wallMs, "ms", "wall time of one run (this machine)"],
];

/** Starts `names` at once with the first SEED_NODES as seed nodes; returns those. */
export async function startCluster(
  h: MeteredSimCluster,
  names: readonly string[],
  profile: ClusterOptions = DEFAULT_PROFILE,
): Promise<string[]> {
  const seedNodes = names.slice(0, SEED_NODES).map((n) => `${n}:2552`);
  for (const n of names) await h.member(n, { seedNodes, ...profile });
  return seedNodes;
}

/** Runs `phase`; a blown wall budget is rethrown with `what` and the traffic so far. */
export async function budgeted(h: MeteredSimCluster, what: string, phase: () => Promise<void>) {
  try {
    await phase();
  } catch (error) {
    if (!(error instanceof WallBudgetExceeded)) throw error;
    const t = h.traffic;
    throw new WallBudgetExceeded(
      `${what} not done at ${h.world.describe()}; ${t.fullGossip.frames} full gossips ` +
        `(${(t.gossip.bytes / MIB).toFixed(0)} MiB) sent in this phase`,
    );
  }
}

async function measureSize(size: number, seed: number, wallDeadline: number): Promise<SizeRun> {
  const wall0 = performance.now();
  const h = new MeteredSimCluster(seed);
  const names = nodeNames(size);
  const seedNodes = await startCluster(h, names);
  const t0 = h.world.now;
  await budgeted(h, "formation", () =>
    runUntil(h, () => h.allUpAndConverged(names), FORMATION_LIMIT_MS, wallDeadline),
  );
  const formationMs = h.world.now - t0;
  const formation = h.traffic;

  h.resetTraffic();
  await h.world.advance(STEADY_WINDOW_MS);
  const steady = h.traffic;
  const rate = (bytes: number) => bytes / size / (STEADY_WINDOW_MS / 1_000);

  h.resetTraffic();
  const joiner = nodeNames(1, size)[0] as string;
  const t1 = h.world.now;
  await h.member(joiner, { seedNodes, ...DEFAULT_PROFILE });
  const all = [...names, joiner];
  await budgeted(h, `join (formation took ${Math.round(formationMs)} ms virtual)`, () =>
    runUntil(h, () => h.allUpAndConverged(all), JOIN_LIMIT_MS, wallDeadline),
  );
  return {
    formationMs,
    formationFullGossips: formation.fullGossip.frames,
    formationGossipBytes: formation.gossip.bytes,
    gossipBytesPerNodePerSec: rate(steady.gossip.bytes),
    heartbeatBytesPerNodePerSec: rate(steady.heartbeat.bytes),
    joinMs: h.world.now - t1,
    wallMs: performance.now() - wall0,
  };
}

function reportSize(size: number, runs: readonly SizeRun[], report: (m: Metric) => void): void {
  for (const [pattern, value, unit, note] of SIZE_METRICS)
    report({
      metric: `membership.${pattern.replace("{N}", String(size))}`,
      value: median(runs.map(value)),
      unit,
      note: `${note}; median of ${runs.length} seed(s)`,
    });
}

async function scaleGroup(report: (m: Metric) => void, wallDeadline: number): Promise<void> {
  for (const size of SIZES) {
    const runs: SizeRun[] = [];
    const wall0 = performance.now();
    try {
      for (const seed of SEEDS[size] ?? [1]) runs.push(await measureSize(size, seed, wallDeadline));
    } catch (error) {
      if (!(error instanceof WallBudgetExceeded)) throw error;
      report({
        metric: `membership.wall.${size}.ms`,
        value: performance.now() - wall0,
        unit: "ms",
        note: `NOT MEASURED: wall budget exhausted; ${error.message}`,
      });
      return;
    }
    reportSize(size, runs, report);
  }
}

/** Kills one non-leader of a converged 5-node cluster; virtual ms until it is removed. */
async function failoverOnce(profile: ClusterOptions, seed: number): Promise<number> {
  const h = new MeteredSimCluster(seed);
  const names = nodeNames(5);
  await startCluster(h, names, profile);
  await runUntil(h, () => h.allUpAndConverged(names), FORMATION_LIMIT_MS, Infinity);
  await h.world.advance(10_000); // a settled failure-detector history
  const victim = names[1 + (seed % (names.length - 1))] as string;
  const killed = h.members.get(victim);
  if (killed === undefined) throw new Error(`no ${victim}`);
  const t0 = h.world.now;
  h.crash(killed);
  h.members.delete(victim);
  const rest = names.filter((n) => n !== victim);
  const gone = () =>
    rest.every((n) =>
      h.members.get(n)?.cluster.state.members.every((m) => m.uniqueAddress.address.host !== victim),
    );
  await runUntil(h, gone, FAILOVER_LIMIT_MS, Infinity);
  return h.world.now - t0;
}

async function failoverGroup(report: (m: Metric) => void): Promise<void> {
  for (const [name, profile] of [
    ["default", DEFAULT_PROFILE],
    ["fast", FAST_PROFILE],
  ] as const) {
    const runs: number[] = [];
    for (const seed of FAILOVER_SEEDS) runs.push(await failoverOnce(profile, seed));
    report({
      metric: `membership.failover.${name}.ms`,
      value: median(runs),
      unit: "ms",
      note: `virtual, kill -9 -> removed everywhere, 5 nodes; min ${Math.round(Math.min(...runs))}, max ${Math.round(Math.max(...runs))}`,
    });
  }
}

export const membershipGroup: BenchGroup = {
  name: "membership",
  description: "gossip convergence, bytes and failover in the simulator (virtual time)",
  async run(report) {
    const wallDeadline = performance.now() + WALL_BUDGET_MS;
    await failoverGroup(report);
    await scaleGroup(report, wallDeadline);
  },
};
