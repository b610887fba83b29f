/**
 * The member status state machine: which status may follow which (docs/cluster.md, "Members and
 * their states", extended with weakly-up and the coordinated-shutdown
 * statuses preparing-for-shutdown / ready-for-shutdown).
 *
 * Invariants: removed is terminal; down leads only to removed (a downed incarnation
 * never comes back, docs/cluster.md); nothing returns to joining or weakly-up. Setting the
 * current status again is not a transition (it is a no-op, see `withStatus`).
 *
 * Why a table: the legal moves are data that tests enumerate exhaustively, and an
 * illegal move is a bug in the caller (leader actions, downing, the gossip driver), so it
 * fails fast as an assertion instead of silently corrupting the gossip.
 */
import { AssertionError } from "../../base/assert.js";
import type { MemberStatus } from "./member-status.js";

/**
 * Allowed status transitions, `from -> [to...]`:
 * - joining: the leader moves it up (or weakly-up while convergence is blocked); the
 *   node may leave before it was ever up; it may be downed; it may be removed directly.
 * - weakly-up: up once convergence is reached, or leave / down / remove like joining.
 * - up: leave, be downed, be removed, or start coordinated cluster shutdown.
 * - leaving: the leader moves it to exiting on convergence; it may be downed or removed.
 * - exiting: the leader removes it on convergence; an unreachable exiting node is downed.
 * - down: only removal (by the leader, or by a surviving side after a partition).
 * - removed: terminal (the member is gone; only a tombstone remains).
 * - preparing-for-shutdown: ready once local preparation completes, then leave; may be
 *   downed or removed at any point.
 * - ready-for-shutdown: leave, be downed or removed.
 */
export const ALLOWED_STATUS_TRANSITIONS: Readonly<Record<MemberStatus, readonly MemberStatus[]>> =
  Object.freeze({
    joining: ["weakly-up", "up", "leaving", "down", "removed"],
    "weakly-up": ["up", "leaving", "down", "removed"],
    up: ["leaving", "down", "removed", "preparing-for-shutdown"],
    leaving: ["exiting", "down", "removed"],
    exiting: ["removed", "down"],
    down: ["removed"],
    removed: [],
    "preparing-for-shutdown": ["ready-for-shutdown", "leaving", "down", "removed"],
    "ready-for-shutdown": ["leaving", "down", "removed"],
  });

/** True if a member in status `from` may move to status `to` (`from === to` is false). */
export function canTransition(from: MemberStatus, to: MemberStatus): boolean {
  return ALLOWED_STATUS_TRANSITIONS[from].includes(to);
}

/**
 * A caller tried an illegal member status transition. A programmer error (assertion),
 * carrying a stable `code` and the details so logs and tests need not parse the message.
 */
export class IllegalMemberTransitionError extends AssertionError {
  /** Stable identifier of this failure. */
  readonly code = "ILLEGAL_MEMBER_TRANSITION";
  /** The member's node in string form. */
  readonly node: string;
  readonly from: MemberStatus;
  readonly to: MemberStatus;

  constructor(node: string, from: MemberStatus, to: MemberStatus) {
    super(`illegal member status transition ${from} -> ${to} for ${node}`);
    this.name = "IllegalMemberTransitionError";
    this.node = node;
    this.from = from;
    this.to = to;
  }
}
