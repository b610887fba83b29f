/**
 * GCounter (grow-only) and PNCounter (increments and decrements) as delta-CRDTs.
 *
 * A GCounter is one non-negative safe integer per node; merge takes the maximum per node
 * and the value is the sum. Its delta holds only the entries its own increments changed.
 * A PNCounter is two GCounters (increments, decrements). Both prune by adding the removed
 * node's count to the collector's entry.
 */
import {
  InvalidDDataOperationError,
  ReplicatedData,
  sameKind,
  sortedEntries,
} from "./replicated-data.js";

function checkAmount(kind: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new InvalidDDataOperationError(
      kind,
      `amount must be a non-negative safe integer, got ${n}`,
    );
}

/** Grow-only counter. */
export class GCounter extends ReplicatedData {
  readonly kind = "gcounter" as const;
  private constructor(
    /** Count per node. */
    readonly state: ReadonlyMap<string, number>,
    private readonly _delta: GCounter | undefined,
  ) {
    super();
  }

  static readonly empty: GCounter = new GCounter(new Map(), undefined);

  static fromEntries(entries: Iterable<readonly [string, number]>): GCounter {
    const m = new Map<string, number>();
    for (const [k, v] of entries) {
      checkAmount("gcounter", v);
      m.set(k, v);
    }
    return new GCounter(m, undefined);
  }

  get value(): number {
    let sum = 0;
    for (const v of this.state.values()) sum += v;
    return sum;
  }

  /** Adds `n` (>= 0) on behalf of `node`. */
  increment(node: string, n = 1): GCounter {
    checkAmount("gcounter", n);
    if (n === 0) return this;
    const next = (this.state.get(node) ?? 0) + n;
    if (!Number.isSafeInteger(next))
      throw new InvalidDDataOperationError("gcounter", "count exceeds the safe integer range");
    const m = new Map(this.state);
    m.set(node, next);
    const d = this._delta === undefined ? new Map<string, number>() : new Map(this._delta.state);
    d.set(node, next);
    return new GCounter(m, new GCounter(d, undefined));
  }

  override get delta(): GCounter | undefined {
    return this._delta;
  }

  override resetDelta(): GCounter {
    return this._delta === undefined ? this : new GCounter(this.state, undefined);
  }

  override get supportsDeltas(): boolean {
    return true;
  }

  override merge(other: ReplicatedData): GCounter {
    const that = sameKind(this, other);
    let m: Map<string, number> | undefined;
    for (const [k, v] of that.state) {
      const mine = this.state.get(k);
      if (mine === undefined || v > mine) {
        m ??= new Map(this.state);
        m.set(k, v);
      }
    }
    if (m === undefined)
      return this._delta === undefined ? this : new GCounter(this.state, undefined);
    return new GCounter(m, undefined);
  }

  override modifiedByNodes(): ReadonlySet<string> {
    return new Set(this.state.keys());
  }

  override prune(removed: string, into: string): GCounter {
    const r = this.state.get(removed);
    if (r === undefined) return this;
    const m = new Map(this.state);
    m.delete(removed);
    m.set(into, (m.get(into) ?? 0) + r);
    return new GCounter(m, undefined);
  }

  override pruningCleanup(removed: string): GCounter {
    if (!this.state.has(removed)) return this;
    const m = new Map(this.state);
    m.delete(removed);
    return new GCounter(m, this._delta);
  }

  toData(): [string, number][] {
    return sortedEntries(this.state);
  }
}

/** Counter with increments and decrements. */
export class PNCounter extends ReplicatedData {
  readonly kind = "pncounter" as const;
  private constructor(
    readonly increments: GCounter,
    readonly decrements: GCounter,
  ) {
    super();
  }

  static readonly empty: PNCounter = new PNCounter(GCounter.empty, GCounter.empty);

  static of(increments: GCounter, decrements: GCounter): PNCounter {
    return new PNCounter(increments, decrements);
  }

  get value(): number {
    return this.increments.value - this.decrements.value;
  }

  /** Adds `n` (any safe integer; negative decrements) on behalf of `node`. */
  increment(node: string, n = 1): PNCounter {
    if (!Number.isSafeInteger(n))
      throw new InvalidDDataOperationError("pncounter", `amount must be a safe integer, got ${n}`);
    if (n >= 0) return new PNCounter(this.increments.increment(node, n), this.decrements);
    return new PNCounter(this.increments, this.decrements.increment(node, -n));
  }

  decrement(node: string, n = 1): PNCounter {
    return this.increment(node, -n);
  }

  override get delta(): PNCounter | undefined {
    const i = this.increments.delta;
    const d = this.decrements.delta;
    if (i === undefined && d === undefined) return undefined;
    return new PNCounter(i ?? GCounter.empty, d ?? GCounter.empty);
  }

  override resetDelta(): PNCounter {
    if (this.increments.delta === undefined && this.decrements.delta === undefined) return this;
    return new PNCounter(this.increments.resetDelta(), this.decrements.resetDelta());
  }

  override get supportsDeltas(): boolean {
    return true;
  }

  override merge(other: ReplicatedData): PNCounter {
    const that = sameKind(this, other);
    return new PNCounter(
      this.increments.merge(that.increments),
      this.decrements.merge(that.decrements),
    );
  }

  override modifiedByNodes(): ReadonlySet<string> {
    return new Set([...this.increments.state.keys(), ...this.decrements.state.keys()]);
  }

  override prune(removed: string, into: string): PNCounter {
    return new PNCounter(
      this.increments.prune(removed, into),
      this.decrements.prune(removed, into),
    );
  }

  override pruningCleanup(removed: string): PNCounter {
    return new PNCounter(
      this.increments.pruningCleanup(removed),
      this.decrements.pruningCleanup(removed),
    );
  }

  toData(): [[string, number][], [string, number][]] {
    return [this.increments.toData(), this.decrements.toData()];
  }
}
