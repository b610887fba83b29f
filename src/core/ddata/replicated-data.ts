/**
 * Common contract of the CRDTs of Distributed Data (docs/distributed-data.md): immutable
 * values with a `merge` that is commutative, associative and idempotent, so replicas that
 * exchange states in any order, any number of times, converge.
 *
 * Identities of the nodes that change a value are opaque strings (the replicator uses the
 * member's unique address). Types whose state grows per node support pruning: when a
 * member is removed, one replica `prune`s its data into its own (`collapseInto`), and every
 * replica calls `pruningCleanup` after each merge from then on, so a stale copy that still
 * carries the removed member's data cannot bring it back.
 *
 * Delta-CRDTs (GCounter, PNCounter, GSet, ORSet and the ORMap family) record in `delta` the
 * part of the state their own updates changed since `resetDelta`; a delta is a value of
 * the same type, and merging it has the same effect as merging the full state it came
 * from. LWWRegister and Flag are small and have no delta (the replicator sends them whole).
 */

import { compareByKey } from "../../base/compare.js";
import { ShardkitError } from "../../base/errors.js";

/** The CRDT types, as they appear on the wire. */
export type DDataKind =
  | "gcounter"
  | "pncounter"
  | "gset"
  | "orset"
  | "lwwreg"
  | "flag"
  | "ormap"
  | "lwwmap"
  | "pncmap"
  | "ormultimap";

/** Base class of every CRDT value. Values are immutable: operations return new values. */
export abstract class ReplicatedData {
  abstract readonly kind: DDataKind;
  /** The least upper bound of this and `that` (same type); the result carries no delta. */
  abstract merge(that: ReplicatedData): ReplicatedData;
  /** Plain, canonical (sorted) data: equal values give deeply equal data. */
  abstract toData(): unknown;
  /** What updates since the last `resetDelta` changed (undefined: nothing, or no deltas). */
  get delta(): ReplicatedData | undefined {
    return undefined;
  }
  /** This value without its recorded delta. */
  resetDelta(): ReplicatedData {
    return this;
  }
  /** True if the type propagates deltas. */
  get supportsDeltas(): boolean {
    return false;
  }
  /** Nodes whose data this value holds (candidates for pruning). */
  modifiedByNodes(): ReadonlySet<string> {
    return EMPTY_NODES;
  }
  /** Moves the data owned by `removedNode` into `collapseInto`'s. */
  prune(_removedNode: string, _collapseInto: string): ReplicatedData {
    return this;
  }
  /** Drops whatever data `removedNode` still owns (after it was pruned). */
  pruningCleanup(_removedNode: string): ReplicatedData {
    return this;
  }
}

const EMPTY_NODES: ReadonlySet<string> = new Set();

/** An operation a CRDT cannot perform (negative increment, value out of range, ...). */
export class InvalidDDataOperationError extends ShardkitError {
  constructor(kind: string, reason: string) {
    super("DDATA_INVALID_OPERATION", `invalid ${kind} operation: ${reason}`, { kind, reason });
  }
}

/** Two values of different types were merged (a key used with two types). */
export class DDataTypeMismatchError extends ShardkitError {
  constructor(expected: string, got: string) {
    super("DDATA_TYPE_MISMATCH", `cannot merge a ${got} into a ${expected}`, { expected, got });
  }
}

/** Checks that `that` is the same type as `self` (merge of a key used with two types). */
export function sameKind<T extends ReplicatedData>(self: T, that: ReplicatedData): T {
  if (that.kind !== self.kind) throw new DDataTypeMismatchError(self.kind, that.kind);
  return that as T;
}

/** Sorted [key, value] pairs of a map with string keys (canonical data). */
export function sortedEntries<V>(m: ReadonlyMap<string, V>): [string, V][] {
  return [...m.entries()].sort(compareByKey);
}

/** Elements of sets and keys of maps: primitives, compared with `===` / SameValueZero. */
export type DDataElement = string | number | boolean;

/** Total order on elements, for canonical data. */
export function compareElements(a: DDataElement, b: DDataElement): number {
  const ta = typeof a;
  const tb = typeof b;
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** True if `v` can be an element or a map key. */
export function isDDataElement(v: unknown): v is DDataElement {
  return (
    typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))
  );
}
