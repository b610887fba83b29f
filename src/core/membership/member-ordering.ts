/**
 * The orders on members that the membership model relies on:
 *
 * - member order (`compareMembers`): by node (host, port, ..., uid). Gossip member lists,
 *   leader choice and every deterministic iteration use it.
 * - leader-status order (`compareByLeaderStatus`): the fallback for leader choice; down
 *   sorts last, then exiting, then joining, then weakly-up, everything else first.
 * - age order (`isOlderThan`, `compareByAge`): lower upNumber is older, ties by address.
 *   Only meaningful within one data center (up-numbers are assigned per DC), so comparing
 *   across data centers is an assertion failure.
 * - merge precedence (`STATUS_MERGE_PRECEDENCE`, `highestPriorityOf`): which of two
 *   versions of the same node wins when concurrent gossips are merged: the status
 *   furthest along the lifecycle, so a merge never undoes a leave, down or removal.
 */
import { assertNever, fail } from "../../base/assert.js";
import { compareAddresses } from "./address.js";
import type { Member } from "./member.js";
import type { MemberStatus } from "./member-status.js";
import { compareUniqueAddresses, uniqueAddressToString } from "./unique-address.js";

/** Member order: by node. Zero exactly for the same node (identity). */
export function compareMembers(a: Member, b: Member): number {
  return compareUniqueAddresses(a.uniqueAddress, b.uniqueAddress);
}

function leaderStatusRank(status: MemberStatus): number {
  switch (status) {
    case "down":
      return 4;
    case "exiting":
      return 3;
    case "joining":
      return 2;
    case "weakly-up":
      return 1;
    case "up":
    case "leaving":
    case "preparing-for-shutdown":
    case "ready-for-shutdown":
    case "removed":
      return 0;
    default:
      return assertNever(status, "member status");
  }
}

/** Leader-status order: down last, before it exiting, joining, weakly-up; then member order. */
export function compareByLeaderStatus(a: Member, b: Member): number {
  return leaderStatusRank(a.status) - leaderStatusRank(b.status) || compareMembers(a, b);
}

function assertSameDataCenter(a: Member, b: Member): void {
  if (a.dataCenter !== b.dataCenter)
    fail(
      `age of members in different data centers is not comparable: ${uniqueAddressToString(
        a.uniqueAddress,
      )} (${a.dataCenter}) vs ${uniqueAddressToString(b.uniqueAddress)} (${b.dataCenter})`,
    );
}

/**
 * True if `a` has been in the cluster longer than `b`: lower upNumber, or equal upNumber
 * and `a`'s address sorts first. Both must be in the same data center.
 */
export function isOlderThan(a: Member, b: Member): boolean {
  assertSameDataCenter(a, b);
  if (a.upNumber === b.upNumber)
    return compareAddresses(a.uniqueAddress.address, b.uniqueAddress.address) < 0;
  return a.upNumber < b.upNumber;
}

/** Age order, oldest first; for sorting members of one data center. */
export function compareByAge(a: Member, b: Member): number {
  assertSameDataCenter(a, b);
  return a.upNumber - b.upNumber || compareMembers(a, b);
}

/**
 * Merge precedence of statuses, higher wins: removed > ready-for-shutdown > down >
 * exiting > leaving > preparing-for-shutdown > up > weakly-up > joining.
 */
export const STATUS_MERGE_PRECEDENCE: Readonly<Record<MemberStatus, number>> = Object.freeze({
  joining: 0,
  "weakly-up": 1,
  up: 2,
  "preparing-for-shutdown": 3,
  leaving: 4,
  exiting: 5,
  down: 6,
  "ready-for-shutdown": 7,
  removed: 8,
});

/**
 * Of two versions of the SAME node, the one to keep on merge: the higher status
 * precedence; with equal status the older one (lower upNumber); with a full tie `b`.
 */
export function highestPriorityOf(a: Member, b: Member): Member {
  if (compareMembers(a, b) !== 0)
    fail(
      `highestPriorityOf needs two versions of one node: ${uniqueAddressToString(
        a.uniqueAddress,
      )} vs ${uniqueAddressToString(b.uniqueAddress)}`,
    );
  if (a.status !== b.status)
    return STATUS_MERGE_PRECEDENCE[a.status] > STATUS_MERGE_PRECEDENCE[b.status] ? a : b;
  return isOlderThan(a, b) ? a : b;
}
