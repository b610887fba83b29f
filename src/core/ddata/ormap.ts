/**
 * ORMap and the maps built on it (LWWMap, PNCounterMap, ORMultiMap), as delta-CRDTs.
 *
 * Keys behave like an ORSet (add-wins). Each dot of a key carries the value the update
 * that issued it produced; the key's value is the merge of the payloads of its live dots
 * (one per node that updated it concurrently). An update issues a new dot covering the
 * key's earlier dots, so its delta is that one key's new value, not the whole map. A
 * remove drops the key's dots; an update concurrent with the remove keeps the key, with the
 * value the updating replica had (as in Akka, contents from before the remove can stay).
 */

import { compareByKey } from "../../base/compare.js";
import {
  CausalContext,
  cleanupDotMap,
  type Dot,
  type DotMap,
  dotMapNodes,
  dotsOf,
  emptyDotMap,
  joinDotMaps,
} from "./causal.js";
import { PNCounter } from "./counters.js";
import { ORSet } from "./orset.js";
import {
  compareElements,
  type DDataElement,
  type DDataKind,
  ReplicatedData,
  sameKind,
} from "./replicated-data.js";
import { LWWRegister, type LwwClock } from "./simple.js";

const joinValues = <V extends ReplicatedData>(x: V, y: V): V => (x === y ? x : (x.merge(y) as V));

/** The core of every map type: keys with dots, each dot carrying a value. */
export class ORMapCore<K extends DDataElement, V extends ReplicatedData> {
  constructor(
    readonly dots: DotMap<K, V>,
    readonly delta: DotMap<K, V> | undefined,
  ) {}

  static empty<K extends DDataElement, V extends ReplicatedData>(): ORMapCore<K, V> {
    return new ORMapCore<K, V>(emptyDotMap(), undefined);
  }

  get(k: K): V | undefined {
    return mergedValue(this.dots.entries.get(k));
  }

  get size(): number {
    return this.dots.entries.size;
  }

  keys(): K[] {
    return [...this.dots.entries.keys()];
  }

  entries(): [K, V][] {
    return [...this.dots.entries].map(([k, d]) => [k, mergedValue(d) as V]);
  }

  update(node: string, k: K, initial: V, modify: (v: V) => V): ORMapCore<K, V> {
    const current = this.dots.entries.get(k);
    const next = modify(mergedValue(current) ?? initial).resetDelta() as V;
    return this.put(node, k, next);
  }

  put(node: string, k: K, value: V): ORMapCore<K, V> {
    const counter = this.dots.context.next(node);
    const old = dotsOf(this.dots.entries.get(k));
    const dot = new Map<string, Dot<V>>([[node, { counter, payload: value.resetDelta() as V }]]);
    const entries = new Map(this.dots.entries);
    entries.set(k, dot);
    const state: DotMap<K, V> = {
      entries,
      context: this.dots.context.withDots([[node, counter]]),
    };
    const d: DotMap<K, V> = {
      entries: new Map([[k, dot]]),
      context: CausalContext.empty.withDots([...old, [node, counter]]),
    };
    return new ORMapCore(state, this.addDelta(d));
  }

  remove(k: K): ORMapCore<K, V> {
    const dots = this.dots.entries.get(k);
    if (dots === undefined) return this;
    const entries = new Map(this.dots.entries);
    entries.delete(k);
    const d: DotMap<K, V> = {
      entries: new Map(),
      context: CausalContext.empty.withDots(dotsOf(dots)),
    };
    return new ORMapCore({ entries, context: this.dots.context }, this.addDelta(d));
  }

  private addDelta(d: DotMap<K, V>): DotMap<K, V> {
    return this.delta === undefined ? d : joinDotMaps(this.delta, d, joinValues);
  }

  resetDelta(): ORMapCore<K, V> {
    return this.delta === undefined ? this : new ORMapCore(this.dots, undefined);
  }

  deltaCore(): ORMapCore<K, V> | undefined {
    return this.delta === undefined ? undefined : new ORMapCore(this.delta, undefined);
  }

  merge(that: ORMapCore<K, V>): ORMapCore<K, V> {
    return new ORMapCore(joinDotMaps(this.dots, that.dots, joinValues), undefined);
  }

  nodes(): ReadonlySet<string> {
    const s = dotMapNodes(this.dots);
    for (const dots of this.dots.entries.values())
      for (const d of dots.values()) for (const n of d.payload.modifiedByNodes()) s.add(n);
    return s;
  }

  /**
   * A key that holds data of `removed` (a dot or inside a value) gets its merged value,
   * pruned, under one new dot of `into` that replaces all its dots. Pruning the merged
   * value (not each dot's payload apart) keeps the nested dots it issues unique.
   */
  prune(removed: string, into: string): ORMapCore<K, V> {
    let next = this.dots.context.next(into);
    const added: [string, number][] = [];
    const out = new Map<K, ReadonlyMap<string, Dot<V>>>();
    for (const [k, dots] of this.dots.entries) {
      let touched = dots.has(removed);
      if (!touched)
        for (const d of dots.values()) if (d.payload.modifiedByNodes().has(removed)) touched = true;
      if (!touched) {
        out.set(k, dots);
        continue;
      }
      const value = (mergedValue(dots) as V).prune(removed, into) as V;
      out.set(k, new Map([[into, { counter: next, payload: value }]]));
      added.push([into, next]);
      next++;
    }
    const context = this.dots.context.without(removed).withDots(added);
    return new ORMapCore({ entries: out, context }, undefined);
  }

  cleanup(removed: string): ORMapCore<K, V> {
    return new ORMapCore(
      cleanupDotMap(this.dots, removed, (v) => v.pruningCleanup(removed) as V),
      undefined,
    );
  }

  /** [[key, [[node, counter, value data]...]]...], context]. */
  toData(): [[K, [string, number, ReplicatedData][]][], ReturnType<CausalContext["toData"]>] {
    const entries = [...this.dots.entries]
      .map(([k, dots]): [K, [string, number, ReplicatedData][]] => [
        k,
        [...dots]
          .map(([n, d]): [string, number, ReplicatedData] => [n, d.counter, d.payload])
          .sort(compareByKey),
      ])
      .sort((a, b) => compareElements(a[0], b[0]));
    return [entries, this.dots.context.toData()];
  }
}

function mergedValue<V extends ReplicatedData>(
  dots: ReadonlyMap<string, Dot<V>> | undefined,
): V | undefined {
  if (dots === undefined) return undefined;
  let v: V | undefined;
  for (const d of dots.values()) v = v === undefined ? d.payload : joinValues(v, d.payload);
  return v;
}

/** Shared plumbing of the map types: each wraps an ORMapCore. */
abstract class MapBase<K extends DDataElement, V extends ReplicatedData> extends ReplicatedData {
  constructor(/** @internal */ readonly core: ORMapCore<K, V>) {
    super();
  }
  protected abstract wrap(core: ORMapCore<K, V>): this;

  get size(): number {
    return this.core.size;
  }
  keys(): K[] {
    return this.core.keys();
  }
  has(k: K): boolean {
    return this.core.dots.entries.has(k);
  }
  override get delta(): this | undefined {
    const d = this.core.deltaCore();
    return d === undefined ? undefined : this.wrap(d);
  }
  override resetDelta(): this {
    return this.core.delta === undefined ? this : this.wrap(this.core.resetDelta());
  }
  override get supportsDeltas(): boolean {
    return true;
  }
  override merge(other: ReplicatedData): this {
    const that = sameKind(this, other);
    return this.wrap(this.core.merge(that.core));
  }
  override modifiedByNodes(): ReadonlySet<string> {
    return this.core.nodes();
  }
  override prune(removed: string, into: string): this {
    return this.wrap(this.core.prune(removed, into));
  }
  override pruningCleanup(removed: string): this {
    return this.wrap(this.core.cleanup(removed));
  }
  toData(): unknown {
    const [entries, ctx] = this.core.toData();
    return [entries.map(([k, ds]) => [k, ds.map(([n, c, v]) => [n, c, v.kind, v.toData()])]), ctx];
  }
}

/** Map from keys to CRDT values (of one type per map). */
export class ORMap<
  K extends DDataElement = string,
  V extends ReplicatedData = ReplicatedData,
> extends MapBase<K, V> {
  readonly kind: DDataKind = "ormap";
  static empty<K extends DDataElement, V extends ReplicatedData>(): ORMap<K, V> {
    return new ORMap<K, V>(ORMapCore.empty());
  }
  protected wrap(core: ORMapCore<K, V>): this {
    return new ORMap(core) as this;
  }
  get(k: K): V | undefined {
    return this.core.get(k);
  }
  entries(): [K, V][] {
    return this.core.entries();
  }
  /** Sets `k` to `modify(current value, or initial)` on behalf of `node`. */
  update(node: string, k: K, initial: V, modify: (v: V) => V): ORMap<K, V> {
    return this.wrap(this.core.update(node, k, initial, modify));
  }
  /** Replaces the value of `k` (concurrent updates still merge into it). */
  put(node: string, k: K, value: V): ORMap<K, V> {
    return this.wrap(this.core.put(node, k, value));
  }
  remove(_node: string, k: K): ORMap<K, V> {
    return this.wrap(this.core.remove(k));
  }
}

/** Map of last-writer-wins registers. */
export class LWWMap<K extends DDataElement = string, T = unknown> extends MapBase<
  K,
  LWWRegister<T>
> {
  readonly kind: DDataKind = "lwwmap";
  static empty<K extends DDataElement, T>(): LWWMap<K, T> {
    return new LWWMap<K, T>(ORMapCore.empty());
  }
  protected wrap(core: ORMapCore<K, LWWRegister<T>>): this {
    return new LWWMap(core) as this;
  }
  get(k: K): T | undefined {
    return this.core.get(k)?.value;
  }
  entries(): [K, T][] {
    return this.core.entries().map(([k, r]) => [k, r.value]);
  }
  put(node: string, k: K, value: T, clock?: LwwClock<T>): LWWMap<K, T> {
    const current = this.core.get(k);
    const reg =
      current === undefined
        ? LWWRegister.create(node, value, clock)
        : current.set(node, value, clock);
    return this.wrap(this.core.put(node, k, reg));
  }
  remove(_node: string, k: K): LWWMap<K, T> {
    return this.wrap(this.core.remove(k));
  }
}

/** Map of PNCounters. */
export class PNCounterMap<K extends DDataElement = string> extends MapBase<K, PNCounter> {
  readonly kind: DDataKind = "pncmap";
  static empty<K extends DDataElement>(): PNCounterMap<K> {
    return new PNCounterMap<K>(ORMapCore.empty());
  }
  protected wrap(core: ORMapCore<K, PNCounter>): this {
    return new PNCounterMap(core) as this;
  }
  get(k: K): number | undefined {
    return this.core.get(k)?.value;
  }
  entries(): [K, number][] {
    return this.core.entries().map(([k, c]) => [k, c.value]);
  }
  increment(node: string, k: K, n = 1): PNCounterMap<K> {
    return this.wrap(this.core.update(node, k, PNCounter.empty, (c) => c.increment(node, n)));
  }
  decrement(node: string, k: K, n = 1): PNCounterMap<K> {
    return this.increment(node, k, -n);
  }
  remove(_node: string, k: K): PNCounterMap<K> {
    return this.wrap(this.core.remove(k));
  }
}

/** Map of ORSets (a multimap). A key whose set becomes empty is removed. */
export class ORMultiMap<
  K extends DDataElement = string,
  T extends DDataElement = string,
> extends MapBase<K, ORSet<T>> {
  readonly kind: DDataKind = "ormultimap";
  static empty<K extends DDataElement, T extends DDataElement>(): ORMultiMap<K, T> {
    return new ORMultiMap<K, T>(ORMapCore.empty());
  }
  protected wrap(core: ORMapCore<K, ORSet<T>>): this {
    return new ORMultiMap(core) as this;
  }
  get(k: K): ReadonlySet<T> | undefined {
    return this.core.get(k)?.elements;
  }
  entries(): [K, ReadonlySet<T>][] {
    return this.core.entries().map(([k, s]) => [k, s.elements]);
  }
  addBinding(node: string, k: K, v: T): ORMultiMap<K, T> {
    return this.wrap(this.core.update(node, k, ORSet.empty<T>(), (s) => s.add(node, v)));
  }
  removeBinding(node: string, k: K, v: T): ORMultiMap<K, T> {
    const s = this.core.get(k);
    if (s === undefined || !s.has(v)) return this;
    const next = s.remove(node, v);
    if (next.size === 0) return this.wrap(this.core.remove(k));
    return this.wrap(this.core.put(node, k, next));
  }
  remove(_node: string, k: K): ORMultiMap<K, T> {
    return this.wrap(this.core.remove(k));
  }
}
