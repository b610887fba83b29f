/**
 * Group `membership1000` (issue 15, item 5): a 1 000-member cluster in the simulator
 * (virtual time, seeded, 3 seed nodes). All 1 000 start at once (the leader's boot-storm
 * limits, docs/cluster.md "Formation and boot storms", pace the joins), the cluster
 * converges, then 100 members (10 %) are killed at once with kill -9 semantics and the
 * 900 survivors converge again once the split brain resolver has downed the dead and the
 * leader removed them.
 *
 * Settings: the defaults except the two boot-storm limits, LARGE_CLUSTER_SETTINGS
 * (maxMembersUpPerLeaderRound and maxJoinsAdmittedPerSecond 100 instead of 20). With the
 * defaults, 1 000 members need about 50 leader rounds to form, each round a new version
 * that every member must receive as a full gossip (O(N) bytes each); at 100 per round
 * formation takes 10 rounds. A round's cost does not depend on how many members it moves
 * up (one broadcast of one version), so the higher limit is what a 1 000-member cluster
 * started at once should use (docs/cluster-scale.md, "1 000 members"). The default-settings
 * run is `node --import tsx bench/membership-scale-run.ts 1000`; its figures are in the docs.
 *
 * - membership.convergence.1000.ms: virtual ms from the start until every member sees
 *   all 1 000 Up with convergence;
 * - membership.reconvergence.1000.ms: virtual ms from the crash until every survivor
 *   sees exactly the 900 survivors, all Up, with convergence;
 * - membership.gossip.bytesPerNodePerSec.1000: gossip in steady state (5 s virtual);
 * - membership.fullGossip.bytes.1000: one full gossip of the converged cluster on the
 *   wire (what a status digest saves when versions agree);
 * - membership.wall.1000.ms: wall time of the whole run (this machine);
 * - membership.cpuUser.1000.ms: user CPU of the process meanwhile (the machine is shared).
 * The group stops when it would overrun WALL_BUDGET_MS and says how far it got; the wall
 * and CPU figures are then reported as `...budgetExhausted.ms` (with --json, which prints
 * no notes, a partial run must not look like a finished one).
 */
import { encodeMembershipMessage } from "../src/cluster/membership/membership-messages.js";
import { gossipOf } from "../src/core/membership/gossip.js";
import { MembershipKind } from "../src/core/membership/membership-messages.js";
import { uniqueAddressToString } from "../src/core/membership/unique-address.js";
import { MeteredSimCluster, nodeNames } from "../test/cluster/sim-gossip-meter.js";
import type { BenchGroup, Metric } from "./harness.js";
import { budgeted, runUntil, startCluster, WallBudgetExceeded } from "./membership.js";

const SIZE = 1_000;
const CRASH_FRACTION = 0.1;
const SEED = 1;
/**
 * Shorter than the 30 s of the `membership` group: an idle 1 000-member second costs
 * 0.7 to 1 s of wall, and five gossip rounds per member are enough for the average.
 */
const STEADY_WINDOW_MS = 5_000;
/** The boot-storm limits for 1 000 members started at once (see the module comment). */
export const LARGE_CLUSTER_SETTINGS = {
  maxMembersUpPerLeaderRound: 100,
  maxJoinsAdmittedPerSecond: 100,
} as const;
const SETTINGS_NOTE =
  "settings: defaults, maxMembersUpPerLeaderRound 100, maxJoinsAdmittedPerSecond 100";
const FORMATION_LIMIT_MS = 600_000;
const RECONVERGENCE_LIMIT_MS = 600_000;
/** The group's wall-clock budget (bench groups stay under 2 minutes), with a margin. */
const WALL_BUDGET_MS = 115_000;

/**
 * Bytes of one full gossip message (payload + kind byte + frame header) carrying the
 * members and seen set `name` sees (version and reachability left empty: a few bytes).
 */
export function fullGossipBytes(h: MeteredSimCluster, name: string): number {
  const m = h.members.get(name);
  if (m === undefined) return Number.NaN;
  const st = m.cluster.state;
  const to = st.members.find((x) => x.uniqueAddress.address.host !== name);
  if (to === undefined) return Number.NaN;
  const payload = encodeMembershipMessage(m.remoting.registry, {
    kind: MembershipKind.Gossip,
    to: uniqueAddressToString(to.uniqueAddress),
    gossip: gossipOf({ members: st.members, seen: st.seenBy }),
  });
  return payload.length + 6;
}

/**
 * The simulator allocates a few hundred MB per second of short-lived objects (messages,
 * decoded gossip, events) at this size; with V8's default young generation a quarter of
 * the run was garbage collection. 128 MiB semi-spaces cut the whole run by about 10 %
 * (docs/cluster-scale.md, "Session 16"). A setting of the simulating process, not of
 * shardkit.
 */
const SIMULATOR_NODE_FLAGS = ["--max-semi-space-size=128"] as const;

export const membershipScaleGroup: BenchGroup = {
  name: "membership1000",
  nodeFlags: SIMULATOR_NODE_FLAGS,
  compiled: true,
  description: "1 000 members in the simulator: form, converge, 10 % crash, converge again",
  async run(report: (m: Metric) => void) {
    const wall0 = performance.now();
    const cpu0 = process.cpuUsage();
    const cpuUserMs = () => process.cpuUsage(cpu0).user / 1_000;
    const wallDeadline = wall0 + WALL_BUDGET_MS;
    const h = new MeteredSimCluster(SEED);
    const names = nodeNames(SIZE);
    let phase = "start";
    try {
      await startCluster(h, names, {
        settings: LARGE_CLUSTER_SETTINGS,
        failureDetector: {},
        downing: {},
      });
      const t0 = h.world.now;
      phase = "formation";
      await budgeted(h, "formation", () =>
        runUntil(h, () => h.allUpAndConverged(names), FORMATION_LIMIT_MS, wallDeadline),
      );
      report({
        metric: "membership.convergence.1000.ms",
        value: h.world.now - t0,
        unit: "ms",
        note: `virtual, 1 000 started at once -> all Up with convergence everywhere; ${SETTINGS_NOTE}`,
      });
      report({
        metric: "membership.formation.fullGossips.1000",
        value: h.traffic.fullGossip.frames,
        unit: "msgs",
        note: `all nodes, forming; ${(h.traffic.fullGossip.bytes / 1048576).toFixed(0)} MiB`,
      });
      phase = "steady state";
      h.resetTraffic();
      await h.world.advance(STEADY_WINDOW_MS);
      const steady = h.traffic;
      report({
        metric: "membership.gossip.bytesPerNodePerSec.1000",
        value: steady.gossip.bytes / SIZE / (STEADY_WINDOW_MS / 1_000),
        unit: "B/s",
        note: `steady, ${STEADY_WINDOW_MS / 1_000} s; ${steady.fullGossip.frames} full gossips`,
      });
      report({
        metric: "membership.fullGossip.bytes.1000",
        value: fullGossipBytes(h, names[1] as string),
        unit: "B",
        note: "one full gossip of the converged cluster on the wire",
      });
      phase = "crash";
      const victims = names.slice(names.length - Math.round(SIZE * CRASH_FRACTION));
      for (const v of victims) {
        const m = h.members.get(v);
        if (m !== undefined) h.crash(m);
        h.members.delete(v);
      }
      const survivors = names.slice(0, names.length - victims.length);
      h.resetTraffic();
      const t1 = h.world.now;
      await budgeted(h, "re-convergence", () =>
        runUntil(h, () => h.allUpAndConverged(survivors), RECONVERGENCE_LIMIT_MS, wallDeadline),
      );
      report({
        metric: "membership.reconvergence.1000.ms",
        value: h.world.now - t1,
        unit: "ms",
        note: `virtual, kill -9 of 100 -> 900 survivors see only each other, Up, converged; ${h.traffic.fullGossip.frames} full gossips (compact ones included), ${(h.traffic.gossip.bytes / 1048576).toFixed(0)} MiB of gossip and statuses`,
      });
      report({
        metric: "membership.wall.1000.ms",
        value: performance.now() - wall0,
        unit: "ms",
        note: `wall time of the whole run (this machine); ${SETTINGS_NOTE}`,
      });
      report({
        metric: "membership.cpuUser.1000.ms",
        value: cpuUserMs(),
        unit: "ms",
        note: "user CPU of this process during the run (GC threads included)",
      });
    } catch (error) {
      if (!(error instanceof WallBudgetExceeded)) throw error;
      report({
        // another name: --json prints no notes, and this is not the scenario's wall time
        metric: "membership.wall.1000.budgetExhausted.ms",
        value: performance.now() - wall0,
        unit: "ms",
        note: `NOT MEASURED: wall budget exhausted in ${phase}; ${error.message}; ${SETTINGS_NOTE}`,
      });
      report({
        metric: "membership.cpuUser.1000.budgetExhausted.ms",
        value: cpuUserMs(),
        unit: "ms",
        note: `user CPU until the budget ran out in ${phase}`,
      });
    }
  },
};
