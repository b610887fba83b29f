/**
 * The explanation each Split Brain Resolver strategy gives for its decision (the `reason`
 * of core/downing/downing-decision.ts, logged when a node downs others or itself): which
 * rule decided and the sizes it compared. The decisions themselves are pinned by
 * test/core/scripts/sbr-*.txt; the scripts do not print reasons.
 */
import { describe, expect, it } from "vitest";
import { decideDowning } from "../../../src/core/downing/downing-decision.js";
import type { DowningStrategy } from "../../../src/core/downing/downing-strategy.js";
import { type SbrView, sbrViewOf } from "../../../src/core/downing/sbr-view.js";
import { gossipOf } from "../../../src/core/membership/gossip.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import type { MemberStatus } from "../../../src/core/membership/member-status.js";
import { membershipStateOf } from "../../../src/core/membership/membership-state.js";
import { emptyReachability, markUnreachable } from "../../../src/core/membership/reachability.js";
import { nodeOf } from "../../../src/core/membership/unique-address.js";

const node = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);

/** `members`: "a:up:1@r1,r2 b:joining ..."; `edges`: "a->b c->d"; `seen`: "a b". */
function viewOf(self: string, members: string, edges: string, seen = ""): SbrView {
  let reachability = emptyReachability;
  for (const e of edges.split(" ").filter((x) => x !== "")) {
    const [o, s] = e.split("->") as [string, string];
    reachability = markUnreachable(reachability, node(o), node(s));
  }
  const g = gossipOf({
    members: members.split(" ").map((spec) => {
      const [main, roles] = spec.split("@") as [string, string | undefined];
      const [host, status, up] = main.split(":") as [string, MemberStatus, string | undefined];
      return memberFrom({
        uniqueAddress: node(host),
        status,
        roles: roles === undefined ? [] : roles.split(","),
        upNumber: up === undefined ? undefined : Number(up),
      });
    }),
    reachability,
    seen: seen
      .split(" ")
      .filter((x) => x !== "")
      .map(node),
  });
  return sbrViewOf(membershipStateOf({ latestGossip: g, selfUniqueAddress: node(self) }));
}

function reasonOf(strategy: DowningStrategy, view: SbrView, leaseAcquired?: boolean): string {
  const d = decideDowning(strategy, view, { leaseAcquired });
  if (d.type === "no-decision") throw new Error("no decision");
  return d.reason;
}

const FIVE = "a:up:1 b:up:2 c:up:3 d:up:4 e:up:5";
const KEEP_MAJORITY: DowningStrategy = { type: "keep-majority" };
const KEEP_OLDEST: DowningStrategy = { type: "keep-oldest", downIfAlone: true };

describe("sbr decision reasons", () => {
  it("keep-majority names the sizes it compared, and the role", () => {
    expect(reasonOf(KEEP_MAJORITY, viewOf("d", FIVE, "d->a d->b d->c"))).toBe(
      "keep-majority: minority: 2 reachable vs 3 unreachable members",
    );
    expect(
      reasonOf(
        { type: "keep-majority", role: "r" },
        viewOf("a", "a:up:1@r b:up:2 c:up:3@r d:up:4 e:up:5@r", "a->e"),
      ),
    ).toBe("keep-majority: majority: 2 reachable vs 1 unreachable members with role r");
    expect(reasonOf({ type: "keep-majority", role: "x" }, viewOf("a", FIVE, "a->e"))).toBe(
      "keep-majority: no members with role x",
    );
    expect(
      reasonOf(
        KEEP_MAJORITY,
        viewOf("a", "a:up:1 b:up:2 c:up:3 d:joining e:joining", "a->c a->d a->e"),
      ),
    ).toBe(
      "keep-majority: majority only without concurrent membership changes: 2 reachable vs 1 unreachable members",
    );
    expect(reasonOf(KEEP_MAJORITY, viewOf("c", FIVE, "a->b b->a"))).toBe(
      "keep-majority: indirectly connected nodes",
    );
  });

  it("static-quorum names the quorum and the size guard", () => {
    const q3: DowningStrategy = { type: "static-quorum", quorumSize: 3 };
    expect(reasonOf(q3, viewOf("a", FIVE, "a->d a->e"))).toBe(
      "static-quorum: quorum: 3 reachable members, quorumSize 3",
    );
    expect(reasonOf(q3, viewOf("d", FIVE, "d->a d->b d->c"))).toBe(
      "static-quorum: no quorum: 2 reachable members, quorumSize 3",
    );
    expect(
      reasonOf({ type: "static-quorum", quorumSize: 2, role: "q" }, viewOf("a", FIVE, "a->e")),
    ).toBe("static-quorum: no quorum: 0 reachable members with role q, quorumSize 2");
    expect(reasonOf({ type: "static-quorum", quorumSize: 2 }, viewOf("a", FIVE, "a->e"))).toBe(
      "static-quorum: 5 members exceed 2 * quorumSize - 1 = 3",
    );
    expect(reasonOf(q3, viewOf("c", FIVE, "a->b b->a"))).toBe(
      "static-quorum: indirectly connected nodes",
    );
  });

  it("keep-oldest says where the oldest is", () => {
    const five = "a:up:3 b:up:1 c:up:2 d:up:4 e:up:5";
    expect(reasonOf(KEEP_OLDEST, viewOf("b", five, "b->a b->d c->e"))).toBe(
      "keep-oldest: the oldest is on this side",
    );
    expect(reasonOf(KEEP_OLDEST, viewOf("a", five, "a->b a->c"))).toBe(
      "keep-oldest: the oldest is on the other side (or alone here)",
    );
    expect(
      reasonOf(
        KEEP_OLDEST,
        viewOf("b", "a:up:3 b:leaving:1 c:up:2 d:up:4 e:up:5", "b->a b->d b->e"),
      ),
    ).toBe("keep-oldest: oldest side unclear with concurrent membership changes");
    expect(
      reasonOf({ type: "keep-oldest", downIfAlone: true, role: "x" }, viewOf("a", FIVE, "a->e")),
    ).toBe("keep-oldest: no members with role x");
  });

  it("down-all, auto-down and lease-majority say what they do", () => {
    expect(reasonOf({ type: "down-all" }, viewOf("a", FIVE, "a->e"))).toBe(
      "down-all: down-all strategy",
    );
    expect(reasonOf({ type: "auto-down" }, viewOf("d", FIVE, "d->a d->b d->c"))).toBe(
      "auto-down: auto-down: every unreachable member goes down",
    );
    const lease: DowningStrategy = { type: "lease-majority", acquireLeaseDelayForMinorityMs: 2000 };
    expect(reasonOf(lease, viewOf("d", FIVE, "d->a d->b d->c"))).toBe(
      "lease-majority: minority side: acquire the lease after a delay",
    );
    expect(reasonOf(lease, viewOf("a", FIVE, "a->d a->e"))).toBe("lease-majority: majority side");
    expect(reasonOf(lease, viewOf("c", FIVE, "a->b b->a"), true)).toBe(
      "lease-majority: indirectly connected nodes (lease acquired)",
    );
  });
});
