/**
 * Rules of the SBR decision (src/core/downing/downing-decision.ts) that
 * downing-decision.test.ts leaves implicit: with the lease, lease-majority keeps this
 * side and says so.
 */
import { describe, expect, it } from "vitest";
import { decideDowning } from "../../../src/core/downing/downing-decision.js";
import { sbrViewOf } from "../../../src/core/downing/sbr-view.js";
import { gossipOf } from "../../../src/core/membership/gossip.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import { membershipStateOf } from "../../../src/core/membership/membership-state.js";
import { emptyReachability, markUnreachable } from "../../../src/core/membership/reachability.js";
import { nodeOf } from "../../../src/core/membership/unique-address.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const [a, b, c] = [n("a"), n("b"), n("c")] as const;

describe("downing decision rules", () => {
  const g = gossipOf({
    members: [a, b, c].map((x, i) =>
      memberFrom({ uniqueAddress: x, status: "up", upNumber: i + 1 }),
    ),
    reachability: markUnreachable(emptyReachability, a, c),
    seen: [a, b],
  });
  const view = sbrViewOf(membershipStateOf({ latestGossip: g, selfUniqueAddress: b }));

  it("lease-majority with the lease downs the unreachable side, and the reason says the lease was acquired", () => {
    const d = decideDowning(
      { type: "lease-majority", acquireLeaseDelayForMinorityMs: 2000 },
      view,
      { leaseAcquired: true },
    );
    if (d.type !== "down") throw new Error(d.type);
    expect(d.decision).toBe("down-unreachable");
    expect(d.down).toEqual([c]);
    expect(d.selfDowned).toBe(false);
    expect(d.reason.endsWith(" (lease acquired)")).toBe(true);
  });
});
