/**
 * Reachability table: what each observer's failure detector says about each subject
 * (docs/cluster.md, "Failure detection": unreachable is a flag beside the
 * member status, not a status).
 *
 * Every observer owns its rows: only the observer itself changes them, and each change
 * bumps that observer's version. Merging therefore takes, per observer, the complete
 * row set of the side with the higher observer version; no row-level conflict exists.
 * By default everything is reachable, so an observer that sees all its subjects as
 * reachable again keeps no rows at all, and a healthy cluster has an empty table.
 * Terminated (the subject was quarantined) is sticky: it never changes back.
 *
 * Aggregate status of a subject: terminated if any observer says terminated, else
 * unreachable if any says unreachable, else reachable.
 *
 * Invariants: `records` sorted by (observer, subject) with at most one row per pair;
 * `versions` sorted by observer, versions > 0; every observer with rows has a version.
 */
import { assert, fail } from "../../base/assert.js";
import { binarySearch, isStrictlySorted, sameElements, sortedUnique } from "./sorted-array.js";
import {
  compareUniqueAddresses,
  type UniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
} from "./unique-address.js";

/** What one observer says about one subject. */
export const ReachabilityStatus = {
  Reachable: "reachable",
  Unreachable: "unreachable",
  Terminated: "terminated",
} as const;

/** What one observer says about one subject. */
export type ReachabilityStatus = (typeof ReachabilityStatus)[keyof typeof ReachabilityStatus];

/** One observation; `version` is the observer's version when it was recorded. */
export interface ReachabilityRecord {
  readonly observer: UniqueAddress;
  readonly subject: UniqueAddress;
  readonly status: ReachabilityStatus;
  readonly version: number;
}

/** The version of one observer's row set. */
export interface ObserverVersion {
  readonly observer: UniqueAddress;
  readonly version: number;
}

/** An immutable reachability table. */
export interface Reachability {
  readonly records: readonly ReachabilityRecord[];
  readonly versions: readonly ObserverVersion[];
}

/** The empty table: everybody reachable. */
export const emptyReachability: Reachability = Object.freeze({
  records: Object.freeze([]),
  versions: Object.freeze([]),
});

type Pair = Pick<ReachabilityRecord, "observer" | "subject">;

function compareRecords(a: Pair, b: Pair): number {
  return (
    compareUniqueAddresses(a.observer, b.observer) || compareUniqueAddresses(a.subject, b.subject)
  );
}

function compareVersions(a: ObserverVersion, b: ObserverVersion): number {
  return compareUniqueAddresses(a.observer, b.observer);
}

function freezeTable(records: ReachabilityRecord[], versions: ObserverVersion[]): Reachability {
  return Object.freeze({ records: Object.freeze(records), versions: Object.freeze(versions) });
}

/**
 * A validated table from decoded rows and versions (any order; frozen rows are taken as
 * they are). Rows and versions received in table order (as a table is sent) are checked
 * in one pass each instead of being sorted.
 */
export function reachabilityOf(
  records: readonly ReachabilityRecord[],
  versions: readonly ObserverVersion[],
): Reachability {
  const rs = records.map(frozenRow);
  const vs = versions.map(frozenRow);
  if (!isStrictlySorted(rs, compareRecords)) {
    rs.sort(compareRecords);
    assert(isStrictlySorted(rs, compareRecords), "duplicate reachability record");
  }
  if (!isStrictlySorted(vs, compareVersions)) {
    vs.sort(compareVersions);
    assert(isStrictlySorted(vs, compareVersions), "duplicate reachability observer version");
  }
  for (const v of vs) assert(Number.isSafeInteger(v.version) && v.version > 0, "bad version");
  // both sorted by observer: one walk finds each row's observer version
  let j = 0;
  for (const r of rs) {
    while (
      j < vs.length &&
      compareUniqueAddresses((vs[j] as ObserverVersion).observer, r.observer) < 0
    )
      j++;
    const ov = vs[j];
    const v =
      ov !== undefined && compareUniqueAddresses(ov.observer, r.observer) === 0 ? ov.version : 0;
    if (!(r.version <= v)) fail(`record version above observer version: ${describeRecord(r)}`);
  }
  return freezeTable(rs, vs);
}

function frozenRow<T extends object>(row: T): T {
  return Object.isFrozen(row) ? row : Object.freeze({ ...row });
}

function describeRecord(r: ReachabilityRecord): string {
  return `${uniqueAddressToString(r.observer)} -> ${uniqueAddressToString(r.subject)}`;
}

/** The observer's current version (0 if it never recorded anything). */
export function observerVersion(r: Reachability, observer: UniqueAddress): number {
  const i = binarySearch(r.versions, observer, (v, o) => compareUniqueAddresses(v.observer, o));
  return i >= 0 ? (r.versions[i] as ObserverVersion).version : 0;
}

/**
 * The rows recorded by `observer`, sorted by subject: a contiguous range of the table
 * (sorted by observer, then subject), found by binary search instead of a walk over all
 * rows (every member's reaper tick asks for its own rows; after a crash wave a table has
 * a row per observer and unreachable member).
 */
export function recordsFrom(r: Reachability, observer: UniqueAddress): ReachabilityRecord[] {
  const records = r.records;
  // the first row whose observer is not below `observer` (a comparison that never says
  // "equal" makes binarySearch return that insertion point)
  const low =
    -binarySearch(records, observer, (rec: ReachabilityRecord, o: UniqueAddress) =>
      compareUniqueAddresses(rec.observer, o) < 0 ? -1 : 1,
    ) - 1;
  let end = low;
  while (
    end < records.length &&
    uniqueAddressEquals((records[end] as ReachabilityRecord).observer, observer)
  )
    end++;
  return records.slice(low, end);
}

function withObserverRows(
  r: Reachability,
  observer: UniqueAddress,
  rows: readonly ReachabilityRecord[],
  version: number,
): Reachability {
  const records = r.records.filter((rec) => !uniqueAddressEquals(rec.observer, observer));
  records.push(...rows);
  records.sort(compareRecords);
  const versions = r.versions.filter((v) => !uniqueAddressEquals(v.observer, observer));
  versions.push(Object.freeze({ observer, version }));
  versions.sort(compareVersions);
  return freezeTable(records, versions);
}

function change(
  r: Reachability,
  observer: UniqueAddress,
  subject: UniqueAddress,
  status: ReachabilityStatus,
): Reachability {
  const rows = recordsFrom(r, observer);
  if (rows.length === 0 && status === ReachabilityStatus.Reachable) return r;
  const old = rows.find((rec) => uniqueAddressEquals(rec.subject, subject));
  if (old && (old.status === ReachabilityStatus.Terminated || old.status === status)) return r;
  const version = observerVersion(r, observer) + 1;
  const othersReachable = rows.every(
    (rec) => rec === old || rec.status === ReachabilityStatus.Reachable,
  );
  if (status === ReachabilityStatus.Reachable && othersReachable)
    return withObserverRows(r, observer, [], version); // all reachable again: keep no rows
  const record = Object.freeze({ observer, subject, status, version });
  const kept = rows.filter((rec) => rec !== old);
  return withObserverRows(r, observer, [...kept, record], version);
}

/** `observer` now sees `subject` as unreachable. */
export function markUnreachable(
  r: Reachability,
  observer: UniqueAddress,
  subject: UniqueAddress,
): Reachability {
  return change(r, observer, subject, ReachabilityStatus.Unreachable);
}

/** `observer` now sees `subject` as reachable (no-op if it never said otherwise). */
export function markReachable(
  r: Reachability,
  observer: UniqueAddress,
  subject: UniqueAddress,
): Reachability {
  return change(r, observer, subject, ReachabilityStatus.Reachable);
}

/** `observer` has quarantined `subject`; sticky. */
export function markTerminated(
  r: Reachability,
  observer: UniqueAddress,
  subject: UniqueAddress,
): Reachability {
  return change(r, observer, subject, ReachabilityStatus.Terminated);
}

/** What `observer` says about `subject` (reachable when it has no row). */
export function pairStatus(
  r: Reachability,
  observer: UniqueAddress,
  subject: UniqueAddress,
): ReachabilityStatus {
  const i = binarySearch<ReachabilityRecord, Pair>(
    r.records,
    { observer, subject },
    compareRecords,
  );
  return i >= 0 ? (r.records[i] as ReachabilityRecord).status : ReachabilityStatus.Reachable;
}

/** Aggregate status of `subject` over all observers. */
export function subjectStatus(r: Reachability, subject: UniqueAddress): ReachabilityStatus {
  let result: ReachabilityStatus = ReachabilityStatus.Reachable;
  for (const rec of r.records) {
    if (!uniqueAddressEquals(rec.subject, subject)) continue;
    if (rec.status === ReachabilityStatus.Terminated) return ReachabilityStatus.Terminated;
    if (rec.status === ReachabilityStatus.Unreachable) result = ReachabilityStatus.Unreachable;
  }
  return result;
}

/** True if no observer has recorded anything (the healthy state). */
export function isAllReachable(r: Reachability): boolean {
  return r.records.length === 0;
}

/** Aggregate: true if no observer says `subject` is unreachable or terminated. */
export function isReachable(r: Reachability, subject: UniqueAddress): boolean {
  return subjectStatus(r, subject) === ReachabilityStatus.Reachable;
}

/** Pairwise: true if `observer` says `subject` is reachable. */
export function isReachableBy(
  r: Reachability,
  observer: UniqueAddress,
  subject: UniqueAddress,
): boolean {
  return pairStatus(r, observer, subject) === ReachabilityStatus.Reachable;
}

function subjectsWith(r: Reachability, statuses: readonly ReachabilityStatus[]): UniqueAddress[] {
  // distinct first (a crashed node has a row per observer: after a failure wave about ten
  // rows per subject), then only the distinct subjects sorted
  // by object first (rows of one subject share its node object), then by node string
  const objects = new Set<UniqueAddress>();
  const records = r.records;
  for (let i = 0; i < records.length; i++) {
    const rec = records[i] as ReachabilityRecord;
    if (statuses.includes(rec.status)) objects.add(rec.subject);
  }
  const distinct = new Map<string, UniqueAddress>();
  objects.forEach((u) => {
    const k = uniqueAddressToString(u);
    if (!distinct.has(k)) distinct.set(k, u);
  });
  const out: UniqueAddress[] = [];
  distinct.forEach((u) => {
    out.push(u);
  });
  return out.sort(compareUniqueAddresses);
}

/**
 * The aggregate queries per table: every tick and every received gossip asks them of a
 * table that usually did not change (tables are immutable; the WeakMaps keep none alive).
 */
const unreachableMemo = new WeakMap<Reachability, readonly UniqueAddress[]>();
const unreachableOrTerminatedMemo = new WeakMap<Reachability, readonly UniqueAddress[]>();
const NO_NODES: readonly UniqueAddress[] = Object.freeze([]);

/** Subjects some observer says are unreachable, excluding terminated ones (sorted; frozen). */
export function allUnreachable(r: Reachability): readonly UniqueAddress[] {
  if (r.records.length === 0) return NO_NODES;
  let out = unreachableMemo.get(r);
  if (out === undefined) {
    const terminated = new Set(subjectsWith(r, ["terminated"]).map(uniqueAddressToString));
    out = Object.freeze(
      subjectsWith(r, ["unreachable"]).filter((s) => !terminated.has(uniqueAddressToString(s))),
    );
    unreachableMemo.set(r, out);
  }
  return out;
}

/** Subjects some observer says are unreachable or terminated (sorted; frozen). */
export function allUnreachableOrTerminated(r: Reachability): readonly UniqueAddress[] {
  if (r.records.length === 0) return NO_NODES;
  let out = unreachableOrTerminatedMemo.get(r);
  if (out === undefined) {
    out = Object.freeze(subjectsWith(r, ["unreachable", "terminated"]));
    unreachableOrTerminatedMemo.set(r, out);
  }
  return out;
}

const unreachableOrTerminatedKeysMemo = new WeakMap<Reachability, ReadonlySet<string>>();

/**
 * True if some observer says `subject` is unreachable or terminated (the aggregate of
 * allUnreachableOrTerminated, by a set kept per table: O(1) per question).
 */
export function isUnreachableOrTerminated(r: Reachability, subject: UniqueAddress): boolean {
  if (r.records.length === 0) return false;
  let keys = unreachableOrTerminatedKeysMemo.get(r);
  if (keys === undefined) {
    keys = new Set(allUnreachableOrTerminated(r).map(uniqueAddressToString));
    unreachableOrTerminatedKeysMemo.set(r, keys);
  }
  return keys.has(uniqueAddressToString(subject));
}

/** Subjects `observer` says are unreachable (not terminated), sorted. */
export function allUnreachableFrom(r: Reachability, observer: UniqueAddress): UniqueAddress[] {
  return recordsFrom(r, observer)
    .filter((rec) => rec.status === ReachabilityStatus.Unreachable)
    .map((rec) => rec.subject);
}

/** Observers that have rows (sorted). */
export function allObservers(r: Reachability): UniqueAddress[] {
  return sortedUnique(
    r.records.map((rec) => rec.observer),
    compareUniqueAddresses,
  );
}

/** For each unreachable subject, the observers that say so (subjects and observers sorted). */
export function observersGroupedByUnreachable(
  r: Reachability,
): { readonly subject: UniqueAddress; readonly observers: readonly UniqueAddress[] }[] {
  const bySubject = new Map<string, { subject: UniqueAddress; observers: UniqueAddress[] }>();
  for (const rec of r.records) {
    if (rec.status !== ReachabilityStatus.Unreachable) continue;
    const key = uniqueAddressToString(rec.subject);
    const group = bySubject.get(key) ?? { subject: rec.subject, observers: [] };
    group.observers.push(rec.observer);
    bySubject.set(key, group);
  }
  return [...bySubject.values()]
    .map((g) => ({
      subject: g.subject,
      observers: sortedUnique(g.observers, compareUniqueAddresses),
    }))
    .sort((a, b) => compareUniqueAddresses(a.subject, b.subject));
}

/** The table without any row or version involving `nodes` (as observer or subject). */
export function removeNodes(r: Reachability, nodes: Iterable<UniqueAddress>): Reachability {
  const gone = new Set([...nodes].map(uniqueAddressToString));
  if (gone.size === 0) return r;
  const has = (n: UniqueAddress) => gone.has(uniqueAddressToString(n));
  const records = r.records.filter((rec) => !has(rec.observer) && !has(rec.subject));
  const versions = r.versions.filter((v) => !has(v.observer));
  // nothing removed: the table itself (readers memoize by identity)
  if (records.length === r.records.length && versions.length === r.versions.length) return r;
  return freezeTable(records, versions);
}

/** The table without the rows and versions of the observers `nodes`. */
export function removeObservers(r: Reachability, nodes: Iterable<UniqueAddress>): Reachability {
  const gone = new Set([...nodes].map(uniqueAddressToString));
  if (gone.size === 0) return r;
  const has = (n: UniqueAddress) => gone.has(uniqueAddressToString(n));
  const records = r.records.filter((rec) => !has(rec.observer));
  const versions = r.versions.filter((v) => !has(v.observer));
  // nothing removed: the table itself (readers memoize by identity)
  if (records.length === r.records.length && versions.length === r.versions.length) return r;
  return freezeTable(records, versions);
}

/** The table with only the rows satisfying `keep` (versions unchanged). */
export function filterRecords(
  r: Reachability,
  keep: (record: ReachabilityRecord) => boolean,
): Reachability {
  return freezeTable(r.records.filter(keep), r.versions.slice());
}

/**
 * Merge of `left` and `right` restricted to the nodes in `allowed` (the merged members):
 * per allowed observer, the rows of the side with the higher observer version (right
 * on a tie; rows of one side only if that side's version is strictly higher), keeping
 * rows whose subject is allowed; observer version = max of both sides. A result equal to
 * one side is that side's table (the same object), so readers see by identity that
 * nothing changed. Only observers with a version can have rows (table invariant), so the
 * walk is over the two version lists, not over all allowed nodes.
 */
export function mergeReachability(
  left: Reachability,
  allowed: Iterable<UniqueAddress>,
  right: Reachability,
): Reachability {
  const allowedKeys = allowedKeysOf(allowed);
  const records: ReachabilityRecord[] = [];
  const versions: ObserverVersion[] = [];
  const lr = left.records;
  const rr = right.records;
  const lv = left.versions;
  const rv = right.versions;
  // tables are sorted by observer: each observer's rows are the next range of each side
  let li = 0;
  let ri = 0;
  let i = 0;
  let j = 0;
  while (i < lv.length || j < rv.length) {
    const x = lv[i];
    const y = rv[j];
    const c =
      x === undefined ? 1 : y === undefined ? -1 : compareUniqueAddresses(x.observer, y.observer);
    const observer = ((c <= 0 ? x : y) as ObserverVersion).observer;
    const v1 = c <= 0 ? (x as ObserverVersion).version : 0;
    const v2 = c >= 0 ? (y as ObserverVersion).version : 0;
    if (c <= 0) i++;
    if (c >= 0) j++;
    const [ls, le] = observerRange(lr, li, observer);
    const [rs, re] = observerRange(rr, ri, observer);
    const fromLeft = ls < le;
    const fromRight = rs < re;
    const lo = ls;
    const ro = rs;
    li = le;
    ri = re;
    if (!allowedKeys.has(uniqueAddressToString(observer))) continue;
    // the rows of the side with the higher version; of one side only if it is strictly higher
    const useLeft = fromLeft && v1 > v2;
    const useRight = !useLeft && fromRight && (fromLeft ? true : v2 > v1);
    const [rows, from, to] = useLeft ? [lr, lo, le] : useRight ? [rr, ro, re] : [lr, 0, 0];
    for (let k = from; k < to; k++) {
      const rec = rows[k] as ReachabilityRecord;
      if (allowedKeys.has(uniqueAddressToString(rec.subject))) records.push(rec);
    }
    // the higher side's version object (the same object keeps a table equal to that side's)
    versions.push(v1 >= v2 ? (x as ObserverVersion) : (y as ObserverVersion));
  }
  if (sameElements(records, left.records) && sameElements(versions, left.versions)) return left;
  if (sameElements(records, right.records) && sameElements(versions, right.versions)) return right;
  return freezeTable(records, versions);
}

/**
 * The range [start, end) of `observer`'s rows in `rows` (sorted by observer), searched
 * from `from` on: the rows of observers before it are skipped.
 */
function observerRange(
  rows: readonly ReachabilityRecord[],
  from: number,
  observer: UniqueAddress,
): readonly [number, number] {
  let start = from;
  while (
    start < rows.length &&
    compareUniqueAddresses((rows[start] as ReachabilityRecord).observer, observer) < 0
  )
    start++;
  let end = start;
  while (
    end < rows.length &&
    compareUniqueAddresses((rows[end] as ReachabilityRecord).observer, observer) === 0
  )
    end++;
  return [start, end];
}

/** The keys of the nodes allowed in a merge, kept per frozen array (a member list's nodes). */
const allowedKeySets = new WeakMap<readonly UniqueAddress[], ReadonlySet<string>>();

function allowedKeysOf(allowed: Iterable<UniqueAddress>): ReadonlySet<string> {
  const kept = Array.isArray(allowed) && Object.isFrozen(allowed);
  if (kept) {
    const hit = allowedKeySets.get(allowed as readonly UniqueAddress[]);
    if (hit !== undefined) return hit;
  }
  const keys = new Set<string>();
  for (const n of allowed) keys.add(uniqueAddressToString(n));
  if (kept) allowedKeySets.set(allowed as readonly UniqueAddress[], keys);
  return keys;
}
