/**
 * The causal machinery shared by ORSet and the ORMap family (delta-state "dot stores").
 *
 * Every add/update creates a dot `(node, counter)`, unique because only `node` issues its
 * counters (a restarted member is a new node: its id includes the incarnation uid). A
 * CausalContext is the set of dots a replica has seen: a version vector (all counters up
 * to n) plus a "cloud" of dots seen out of order (deltas carry just a few dots). A
 * DotMap maps each key to its live dots, each with a payload; the causal context says
 * which dots were seen, so a dot seen but no longer live was removed.
 *
 * Join: a dot stays live if both sides have it, or one side has it and the other has not
 * seen it; contexts are united. This is a semilattice join, so deltas and full states can
 * be merged in any order and any number of times. Invariant (kept by every operation): a
 * key has at most one dot per node, because a node's new dot for a key is issued with a
 * context that covers the node's earlier dots for it.
 */

import { compareByKey } from "../../base/compare.js";
import type { DDataElement } from "./replicated-data.js";

/** Seen dots: a version vector plus out-of-order dots. Immutable; always compacted. */
export class CausalContext {
  private constructor(
    readonly vv: ReadonlyMap<string, number>,
    readonly cloud: ReadonlyMap<string, ReadonlySet<number>>,
  ) {}

  static readonly empty: CausalContext = new CausalContext(new Map(), new Map());

  static of(
    vv: Iterable<readonly [string, number]>,
    cloud: Iterable<readonly [string, Iterable<number>]> = [],
  ): CausalContext {
    const v = new Map(vv);
    const c = new Map<string, Set<number>>();
    for (const [n, cs] of cloud) c.set(n, new Set(cs));
    return compact(v, c);
  }

  contains(node: string, counter: number): boolean {
    if (counter <= (this.vv.get(node) ?? 0)) return true;
    return this.cloud.get(node)?.has(counter) ?? false;
  }

  /** The next counter for `node`. */
  next(node: string): number {
    let max = this.vv.get(node) ?? 0;
    const c = this.cloud.get(node);
    if (c !== undefined) for (const x of c) if (x > max) max = x;
    return max + 1;
  }

  get isEmpty(): boolean {
    return this.vv.size === 0 && this.cloud.size === 0;
  }

  /** This context plus the dots `dots`. */
  withDots(dots: Iterable<readonly [string, number]>): CausalContext {
    const v = new Map(this.vv);
    const c = copyCloud(this.cloud);
    for (const [n, x] of dots) if (x > (v.get(n) ?? 0)) addToCloud(c, n, x);
    return compact(v, c);
  }

  join(that: CausalContext): CausalContext {
    if (that.isEmpty) return this;
    if (this.isEmpty) return that;
    const v = new Map(this.vv);
    for (const [n, x] of that.vv) if (x > (v.get(n) ?? 0)) v.set(n, x);
    const c = copyCloud(this.cloud);
    for (const [n, xs] of that.cloud) for (const x of xs) addToCloud(c, n, x);
    return compact(v, c);
  }

  /** This context without any dot of `node`. */
  without(node: string): CausalContext {
    if (!this.vv.has(node) && !this.cloud.has(node)) return this;
    const v = new Map(this.vv);
    v.delete(node);
    const c = new Map(this.cloud);
    c.delete(node);
    return new CausalContext(v, c);
  }

  nodes(): string[] {
    return [...new Set([...this.vv.keys(), ...this.cloud.keys()])];
  }

  toData(): [[string, number][], [string, number[]][]] {
    const vv = [...this.vv].sort(compareByKey);
    const cloud = [...this.cloud]
      .map(([n, xs]): [string, number[]] => [n, [...xs].sort((a, b) => a - b)])
      .sort(compareByKey);
    return [vv, cloud];
  }
}

function copyCloud(c: ReadonlyMap<string, ReadonlySet<number>>): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const [n, xs] of c) out.set(n, new Set(xs));
  return out;
}

function addToCloud(c: Map<string, Set<number>>, n: string, x: number): void {
  let s = c.get(n);
  if (s === undefined) {
    s = new Set();
    c.set(n, s);
  }
  s.add(x);
}

function compact(v: Map<string, number>, c: Map<string, Set<number>>): CausalContext {
  for (const [n, xs] of c) {
    let top = v.get(n) ?? 0;
    while (xs.has(top + 1)) {
      top++;
      xs.delete(top);
    }
    for (const x of xs) if (x <= top) xs.delete(x);
    if (top > 0) v.set(n, top);
    if (xs.size === 0) c.delete(n);
  }
  return new (
    CausalContext as unknown as new (
      vv: Map<string, number>,
      cloud: Map<string, Set<number>>,
    ) => CausalContext
  )(v, c);
}

/** A live dot of a key: its counter and payload (node is the map key). */
export interface Dot<P> {
  readonly counter: number;
  readonly payload: P;
}

/** Live dots per key. */
export type DotEntries<K, P> = ReadonlyMap<K, ReadonlyMap<string, Dot<P>>>;

/** A dot store plus its causal context. */
export interface DotMap<K, P> {
  readonly entries: DotEntries<K, P>;
  readonly context: CausalContext;
}

export function emptyDotMap<K, P>(): DotMap<K, P> {
  return { entries: new Map(), context: CausalContext.empty };
}

/** Joins two dot maps; `joinPayload` joins the payloads of one dot seen on both sides. */
export function joinDotMaps<K extends DDataElement, P>(
  a: DotMap<K, P>,
  b: DotMap<K, P>,
  joinPayload: (x: P, y: P) => P,
): DotMap<K, P> {
  const out = new Map<K, Map<string, Dot<P>>>();
  const keys = new Set<K>([...a.entries.keys(), ...b.entries.keys()]);
  for (const k of keys) {
    const da = a.entries.get(k);
    const db = b.entries.get(k);
    const r = new Map<string, Dot<P>>();
    const keep = (n: string, d: Dot<P>) => {
      const cur = r.get(n);
      if (cur === undefined || d.counter > cur.counter) r.set(n, d);
    };
    if (da !== undefined)
      for (const [n, d] of da) {
        const other = db?.get(n);
        if (other !== undefined && other.counter === d.counter)
          r.set(n, { counter: d.counter, payload: joinPayload(d.payload, other.payload) });
        else if (!b.context.contains(n, d.counter)) keep(n, d);
      }
    if (db !== undefined)
      for (const [n, d] of db) {
        const other = da?.get(n);
        if (other !== undefined && other.counter === d.counter) continue;
        if (!a.context.contains(n, d.counter)) keep(n, d);
      }
    if (r.size > 0) out.set(k, r);
  }
  return { entries: out, context: a.context.join(b.context) };
}

/** All dots (node, counter) of one key. */
export function dotsOf<P>(dots: ReadonlyMap<string, Dot<P>> | undefined): [string, number][] {
  if (dots === undefined) return [];
  return [...dots].map(([n, d]) => [n, d.counter]);
}

/** Nodes that own a dot or appear in the context. */
export function dotMapNodes<K, P>(m: DotMap<K, P>): Set<string> {
  const s = new Set(m.context.nodes());
  for (const dots of m.entries.values()) for (const n of dots.keys()) s.add(n);
  return s;
}

/**
 * Pruning: every live dot of `removed` is re-issued as a new dot of `into` (same payload,
 * pruned with `prunePayload`), and `removed` leaves the context.
 */
export function pruneDotMap<K, P>(
  m: DotMap<K, P>,
  removed: string,
  into: string,
  prunePayload: (p: P) => P,
  joinPayload: (x: P, y: P) => P,
): DotMap<K, P> {
  let next = m.context.next(into);
  const added: [string, number][] = [];
  const out = new Map<K, Map<string, Dot<P>>>();
  for (const [k, dots] of m.entries) {
    const r = new Map<string, Dot<P>>();
    for (const [n, d] of dots)
      if (n !== removed) r.set(n, { counter: d.counter, payload: prunePayload(d.payload) });
    const rd = dots.get(removed);
    if (rd !== undefined) {
      const mine = r.get(into);
      const payload = prunePayload(rd.payload);
      // Replaces into's own dot for the key (if any) by the new one, keeping one dot per node.
      const merged = mine === undefined ? payload : joinPayload(mine.payload, payload);
      r.set(into, { counter: next, payload: merged });
      added.push([into, next]);
      next++;
    }
    if (r.size > 0) out.set(k, r);
  }
  return { entries: out, context: m.context.without(removed).withDots(added) };
}

/** Drops every dot of `removed`, live or seen. */
export function cleanupDotMap<K, P>(
  m: DotMap<K, P>,
  removed: string,
  cleanupPayload: (p: P) => P,
): DotMap<K, P> {
  const out = new Map<K, Map<string, Dot<P>>>();
  for (const [k, dots] of m.entries) {
    const r = new Map<string, Dot<P>>();
    for (const [n, d] of dots)
      if (n !== removed) r.set(n, { counter: d.counter, payload: cleanupPayload(d.payload) });
    if (r.size > 0) out.set(k, r);
  }
  return { entries: out, context: m.context.without(removed) };
}
