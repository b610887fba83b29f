/**
 * The member status state machine: every allowed transition works, every other one is
 * rejected with IllegalMemberTransitionError (through withStatus and through gossip
 * updateMembers), and the table has the safety properties docs/architecture.md ("Membership and gossip") relies on.
 */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { gossipOf, updateMembers } from "../../../src/core/membership/gossip.js";
import {
  createMember,
  memberFrom,
  UP_NUMBER_UNASSIGNED,
  withStatus,
  withStatusUp,
} from "../../../src/core/membership/member.js";
import { MEMBER_STATUSES, type MemberStatus } from "../../../src/core/membership/member-status.js";
import {
  ALLOWED_STATUS_TRANSITIONS,
  canTransition,
  IllegalMemberTransitionError,
} from "../../../src/core/membership/member-transitions.js";
import { nodeOf } from "../../../src/core/membership/unique-address.js";

const NODE = nodeOf("shardkit", "sys", "10.0.0.1", 2552, 7);
const inStatus = (status: MemberStatus) => memberFrom({ uniqueAddress: NODE, status });

const PAIRS = MEMBER_STATUSES.flatMap((from) => MEMBER_STATUSES.map((to) => [from, to] as const));
const LEGAL = PAIRS.filter(([from, to]) => from !== to && canTransition(from, to));
const ILLEGAL = PAIRS.filter(([from, to]) => from !== to && !canTransition(from, to));

describe("member status transitions", () => {
  it("the table names every status and only known statuses", () => {
    expect(Object.keys(ALLOWED_STATUS_TRANSITIONS).sort()).toEqual([...MEMBER_STATUSES].sort());
    for (const targets of Object.values(ALLOWED_STATUS_TRANSITIONS))
      for (const to of targets) expect(MEMBER_STATUSES).toContain(to);
  });

  it("has exactly the documented transitions", () => {
    expect(LEGAL.map(([f, t]) => `${f}->${t}`).sort()).toEqual(
      [
        "joining->weakly-up",
        "joining->up",
        "joining->leaving",
        "joining->down",
        "joining->removed",
        "weakly-up->up",
        "weakly-up->leaving",
        "weakly-up->down",
        "weakly-up->removed",
        "up->leaving",
        "up->down",
        "up->removed",
        "up->preparing-for-shutdown",
        "leaving->exiting",
        "leaving->down",
        "leaving->removed",
        "exiting->removed",
        "exiting->down",
        "down->removed",
        "preparing-for-shutdown->ready-for-shutdown",
        "preparing-for-shutdown->leaving",
        "preparing-for-shutdown->down",
        "preparing-for-shutdown->removed",
        "ready-for-shutdown->leaving",
        "ready-for-shutdown->down",
        "ready-for-shutdown->removed",
      ].sort(),
    );
    expect(LEGAL.length + ILLEGAL.length).toBe(9 * 8);
  });

  for (const [from, to] of LEGAL) {
    it(`allows ${from} -> ${to}`, () => {
      const before = inStatus(from);
      const after = withStatus(before, to);
      expect(after.status).toBe(to);
      expect(after.uniqueAddress).toBe(NODE);
      expect(before.status).toBe(from); // the input is not mutated
      expect(Object.isFrozen(after)).toBe(true);
    });
  }

  for (const [from, to] of ILLEGAL) {
    it(`rejects ${from} -> ${to}`, () => {
      let caught: unknown;
      try {
        withStatus(inStatus(from), to);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(IllegalMemberTransitionError);
      expect(caught).toBeInstanceOf(AssertionError);
      const err = caught as IllegalMemberTransitionError;
      expect([err.code, err.from, err.to, err.node]).toEqual([
        "ILLEGAL_MEMBER_TRANSITION",
        from,
        to,
        "shardkit://sys@10.0.0.1:2552#7",
      ]);
    });
  }

  it("setting the current status again is a no-op, also for terminal statuses", () => {
    for (const status of MEMBER_STATUSES) {
      const m = inStatus(status);
      expect(withStatus(m, status)).toBe(m);
      expect(canTransition(status, status)).toBe(false);
    }
  });

  it("removed is terminal, down only leads to removed, nothing returns to joining", () => {
    expect(ALLOWED_STATUS_TRANSITIONS.removed).toEqual([]);
    expect(ALLOWED_STATUS_TRANSITIONS.down).toEqual(["removed"]);
    for (const from of MEMBER_STATUSES) {
      expect(canTransition(from, "joining")).toBe(false);
      if (from !== "joining") expect(canTransition(from, "weakly-up")).toBe(false);
      if (from !== "removed") expect(canTransition(from, "removed")).toBe(true);
    }
  });

  it("a new member is joining without an up-number; withStatusUp assigns one", () => {
    const m = createMember({ uniqueAddress: NODE, roles: ["b", "a", "b"] });
    expect(m.status).toBe("joining");
    expect(m.upNumber).toBe(UP_NUMBER_UNASSIGNED);
    expect(m.roles).toEqual(["a", "b"]);
    const up = withStatusUp(m, 3);
    expect([up.status, up.upNumber]).toEqual(["up", 3]);
    expect(() => withStatusUp(inStatus("down"), 4)).toThrow(IllegalMemberTransitionError);
  });

  it("gossip updateMembers rejects an illegal transition and accepts a legal one", () => {
    const g = gossipOf({ members: [inStatus("down")] });
    expect(() => updateMembers(g, [inStatus("up")])).toThrow(IllegalMemberTransitionError);
    const up = gossipOf({ members: [inStatus("joining")] });
    expect(updateMembers(up, [inStatus("up")]).members[0]?.status).toBe("up");
  });
});
