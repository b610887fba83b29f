/**
 * Interning of decoded gossip parts (per process): the same node string decodes to the
 * same frozen UniqueAddress, an unchanged member, reachability row, observer version or
 * clock entry to the object decoded last time. Both gossip decoders (gossip-codec.ts's
 * general one and gossip-content-wire.ts's one-pass reader) intern through it, so they
 * build the same objects, and the membership machine sees by identity what did not change.
 */
import type { Member } from "../../core/membership/member.js";
import { memberFrom } from "../../core/membership/member.js";
import type { ObserverVersion, ReachabilityRecord } from "../../core/membership/reachability.js";
import {
  parseUniqueAddress,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../core/membership/unique-address.js";
import type { VectorClockEntry } from "../../core/membership/vector-clock.js";

/**
 * Bound of each interning table (nodes and members, per process): enough for the nodes
 * of several 1 000-member clusters and their tombstones in one simulator. When a table
 * is full its oldest entry goes; an evicted entry only costs a parse on its next use.
 */
export const GOSSIP_INTERN_ENTRIES_MAX = 16_384;

/** Bounded FIFO map: when full, the oldest entry is dropped. */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  constructor(readonly max: number) {}
  get(k: K): V | undefined {
    return this.map.get(k);
  }
  set(k: K, v: V): void {
    if (!this.map.has(k) && this.map.size >= this.max) {
      const oldest = this.map.keys().next();
      if (oldest.done !== true) this.map.delete(oldest.value);
    }
    this.map.set(k, v);
  }
  get size(): number {
    return this.map.size;
  }
  clear(): void {
    this.map.clear();
  }
}

/**
 * Interning of decoded nodes and members: the same string decodes to the same frozen
 * UniqueAddress, and a member whose fields did not change to the same Member object.
 * Both tables are bounded by `maxEntries` (oldest out first).
 */
export class GossipInterner {
  private readonly nodes: BoundedMap<string, UniqueAddress>;
  private readonly members: BoundedMap<string, Member>;

  private readonly rows = new WeakMap<UniqueAddress, WeakMap<UniqueAddress, ReachabilityRecord>>();
  private readonly versions = new WeakMap<UniqueAddress, ObserverVersion>();
  private readonly clockEntries: BoundedMap<string, VectorClockEntry>;

  constructor(maxEntries = GOSSIP_INTERN_ENTRIES_MAX) {
    this.nodes = new BoundedMap(maxEntries);
    this.members = new BoundedMap(maxEntries);
    this.clockEntries = new BoundedMap(maxEntries);
  }

  /** The node of `text` (parsed once; InvalidAddressError when malformed). */
  node(text: string): UniqueAddress {
    let n = this.nodes.get(text);
    if (n === undefined) {
      n = parseUniqueAddress(text);
      this.nodes.set(text, n);
    }
    return n;
  }

  /** The member of `node` with these fields (memberFrom validates a new one). */
  member(
    node: UniqueAddress,
    status: Member["status"],
    roles: readonly string[],
    appVersion: string,
    dataCenter: string,
    upNumber: number,
  ): Member {
    const k = uniqueAddressToString(node);
    const old = this.members.get(k);
    if (
      old !== undefined &&
      old.uniqueAddress === node &&
      old.status === status &&
      old.appVersion === appVersion &&
      old.dataCenter === dataCenter &&
      old.upNumber === upNumber &&
      sameStrings(old.roles, roles)
    )
      return old;
    const m = memberFrom({ uniqueAddress: node, status, roles, appVersion, dataCenter, upNumber });
    this.members.set(k, m);
    return m;
  }

  /**
   * The reachability row with these fields: the last one decoded for this observer and
   * subject when its status and version are the same. While a crash's observations
   * spread, every gossip carries hundreds of rows that the receiver's table mostly holds
   * already; shared rows are not allocated again, and a merged table keeps the objects
   * it already had (each node's table lives until its next change, long enough for
   * fresh rows to be promoted and collected by full collections). Weak by node, like
   * every table here: a node's entries go with it.
   */
  row(
    observer: UniqueAddress,
    subject: UniqueAddress,
    status: ReachabilityRecord["status"],
    version: number,
  ): ReachabilityRecord {
    let bySubject = this.rows.get(observer);
    if (bySubject === undefined) {
      bySubject = new WeakMap();
      this.rows.set(observer, bySubject);
    }
    const old = bySubject.get(subject);
    if (old !== undefined && old.status === status && old.version === version) return old;
    const r: ReachabilityRecord = Object.freeze({ observer, subject, status, version });
    bySubject.set(subject, r);
    return r;
  }

  /** The observer version with these fields (the last one of this observer, as `row`). */
  observerVersion(observer: UniqueAddress, version: number): ObserverVersion {
    const old = this.versions.get(observer);
    if (old !== undefined && old.version === version) return old;
    const v: ObserverVersion = Object.freeze({ observer, version });
    this.versions.set(observer, v);
    return v;
  }

  /** The clock entry of `key` with `counter` (the last one of this key, as `row`). */
  clockEntry(key: string, counter: number): VectorClockEntry {
    const old = this.clockEntries.get(key);
    if (old !== undefined && old[1] === counter) return old;
    const e: VectorClockEntry = Object.freeze([key, counter] as const);
    this.clockEntries.set(key, e);
    return e;
  }

  /** Entries held: nodes, members (each at most maxEntries). */
  get sizes(): { nodes: number; members: number } {
    return { nodes: this.nodes.size, members: this.members.size };
  }
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
