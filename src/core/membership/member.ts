/**
 * A cluster member: one node incarnation with its status, roles, app version, data
 * center and up-number (its age rank, assigned by the leader when it first becomes up).
 *
 * Invariants: identity is the UniqueAddress alone (status, roles, etc. do not take part);
 * roles are sorted and unique; status changes go through `withStatus`, which enforces
 * the transition table in member-transitions.ts. Members are frozen plain data.
 *
 * Why the data center is a field and not a "dc-" role (as in Akka/Pekko): it is always
 * present, has one value, and must never be confused with an ordinary role.
 */
import { assert, fail } from "../../base/assert.js";
import type { MemberStatus } from "./member-status.js";
import { canTransition, IllegalMemberTransitionError } from "./member-transitions.js";
import {
  type UniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
} from "./unique-address.js";

/** Data center of a member that did not configure one. shardkit runs one DC by default. */
export const DEFAULT_DATA_CENTER = "default";

/** App version of a member that did not configure one (version zero). */
export const DEFAULT_APP_VERSION = "0.0.0";

/** upNumber of a member the leader has not yet moved to up ("no age yet"). */
export const UP_NUMBER_UNASSIGNED = 2_147_483_647;

/** A cluster member. Plain frozen data; use the functions of this module to change it. */
export interface Member {
  readonly uniqueAddress: UniqueAddress;
  readonly status: MemberStatus;
  /** Ordinary roles, sorted and unique. */
  readonly roles: readonly string[];
  /** The application version the node runs (compared with base/app-version). */
  readonly appVersion: string;
  readonly dataCenter: string;
  /** Age rank; lower is older. UP_NUMBER_UNASSIGNED until the member is first up. */
  readonly upNumber: number;
}

/** All fields of a member; optional ones take the defaults above. */
export interface MemberFields {
  readonly uniqueAddress: UniqueAddress;
  readonly status: MemberStatus;
  readonly roles?: Iterable<string>;
  readonly appVersion?: string;
  readonly dataCenter?: string;
  readonly upNumber?: number;
}

/**
 * A member with exactly these fields (roles normalised). For decoding and tests: it does
 * not check how the status was reached. New members start with `createMember`.
 */
export function memberFrom(fields: MemberFields): Member {
  const roles = [...new Set(fields.roles ?? [])].sort();
  const dataCenter = fields.dataCenter ?? DEFAULT_DATA_CENTER;
  const upNumber = fields.upNumber ?? UP_NUMBER_UNASSIGNED;
  assert(dataCenter !== "", "member data center must be non-empty");
  if (!Number.isSafeInteger(upNumber)) fail(`member upNumber must be an integer, got ${upNumber}`);
  return Object.freeze({
    uniqueAddress: fields.uniqueAddress,
    status: fields.status,
    roles: Object.freeze(roles),
    appVersion: fields.appVersion ?? DEFAULT_APP_VERSION,
    dataCenter,
    upNumber,
  });
}

/** A new member in status joining with no up-number yet. */
export function createMember(fields: Omit<MemberFields, "status" | "upNumber">): Member {
  return memberFrom({ ...fields, status: "joining", upNumber: UP_NUMBER_UNASSIGNED });
}

/**
 * The member with status `to`. Same status returns the member unchanged; an illegal
 * transition throws IllegalMemberTransitionError (a programmer error).
 */
export function withStatus(member: Member, to: MemberStatus): Member {
  if (member.status === to) return member;
  if (!canTransition(member.status, to))
    throw new IllegalMemberTransitionError(
      uniqueAddressToString(member.uniqueAddress),
      member.status,
      to,
    );
  return Object.freeze({ ...member, status: to });
}

/** The member moved to up with the given up-number (the leader's joining -> up action). */
export function withStatusUp(member: Member, upNumber: number): Member {
  if (!Number.isSafeInteger(upNumber)) fail(`upNumber must be an integer, got ${upNumber}`);
  return withStatus(Object.freeze({ ...member, upNumber }), "up");
}

/** True if the member has the ordinary role `role`. */
export function hasRole(member: Member, role: string): boolean {
  return member.roles.includes(role);
}

/** Identity: same node (address and uid), whatever the status. */
export function memberEquals(a: Member, b: Member): boolean {
  return uniqueAddressEquals(a.uniqueAddress, b.uniqueAddress);
}

/** The members other than the one with node `node` (identity, whatever its status). */
export function withoutMember(members: readonly Member[], node: UniqueAddress): Member[] {
  return members.filter((m) => !uniqueAddressEquals(m.uniqueAddress, node));
}

/** upNumber for "youngest" comparisons: an unassigned up-number counts as 0. */
export function effectiveUpNumber(member: Member): number {
  return member.upNumber === UP_NUMBER_UNASSIGNED ? 0 : member.upNumber;
}
