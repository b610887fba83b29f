/**
 * Comparators shared by the machines: one definition, tested on its own
 * (test/base/compare.test.ts), so that every sorted list, key order and wire order uses
 * exactly the same rule.
 */

/**
 * The order of two strings by UTF-16 code units (what `<` compares), as a sort
 * comparator: -1, 0 or 1. Unlike `localeCompare` it does not depend on the locale.
 */
export function compareStrings(a: string, b: string): -1 | 0 | 1 {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Order of `[key, ...values]` tuples by their string key (see {@link compareStrings}). */
export function compareByKey(
  a: readonly [string, ...unknown[]],
  b: readonly [string, ...unknown[]],
): -1 | 0 | 1 {
  return compareStrings(a[0], b[0]);
}
