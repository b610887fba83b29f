/**
 * Scenario M5 (real; docs/scenarios.md): a member killed with SIGKILL is marked unreachable by the phi
 * failure detector, downed by the split brain resolver (keep-majority) once the
 * unreachable set was stable for stableAfterMs, then removed; the survivors converge.
 * Logs the time from the kill to each step, as the survivors' own clocks saw it.
 */
import { describe, expect, it } from "vitest";
import { installChildTeardown } from "../support/child-teardown.js";
import {
  type ClusterNode,
  clusterEvents,
  formCluster,
  stopMember,
  waitAllUp,
  waitForEvent,
} from "./cluster-node.js";
import { FAST_FAILURE_DETECTOR, SBR_STABLE_AFTER_MS } from "./fast-settings.js";

installChildTeardown("perTest");

/**
 * Upper bound on kill -> unreachable: with heartbeats every 200 ms, acceptable pause
 * 1 000 ms and threshold 8, phi crosses the threshold ~1.5 s after the last answer, seen
 * on the next 200 ms reaper tick and gossiped; the rest is slack for a loaded 2-core box.
 */
const UNREACHABLE_BOUND_MS = 5_000;
/** Upper bound on kill -> removed everywhere: the above + stableAfterMs + slack. */
const REMOVED_BOUND_MS = UNREACHABLE_BOUND_MS + SBR_STABLE_AFTER_MS + 4_000;

async function crashAndCheck(
  label: string,
  victim: ClusterNode,
  survivors: readonly ClusterNode[],
): Promise<void> {
  // A few heartbeat round trips so every detector has learnt the interval.
  await new Promise((r) => setTimeout(r, 600));
  const killedAt = Date.now();
  await stopMember(victim, "SIGKILL");

  const steps = ["unreachable-member", "member-downed", "member-removed"];
  const timings: Record<string, number[]> = {};
  for (const n of survivors) {
    const removed = await waitForEvent(n, "member-removed", victim.hostPort, REMOVED_BOUND_MS);
    expect(removed.previousStatus).toBe("down");
    const seen = clusterEvents(n, victim.hostPort).filter(
      (e) => e.type !== "member-joined" && e.type !== "member-up" && e.t >= killedAt,
    );
    expect(
      seen.map((e) => e.type),
      `${n.name}'s events about ${victim.name}`,
    ).toEqual(steps);
    for (const e of seen) timings[e.type] = [...(timings[e.type] ?? []), e.t - killedAt];
  }
  const views = await waitAllUp(survivors, survivors, REMOVED_BOUND_MS);
  const convergedMs = Date.now() - killedAt;
  const lowest = [...survivors].sort((a, b) => a.port - b.port)[0]?.hostPort;
  for (const v of views) expect(v.leader).toBe(lowest);

  const first = (t: string) => Math.min(...(timings[t] ?? [Number.NaN]));
  const last = (t: string) => Math.max(...(timings[t] ?? [Number.NaN]));
  console.log(
    `[M5] ${label}: kill -> unreachable ${first(steps[0] as string)}..${last(steps[0] as string)} ms, ` +
      `-> downed ${first(steps[1] as string)}..${last(steps[1] as string)} ms, ` +
      `-> removed ${first(steps[2] as string)}..${last(steps[2] as string)} ms, ` +
      `-> survivors all Up with convergence (polled) ${convergedMs} ms`,
  );
  // Not before the acceptable pause, within the phi bound.
  expect(first("unreachable-member")).toBeGreaterThanOrEqual(
    FAST_FAILURE_DETECTOR.acceptableHeartbeatPauseMs / 2,
  );
  expect(last("unreachable-member")).toBeLessThan(UNREACHABLE_BOUND_MS);
  // The SBR waited for a stable unreachable set (100 ms: clock granularity between processes).
  expect(first("member-downed") - first("unreachable-member")).toBeGreaterThanOrEqual(
    SBR_STABLE_AFTER_MS - 100,
  );
  expect(last("member-removed")).toBeLessThan(REMOVED_BOUND_MS);
}

describe("M5 real: crashed member (kill -9)", () => {
  it("one of 3 (not the leader) is killed: unreachable, downed by the SBR, removed; the 2 others converge", async () => {
    const { nodes } = await formCluster(["A", "B", "C"]);
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    await crashAndCheck("1 of 3 (non-leader)", c, [a, b]);
  }, 30_000);

  it("the leader of 5 is killed: unreachable, downed by the new leader's SBR, removed; the 4 others converge", async () => {
    const { nodes } = await formCluster(["A", "B", "C", "D", "E"]);
    const [a, ...rest] = nodes as [ClusterNode, ...ClusterNode[]];
    await crashAndCheck("leader of 5", a, rest);
  }, 40_000);
});
