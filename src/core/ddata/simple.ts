/**
 * The CRDTs without per-node state: GSet (grow-only set, a delta-CRDT whose delta is the
 * added elements), Flag (false until switched on, never back) and LWWRegister (the value
 * with the highest timestamp wins; ties go to the greater node id).
 *
 * LWWRegister's timestamps come from an injectable clock `(current, value) => timestamp`.
 * The default, `LWW_LOGICAL_CLOCK`, returns `current + 1`: a write always wins over the
 * writes its replica has seen. For "latest in wall-clock time" semantics, pass
 * `lwwWallClock(() => Date.now())` from application code (clocks of different machines
 * drift: a write can lose to an earlier one from a machine whose clock is ahead).
 */
import {
  compareElements,
  type DDataElement,
  InvalidDDataOperationError,
  ReplicatedData,
  sameKind,
} from "./replicated-data.js";

/** Grow-only set. */
export class GSet<T extends DDataElement = DDataElement> extends ReplicatedData {
  readonly kind = "gset" as const;
  private constructor(
    readonly elements: ReadonlySet<T>,
    private readonly _delta: GSet<T> | undefined,
  ) {
    super();
  }

  static empty<T extends DDataElement = DDataElement>(): GSet<T> {
    return new GSet<T>(new Set(), undefined);
  }

  static of<T extends DDataElement>(elements: Iterable<T>): GSet<T> {
    return new GSet<T>(new Set(elements), undefined);
  }

  has(e: T): boolean {
    return this.elements.has(e);
  }

  get size(): number {
    return this.elements.size;
  }

  add(e: T): GSet<T> {
    if (this.elements.has(e)) return this;
    const s = new Set(this.elements);
    s.add(e);
    const d = new Set(this._delta?.elements ?? []);
    d.add(e);
    return new GSet(s, new GSet(d, undefined));
  }

  override get delta(): GSet<T> | undefined {
    return this._delta;
  }

  override resetDelta(): GSet<T> {
    return this._delta === undefined ? this : new GSet(this.elements, undefined);
  }

  override get supportsDeltas(): boolean {
    return true;
  }

  override merge(other: ReplicatedData): GSet<T> {
    const that = sameKind(this, other);
    let s: Set<T> | undefined;
    for (const e of that.elements)
      if (!this.elements.has(e)) {
        s ??= new Set(this.elements);
        s.add(e);
      }
    return new GSet(s ?? this.elements, undefined);
  }

  toData(): T[] {
    return [...this.elements].sort(compareElements);
  }
}

/** A boolean that can only be switched on. */
export class Flag extends ReplicatedData {
  readonly kind = "flag" as const;
  private constructor(readonly enabled: boolean) {
    super();
  }
  static readonly off: Flag = new Flag(false);
  static readonly on: Flag = new Flag(true);

  switchOn(): Flag {
    return Flag.on;
  }

  override merge(other: ReplicatedData): Flag {
    const that = sameKind(this, other);
    return this.enabled || !that.enabled ? this : that;
  }

  toData(): boolean {
    return this.enabled;
  }
}

/** Chooses the timestamp of a new LWWRegister value from the current one. */
export type LwwClock<T> = (currentTimestamp: number, value: T) => number;

/** The default clock: one more than the current timestamp. */
export const LWW_LOGICAL_CLOCK: LwwClock<unknown> = (current) => current + 1;

/** A clock that uses `now()` (e.g. wall-clock ms) but never goes below `current + 1`. */
export function lwwWallClock(now: () => number): LwwClock<unknown> {
  return (current) => Math.max(Math.floor(now()), current + 1);
}

/** Register whose last write (by timestamp, then node id) wins. `T` must be serializable. */
export class LWWRegister<T = unknown> extends ReplicatedData {
  readonly kind = "lwwreg" as const;
  private constructor(
    readonly value: T,
    readonly timestamp: number,
    /** The node that wrote the value. */
    readonly node: string,
  ) {
    super();
  }

  /** A register holding `value`, written by `node` at the clock's first timestamp. */
  static create<T>(node: string, value: T, clock: LwwClock<T> = LWW_LOGICAL_CLOCK): LWWRegister<T> {
    return new LWWRegister(value, checkTs(clock(0, value)), node);
  }

  /** @internal Decoding only. */
  static restore<T>(value: T, timestamp: number, node: string): LWWRegister<T> {
    return new LWWRegister(value, timestamp, node);
  }

  /** Writes `value` on behalf of `node`. */
  set(node: string, value: T, clock: LwwClock<T> = LWW_LOGICAL_CLOCK): LWWRegister<T> {
    return new LWWRegister(value, checkTs(clock(this.timestamp, value)), node);
  }

  override merge(other: ReplicatedData): LWWRegister<T> {
    const that = sameKind(this, other);
    if (that.timestamp > this.timestamp) return that;
    if (that.timestamp < this.timestamp) return this;
    return that.node > this.node ? that : this;
  }

  toData(): [T, number, string] {
    return [this.value, this.timestamp, this.node];
  }
}

function checkTs(ts: number): number {
  if (!Number.isSafeInteger(ts))
    throw new InvalidDDataOperationError("lwwreg", `clock returned a non-integer timestamp ${ts}`);
  return ts;
}
