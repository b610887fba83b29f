/**
 * Sorted-array helpers shared by the membership model (internal, not re-exported).
 *
 * Members, seen sets, tombstones, reachability rows and vector-clock entries are kept as
 * arrays sorted by a total order. That makes every value canonical (two equal states are
 * structurally equal whatever the order of the updates that built them), keeps iteration
 * deterministic across nodes (docs/architecture.md, "The determinism boundary") and
 * serialises as plain data. Lookups are binary searches; updates copy the array, which is
 * the immutable-update cost we accept.
 */

/** Three-way comparison: negative, zero or positive. */
export type Compare<A, B = A> = (a: A, b: B) => number;

/**
 * Index of `key` in `items` (sorted by `compare`), or `-(insertionPoint + 1)` when absent.
 * `compare(item, key)` must be consistent with the order of `items`.
 */
export function binarySearch<T, K>(items: readonly T[], key: K, compare: Compare<T, K>): number {
  let low = 0;
  let high = items.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const c = compare(items[mid] as T, key);
    if (c < 0) low = mid + 1;
    else if (c > 0) high = mid - 1;
    else return mid;
  }
  return -(low + 1);
}

/** The element equal to `key`, or undefined. */
export function findSorted<T, K>(
  items: readonly T[],
  key: K,
  compare: Compare<T, K>,
): T | undefined {
  const i = binarySearch(items, key, compare);
  return i >= 0 ? items[i] : undefined;
}

/** A copy of `items` with `item` inserted in order, replacing an element equal to it. */
export function upsertSorted<T>(items: readonly T[], item: T, compare: Compare<T>): T[] {
  const i = binarySearch(items, item, compare);
  const copy = items.slice();
  if (i >= 0) copy[i] = item;
  else copy.splice(-(i + 1), 0, item);
  return copy;
}

/** A sorted, duplicate-free copy; of several equal elements the LAST one is kept. */
export function sortedUnique<T>(items: Iterable<T>, compare: Compare<T>): T[] {
  // Array.prototype.sort is stable (ECMAScript 2019): equal items keep their input order
  const sorted = [...items].sort(compare);
  const out: T[] = [];
  for (const item of sorted) {
    const last = out.length - 1;
    if (last >= 0 && compare(out[last] as T, item) === 0) out[last] = item;
    else out.push(item);
  }
  return out;
}

/** True if `items` is strictly increasing under `compare` (sorted and duplicate-free). */
export function isStrictlySorted<T>(items: readonly T[], compare: Compare<T>): boolean {
  for (let i = 1; i < items.length; i++) {
    if (compare(items[i - 1] as T, items[i] as T) >= 0) return false;
  }
  return true;
}

/** True if `x` and `y` hold the same elements (by identity) in the same order. */
export function sameElements<T>(x: readonly T[], y: readonly T[]): boolean {
  if (x === y) return true;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
