/**
 * Application versions of cluster members (`appVersion`, e.g. "1.0.1"), compared so that
 * shard allocation can prefer members running the newest release during a rolling update
 * and hold rebalancing while versions are mixed.
 *
 * Rules: the version is split on "."; segments are compared left to right and the first
 * difference decides. A segment is a leading decimal number followed by an optional
 * suffix ("10", "0-M1", "RC2"):
 * 1. the numbers compare numerically, at any length, ignoring leading zeros
 *    ("1.10" > "1.9", "1.01" == "1.1"); a segment with no leading digit sorts below
 *    every numbered one;
 * 2. with equal numbers, a segment without a suffix sorts above one with a suffix, so a
 *    pre-release is older than its release ("1.0.0-M1" < "1.0.0");
 * 3. otherwise the suffixes compare as plain strings (UTF-16 code unit order), so
 *    non-numeric segments compare as strings ("1.0.0-M1" < "1.0.0-M2").
 * A missing segment counts as "0" ("1.0" == "1.0.0"); the empty string is version zero.
 * Each segment maps to a tuple compared lexicographically, so the order is total and
 * transitive and therefore safe to sort with.
 */

const SEGMENT = /^([0-9]*)(.*)$/s;

interface SegmentKey {
  /** Leading number without leading zeros; "" when the segment has no leading digit. */
  readonly digits: string;
  readonly suffix: string;
}

function segmentKey(segment: string): SegmentKey {
  const m = SEGMENT.exec(segment);
  const rawDigits = m?.[1] ?? "";
  const suffix = m?.[2] ?? "";
  if (rawDigits === "") return { digits: "", suffix };
  const digits = rawDigits.replace(/^0+/, "");
  return { digits: digits === "" ? "0" : digits, suffix };
}

function compareStrings(a: string, b: string): -1 | 0 | 1 {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

function compareNumbers(a: string, b: string): -1 | 0 | 1 {
  if (a === b) return 0;
  if (a === "" || b === "") return a === "" ? -1 : 1;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return compareStrings(a, b);
}

function compareSegment(a: string, b: string): -1 | 0 | 1 {
  const x = segmentKey(a);
  const y = segmentKey(b);
  const byNumber = compareNumbers(x.digits, y.digits);
  if (byNumber !== 0) return byNumber;
  if (x.suffix === y.suffix) return 0;
  if (x.suffix === "" || y.suffix === "") return x.suffix === "" ? 1 : -1;
  return compareStrings(x.suffix, y.suffix);
}

/**
 * Compares two application versions (see the module comment for the rules).
 * @returns -1 if `a` is older than `b`, 1 if newer, 0 if they denote the same version.
 */
export function compareAppVersion(a: string, b: string): -1 | 0 | 1 {
  if (a === b) return 0; // the common case in a settled cluster: keep it cheap
  const xs = a === "" ? [] : a.split(".");
  const ys = b === "" ? [] : b.split(".");
  const n = Math.max(xs.length, ys.length);
  for (let i = 0; i < n; i++) {
    const c = compareSegment(xs[i] ?? "0", ys[i] ?? "0");
    if (c !== 0) return c;
  }
  return 0;
}
