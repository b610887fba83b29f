/**
 * Lifecycle status of a cluster member (docs/cluster.md, "Members and their states"). A
 * member moves forward through these states and never back; "down" and "removed" are
 * terminal for an incarnation. Unreachability is a separate flag, not a status.
 *
 * Statuses are lower-case kebab strings so they read well in logs, JSON and the HTTP API.
 */

/** Every member status, roughly in lifecycle order (NOT the gossip-merge precedence). */
export const MEMBER_STATUSES = [
  "joining",
  "weakly-up",
  "up",
  "preparing-for-shutdown",
  "ready-for-shutdown",
  "leaving",
  "exiting",
  "down",
  "removed",
] as const;

/** Lifecycle status of a cluster member. */
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

/** True if `value` is one of the member statuses. */
export function isMemberStatus(value: unknown): value is MemberStatus {
  return typeof value === "string" && (MEMBER_STATUSES as readonly string[]).includes(value);
}
