/**
 * Vector clock: the version of the membership gossip (docs/cluster.md, "Gossip and convergence").
 *
 * A clock maps opaque node keys to positive counters; an absent key means 0. It is an
 * immutable value: every operation returns a new clock and never mutates its input.
 *
 * Invariants: `entries` is sorted by key (UTF-16 code unit order), keys are unique and
 * every counter is a positive safe integer. The representation is therefore canonical:
 * equal clocks are structurally equal, and no result depends on the order in which keys
 * were inserted (comparison walks the union of keys, never a positional zip).
 *
 * Why sorted entries instead of a Map or record: plain data that serialises as is,
 * linear-time merge and compare by walking two sorted lists, and no prototype-key
 * pitfalls for arbitrary node keys.
 */
import { fail } from "../../base/assert.js";
import { compareStrings } from "../../base/compare.js";
import { binarySearch } from "./sorted-array.js";

/** One clock entry: a node key and its counter (> 0). */
export type VectorClockEntry = readonly [node: string, counter: number];

/** An immutable vector clock. Build with `vectorClockOf`; never construct by hand. */
export interface VectorClock {
  /** Entries sorted by node key, unique keys, counters > 0. */
  readonly entries: readonly VectorClockEntry[];
}

/** Result of comparing two clocks (causal order). */
export const ClockOrdering = {
  /** Left happened before right: every counter <=, at least one <. */
  Before: "before",
  /** Left happened after right: every counter >=, at least one >. */
  After: "after",
  /** Identical clocks. */
  Same: "same",
  /** Neither dominates: concurrent histories that must be merged. */
  Concurrent: "concurrent",
} as const;

/** Result of comparing two clocks (causal order). */
export type ClockOrdering = (typeof ClockOrdering)[keyof typeof ClockOrdering];

/** The clock with no entries (every counter 0). */
export const emptyVectorClock: VectorClock = Object.freeze({ entries: Object.freeze([]) });

function byKey(entry: VectorClockEntry, key: string): number {
  return compareStrings(entry[0], key);
}

function freezeClock(entries: VectorClockEntry[]): VectorClock {
  return Object.freeze({ entries: Object.freeze(entries) });
}

/**
 * A clock from `{key: counter}` or `[key, counter]` pairs, in any order. Counters must be
 * positive safe integers (0 is accepted and means "absent"); duplicate keys are rejected.
 */
export function vectorClockOf(
  versions: Readonly<Record<string, number>> | Iterable<readonly [string, number]>,
): VectorClock {
  if (Array.isArray(versions)) {
    const sorted = clockOfSortedEntries(versions as readonly (readonly [string, number])[]);
    if (sorted !== undefined) return sorted;
  }
  const pairs: (readonly [string, number])[] =
    Symbol.iterator in versions
      ? [...(versions as Iterable<readonly [string, number]>)]
      : Object.entries(versions as Readonly<Record<string, number>>);
  const entries: VectorClockEntry[] = [];
  for (const [key, counter] of pairs) {
    if (!(Number.isSafeInteger(counter) && counter >= 0))
      fail(`invalid clock counter ${key}=${counter}`);
    if (counter > 0) entries.push(Object.freeze([key, counter] as const));
  }
  entries.sort((a, b) => compareStrings(a[0], b[0]));
  for (let i = 1; i < entries.length; i++) {
    if (entries[i - 1]?.[0] === entries[i]?.[0]) fail(`duplicate clock key ${entries[i]?.[0]}`);
  }
  return freezeClock(entries);
}

/**
 * The clock of `pairs` when they are already in clock order (keys strictly increasing)
 * with every counter a positive safe integer, else undefined (vectorClockOf sorts and
 * checks them then). A received clock is in that order as a rule, and checking it is one
 * comparison per entry instead of a sort. A frozen array of frozen pairs becomes the
 * clock's entries as it is.
 */
function clockOfSortedEntries(
  pairs: readonly (readonly [string, number])[],
): VectorClock | undefined {
  let shared = Object.isFrozen(pairs);
  let prev: string | undefined;
  for (let i = 0; i < pairs.length; i++) {
    const e = pairs[i] as readonly [string, number];
    const key = e[0];
    const counter = e[1];
    if (typeof key !== "string" || !(Number.isSafeInteger(counter) && counter > 0))
      return undefined;
    if (prev !== undefined && compareStrings(prev, key) >= 0) return undefined;
    if (shared && (e.length !== 2 || !Object.isFrozen(e))) shared = false;
    prev = key;
  }
  if (shared) return Object.freeze({ entries: pairs as readonly VectorClockEntry[] });
  const entries: VectorClockEntry[] = new Array(pairs.length);
  for (let i = 0; i < pairs.length; i++) {
    const e = pairs[i] as readonly [string, number];
    entries[i] = Object.freeze([e[0], e[1]] as const);
  }
  return freezeClock(entries);
}

/** The counter of `node` (0 when absent). */
export function clockCounter(clock: VectorClock, node: string): number {
  const i = binarySearch(clock.entries, node, byKey);
  return i >= 0 ? (clock.entries[i] as VectorClockEntry)[1] : 0;
}

/** True if the clock has an entry for `node`. */
export function clockHasNode(clock: VectorClock, node: string): boolean {
  return binarySearch(clock.entries, node, byKey) >= 0;
}

/** Number of entries. */
export function clockSize(clock: VectorClock): number {
  return clock.entries.length;
}

/** Node keys in sorted order. */
export function clockNodes(clock: VectorClock): string[] {
  return clock.entries.map((e) => e[0]);
}

/** The clock as a plain `{key: counter}` record (null prototype, keys in sorted order). */
export function clockToRecord(clock: VectorClock): Record<string, number> {
  const out: Record<string, number> = Object.create(null);
  for (const [key, counter] of clock.entries) out[key] = counter;
  return out;
}

/** A copy of `clock` with the counter of `node` increased by one (absent -> 1). */
export function incrementClock(clock: VectorClock, node: string): VectorClock {
  const i = binarySearch(clock.entries, node, byKey);
  const entries = clock.entries.slice();
  if (i >= 0) {
    const next = (entries[i] as VectorClockEntry)[1] + 1;
    if (!Number.isSafeInteger(next)) fail(`clock counter overflow for ${node}`);
    entries[i] = Object.freeze([node, next] as const);
  } else {
    entries.splice(-(i + 1), 0, Object.freeze([node, 1] as const));
  }
  return freezeClock(entries);
}

/** A copy of `clock` without the entry of `node`; the clock itself when absent. */
export function pruneClock(clock: VectorClock, node: string): VectorClock {
  const i = binarySearch(clock.entries, node, byKey);
  if (i < 0) return clock;
  const entries = clock.entries.slice();
  entries.splice(i, 1);
  return freezeClock(entries);
}

/** Pointwise maximum of two clocks (union of keys). Commutative, associative, idempotent. */
export function mergeClocks(a: VectorClock, b: VectorClock): VectorClock {
  const x = a.entries;
  const y = b.entries;
  const out: VectorClockEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    const ex = x[i];
    const ey = y[j];
    const c = ex === undefined ? 1 : ey === undefined ? -1 : compareStrings(ex[0], ey[0]);
    if (c < 0) {
      out.push(ex as VectorClockEntry);
      i++;
    } else if (c > 0) {
      out.push(ey as VectorClockEntry);
      j++;
    } else {
      out.push((ex as VectorClockEntry)[1] >= (ey as VectorClockEntry)[1] ? ex! : ey!);
      i++;
      j++;
    }
  }
  return freezeClock(out);
}

/**
 * Full causal comparison of `a` against `b` over the union of their keys (absent = 0).
 * Antisymmetric: compare(a, b) is Before exactly when compare(b, a) is After.
 */
export function compareClocks(a: VectorClock, b: VectorClock): ClockOrdering {
  const x = a.entries;
  const y = b.entries;
  if (x === y) return ClockOrdering.Same;
  let aGreater = false;
  let bGreater = false;
  let i = 0;
  let j = 0;
  while ((i < x.length || j < y.length) && !(aGreater && bGreater)) {
    const ex = x[i];
    const ey = y[j];
    // keys are mostly the same string objects (clock keys are canonical node strings)
    const c =
      ex === undefined
        ? 1
        : ey === undefined
          ? -1
          : ex[0] === ey[0]
            ? 0
            : compareStrings(ex[0], ey[0]);
    if (c < 0) {
      aGreater = true; // key only in a, counter > 0
      i++;
    } else if (c > 0) {
      bGreater = true;
      j++;
    } else {
      const ca = (ex as VectorClockEntry)[1];
      const cb = (ey as VectorClockEntry)[1];
      if (ca > cb) aGreater = true;
      else if (cb > ca) bGreater = true;
      i++;
      j++;
    }
  }
  if (aGreater && bGreater) return ClockOrdering.Concurrent;
  if (aGreater) return ClockOrdering.After;
  if (bGreater) return ClockOrdering.Before;
  return ClockOrdering.Same;
}

/**
 * True if `entries` (as received: any array of pairs) are exactly the entries of `clock`,
 * in its order: a received version that is this clock, found without building a clock.
 */
export function hasEntries(
  clock: VectorClock,
  entries: readonly (readonly [string, number])[],
): boolean {
  const own = clock.entries;
  if (own === entries) return true;
  if (own.length !== entries.length) return false;
  for (let i = 0; i < own.length; i++) {
    const a = own[i] as VectorClockEntry;
    const b = entries[i] as readonly [string, number];
    if (a[1] !== b[1] || a[0] !== b[0]) return false;
  }
  return true;
}

/** True if `a` happened strictly before `b`. */
export function isBefore(a: VectorClock, b: VectorClock): boolean {
  return compareClocks(a, b) === ClockOrdering.Before;
}

/** True if `a` happened strictly after `b`. */
export function isAfter(a: VectorClock, b: VectorClock): boolean {
  return compareClocks(a, b) === ClockOrdering.After;
}

/** True if `a` and `b` are the same version. */
export function isSame(a: VectorClock, b: VectorClock): boolean {
  return compareClocks(a, b) === ClockOrdering.Same;
}

/** True if neither clock dominates the other. */
export function isConcurrent(a: VectorClock, b: VectorClock): boolean {
  return compareClocks(a, b) === ClockOrdering.Concurrent;
}

/** True if `a` is the same as or after `b` (a dominates b). */
export function isSameOrAfter(a: VectorClock, b: VectorClock): boolean {
  const o = compareClocks(a, b);
  return o === ClockOrdering.Same || o === ClockOrdering.After;
}

/** A copy of `clock` without the entries of all `nodes`; the clock itself if none present. */
export function pruneClockNodes(clock: VectorClock, nodes: Iterable<string>): VectorClock {
  const gone = new Set(nodes);
  const entries = clock.entries.filter((e) => !gone.has(e[0]));
  return entries.length === clock.entries.length ? clock : freezeClock(entries);
}
