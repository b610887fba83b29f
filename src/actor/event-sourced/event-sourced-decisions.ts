/**
 * The decisions of an event-sourced incarnation (event-sourced-behavior.ts), pure so
 * they are tested on their own: what happens to a command in each phase (handle, stash,
 * or fail on a full stash), when a PoisonPill stops the entity, what a command
 * handler's effect asks for, when a snapshot is due, and whether a failed append stops
 * the entity for good or fails it (to be restarted with backoff). The driver performs
 * the answers with the actor's stash, the journal and the snapshot store.
 */
import { FencedWriteError, JournalConflictError, type JournalEvent } from "../../ports/journal.js";
import type { Effect } from "./effect.js";

/**
 * Where an incarnation stands: replaying its history, ready for the next command, or
 * waiting for the append of an effect's events (the next command waits in the stash).
 */
export type EventSourcedPhase = "recovering" | "running" | "persisting";

/** What a command arriving in a phase does. */
export type CommandAdmission =
  | { readonly kind: "handle" }
  | { readonly kind: "stash" }
  /** The stash holds `limit` commands already: the entity fails (StashOverflowError). */
  | { readonly kind: "overflow"; readonly limit: number };

const HANDLE: CommandAdmission = { kind: "handle" };
const STASH: CommandAdmission = { kind: "stash" };

/**
 * A command is handled when the entity runs; while it recovers it waits in the stash
 * (at most `recoveryStashMax`), while an append is in flight too (at most the stash's
 * capacity).
 */
export function admitCommand(
  phase: EventSourcedPhase,
  stashed: number,
  recoveryStashMax: number,
  stashCapacity: number,
): CommandAdmission {
  if (phase === "running") return HANDLE;
  const limit = phase === "recovering" ? recoveryStashMax : stashCapacity;
  return stashed >= limit ? { kind: "overflow", limit } : STASH;
}

/** What a PoisonPill does. */
export type PoisonPillDecision =
  /** Stop now: nothing is in flight. */
  | "stop"
  /** Wait in the stash like a command (in mailbox order), stop when it comes back. */
  | "stash"
  /** The stash is full: stop at the next point where nothing is in flight. */
  | "stop-when-idle";

/**
 * A PoisonPill (the stop of a sharded entity at hand-off and passivation) stops at once
 * when the entity runs idle; while it recovers or an append is in flight it waits, so
 * the append ends and its replies go out first.
 */
export function poisonPillDecision(
  phase: EventSourcedPhase,
  stashFull: boolean,
): PoisonPillDecision {
  if (phase === "running") return "stop";
  return stashFull ? "stop-when-idle" : "stash";
}

/** What a command handler's effect asks for. */
export type EffectPlan =
  /** Published as UnhandledMessage. */
  | "unhandled"
  /** Set the command aside until the handler unstashes. */
  | "stash"
  /** No events: run the side effects at once. */
  | "side-effects"
  /** Append the events, apply them once durable, then run the side effects. */
  | "persist";

export function effectPlan<E, S>(effect: Effect<E, S>): EffectPlan {
  if (effect.kind === "unhandled") return "unhandled";
  if (effect.kind === "stash") return "stash";
  return effect.events.length === 0 ? "side-effects" : "persist";
}

/** True when the sequence number crossed a multiple of `every` going from `before` to `after`. */
export function snapshotDue(before: number, after: number, every: number | undefined): boolean {
  return every !== undefined && Math.floor(after / every) > Math.floor(before / every);
}

/** What a failed append does. */
export type PersistFailureVerdict =
  /**
   * Another incarnation wrote the same persistenceId ("conflict"), or another node holds
   * the shard's lease ("fenced"): stop for good, never restart, so as not to fight the
   * other writer.
   */
  | { readonly kind: "stop"; readonly reason: "conflict" | "fenced" }
  /** Anything else: fail (EventSourcedPersistError), restarted with backoff. */
  | { readonly kind: "fail" };

export function persistFailureVerdict(error: unknown): PersistFailureVerdict {
  if (error instanceof FencedWriteError) return { kind: "stop", reason: "fenced" };
  if (error instanceof JournalConflictError) return { kind: "stop", reason: "conflict" };
  return { kind: "fail" };
}

/** Encodes the events of one append, each with its tags and the same timestamp. */
export function journalEventsOf<E>(
  events: readonly E[],
  encode: (event: E) => { readonly serializerId: number; readonly bytes: Uint8Array },
  tagger: ((event: E) => readonly string[]) | undefined,
  timestampMs: number,
): JournalEvent[] {
  return events.map((e) => {
    const { serializerId, bytes } = encode(e);
    const tags = tagger?.(e);
    return tags === undefined
      ? { serializerId, bytes, timestampMs }
      : { serializerId, bytes, tags, timestampMs };
  });
}
