/**
 * Which members take part in a singleton, and in what order: the members of the
 * singleton's data center that carry its role (any role when none is configured) and
 * have an age (status up or later; joining and weakly-up members have no up-number),
 * sorted oldest first with `compareByAge`. Removed members are not listed.
 *
 * A member is ELIGIBLE to run the instance while it is a full member that has not
 * started to leave: up, preparing-for-shutdown or ready-for-shutdown. Preparing for a
 * full-cluster shutdown does not move the singleton (it would move again at once).
 * Leaving, exiting and down are permanent: an ineligible member never becomes eligible
 * again, which is what lets a manager give the singleton up for good on request.
 */
import { hasRole, type Member } from "../membership/member.js";
import { compareByAge } from "../membership/member-ordering.js";
import type { MemberStatus } from "../membership/member-status.js";
import { type UniqueAddress, uniqueAddressEquals } from "../membership/unique-address.js";

/** Which members a singleton considers. */
export interface SingletonScope {
  /** Only members with this role; undefined: every member. */
  readonly role: string | undefined;
  readonly dataCenter: string;
}

const AGED: ReadonlySet<MemberStatus> = new Set<MemberStatus>([
  "up",
  "preparing-for-shutdown",
  "ready-for-shutdown",
  "leaving",
  "exiting",
  "down",
]);

const ELIGIBLE: ReadonlySet<MemberStatus> = new Set<MemberStatus>([
  "up",
  "preparing-for-shutdown",
  "ready-for-shutdown",
]);

/** True if the member may run (or be handed) the instance. */
export function isEligible(member: Member): boolean {
  return ELIGIBLE.has(member.status);
}

/** The members in scope, oldest first (input order does not matter). */
export function singletonMembersOf(members: readonly Member[], scope: SingletonScope): Member[] {
  return members
    .filter(
      (m) =>
        AGED.has(m.status) &&
        m.dataCenter === scope.dataCenter &&
        (scope.role === undefined || hasRole(m, scope.role)),
    )
    .sort(compareByAge);
}

/**
 * The oldest eligible member of an oldest-first list: where the instance belongs. With
 * `passOver` (the lease-guarded take-over, see singleton-manager.ts), members it names are
 * skipped: the oldest eligible member NOT passed over.
 */
export function oldestEligible(
  oldestFirst: readonly Member[],
  passOver?: (member: Member) => boolean,
): Member | undefined {
  return oldestFirst.find((m) => isEligible(m) && passOver?.(m) !== true);
}

/** The member for `node` in `members`, if listed. */
export function findNode(members: readonly Member[], node: UniqueAddress): Member | undefined {
  return members.find((m) => uniqueAddressEquals(m.uniqueAddress, node));
}
