/**
 * Scenario M4 (real; docs/scenarios.md): a member that leaves goes Leaving -> Exiting -> Removed; every
 * other member sees each step, in order; the leaving process stops by itself (exit code
 * 0). Also when the leaving member is the leader.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import {
  type ClusterNode,
  clusterEvents,
  command,
  formCluster,
  waitAllUp,
  waitForEvent,
} from "./cluster-node.js";

installChildTeardown("perTest");

const LEAVE_TIMEOUT_MS = 10_000;

/** `leaver` leaves (asked on `via`); checks what the others and the leaver report. */
async function leaveAndCheck(
  label: string,
  leaver: ClusterNode,
  via: ClusterNode,
  others: readonly ClusterNode[],
): Promise<void> {
  const startedAt = Date.now();
  await command(via, "leave", { address: leaver.hostPort });

  // The leaver is removed, notices, and exits cleanly on its own.
  const selfRemoved = await waitFor(
    leaver.child,
    (e) => e.event === "self-removed",
    LEAVE_TIMEOUT_MS,
    "self-removed",
  );
  const exit = await leaver.child.exited;
  expect(exit).toEqual({ code: 0, signal: null });
  expect(String(selfRemoved.reason)).toMatch(/removed/);
  const leaverOwn = clusterEvents(leaver, leaver.hostPort).map((e) => e.type);
  expect(leaverOwn.slice(-2), `${leaver.name}'s own last statuses`).toEqual([
    "member-left",
    "member-exited",
  ]);

  for (const n of others) {
    const removed = await waitForEvent(n, "member-removed", leaver.hostPort, LEAVE_TIMEOUT_MS);
    expect(removed.previousStatus).toBe("exiting");
    const seen = clusterEvents(n, leaver.hostPort)
      .map((e) => e.type)
      .filter((t) => t !== "member-joined" && t !== "member-up");
    expect(seen, `${n.name}'s events about ${leaver.name}`).toEqual([
      "member-left",
      "member-exited",
      "member-removed",
    ]);
  }
  const views = await waitAllUp(others, others, LEAVE_TIMEOUT_MS);
  const lowest = [...others].sort((a, b) => a.port - b.port)[0]?.hostPort;
  for (const v of views) expect(v.leader).toBe(lowest);
  console.log(
    `[M4] ${label}: leave -> self-removed ${Number(selfRemoved.t) - startedAt} ms, -> others converged ${Date.now() - startedAt} ms`,
  );
}

describe("M4 real: graceful leave", () => {
  // One 5-member cluster, three leaves in turn (saves two cluster start-ups).
  it("a member leaves, then the leader leaves, then the new leader is told to leave by another member: each time the others see Left, Exited, Removed and the leaver exits with code 0", async () => {
    const { nodes } = await formCluster(["A", "B", "C", "D", "E"]);
    const [a, b, c, d, e] = nodes as [
      ClusterNode,
      ClusterNode,
      ClusterNode,
      ClusterNode,
      ClusterNode,
    ];
    await leaveAndCheck("non-leader leaves", e, e, [a, b, c, d]);
    await leaveAndCheck("leader leaves", a, a, [b, c, d]);
    await leaveAndCheck("leader told by D", b, d, [c, d]);
  }, 40_000);
});
