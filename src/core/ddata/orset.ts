/**
 * ORSet: observed-remove set with add-wins semantics, as a delta-CRDT (see causal.ts).
 * `add` issues a new dot for the element; `remove` removes the dots this replica has
 * seen, so an add concurrent with the remove (a dot the remover had not seen) survives.
 * The delta of an add is the element's new dot plus the dots it replaces; of a remove,
 * the removed dots; both are small whatever the size of the set.
 */

import { compareByKey } from "../../base/compare.js";
import {
  CausalContext,
  cleanupDotMap,
  type DotMap,
  dotMapNodes,
  dotsOf,
  emptyDotMap,
  joinDotMaps,
  pruneDotMap,
} from "./causal.js";
import { compareElements, type DDataElement, ReplicatedData, sameKind } from "./replicated-data.js";

const unit = (): null => null;

/** Observed-remove set (add wins over a concurrent remove). */
export class ORSet<T extends DDataElement = DDataElement> extends ReplicatedData {
  readonly kind = "orset" as const;
  private constructor(
    /** @internal */ readonly dots: DotMap<T, null>,
    private readonly _delta: ORSet<T> | undefined,
  ) {
    super();
  }

  static empty<T extends DDataElement = DDataElement>(): ORSet<T> {
    return new ORSet<T>(emptyDotMap(), undefined);
  }

  /** @internal */
  static fromDots<T extends DDataElement>(dots: DotMap<T, null>): ORSet<T> {
    return new ORSet(dots, undefined);
  }

  get elements(): ReadonlySet<T> {
    return new Set(this.dots.entries.keys());
  }

  has(e: T): boolean {
    return this.dots.entries.has(e);
  }

  get size(): number {
    return this.dots.entries.size;
  }

  /** Adds `e` on behalf of `node`. */
  add(node: string, e: T): ORSet<T> {
    const counter = this.dots.context.next(node);
    const old = dotsOf(this.dots.entries.get(e));
    const entries = new Map(this.dots.entries);
    entries.set(e, new Map([[node, { counter, payload: null }]]));
    const context = this.dots.context.withDots([[node, counter]]);
    const prev = this._delta?.dots;
    // The add's delta replaces e's entry of the pending delta (its dot covers the older ones).
    const dEntries = new Map(prev?.entries ?? []);
    dEntries.set(e, new Map([[node, { counter, payload: null }]]));
    const d: DotMap<T, null> = {
      entries: dEntries,
      context: (prev?.context ?? CausalContext.empty).withDots([...old, [node, counter]]),
    };
    return new ORSet({ entries, context }, new ORSet(d, undefined));
  }

  /** Removes `e` (the adds this replica has seen). */
  remove(_node: string, e: T): ORSet<T> {
    const dots = this.dots.entries.get(e);
    if (dots === undefined) return this;
    const entries = new Map(this.dots.entries);
    entries.delete(e);
    const d: DotMap<T, null> = {
      entries: new Map(),
      context: CausalContext.empty.withDots(dotsOf(dots)),
    };
    return new ORSet({ entries, context: this.dots.context }, this.withDelta(d));
  }

  /** Removes every element this replica has seen. */
  clear(_node: string): ORSet<T> {
    if (this.dots.entries.size === 0) return this;
    const all: [string, number][] = [];
    for (const dots of this.dots.entries.values()) all.push(...dotsOf(dots));
    const d: DotMap<T, null> = { entries: new Map(), context: CausalContext.empty.withDots(all) };
    return new ORSet({ entries: new Map(), context: this.dots.context }, this.withDelta(d));
  }

  private withDelta(d: DotMap<T, null>): ORSet<T> {
    const prev = this._delta;
    return new ORSet(prev === undefined ? d : joinDotMaps(prev.dots, d, unit), undefined);
  }

  override get delta(): ORSet<T> | undefined {
    return this._delta;
  }

  override resetDelta(): ORSet<T> {
    return this._delta === undefined ? this : new ORSet(this.dots, undefined);
  }

  override get supportsDeltas(): boolean {
    return true;
  }

  override merge(other: ReplicatedData): ORSet<T> {
    const that = sameKind(this, other);
    return new ORSet(joinDotMaps(this.dots, that.dots, unit), undefined);
  }

  override modifiedByNodes(): ReadonlySet<string> {
    return dotMapNodes(this.dots);
  }

  override prune(removed: string, into: string): ORSet<T> {
    return new ORSet(pruneDotMap(this.dots, removed, into, unit, unit), undefined);
  }

  override pruningCleanup(removed: string): ORSet<T> {
    return new ORSet(cleanupDotMap(this.dots, removed, unit), undefined);
  }

  /** [elements with their dots, context]. */
  toData(): [[T, [string, number][]][], ReturnType<CausalContext["toData"]>] {
    const elems = [...this.dots.entries]
      .map(([e, dots]): [T, [string, number][]] => [e, dotsOf(dots).sort(compareByKey)])
      .sort((a, b) => compareElements(a[0], b[0]));
    return [elems, this.dots.context.toData()];
  }
}
