/**
 * IdTable: a map from positive safe-integer ids to values, for ids handed out in
 * increasing order and removed roughly in the same order (the reply targets of remote
 * asks, src/actor/ask.ts). An open-addressing table with linear probing on `id & mask`
 * and backward-shift deletion: a run of sequential ids fills consecutive slots, so a
 * lookup is one probe, and `set`/`delete` allocate nothing (a `Map` with one insertion
 * and one deletion per ask rebuilds its table every few dozen asks).
 *
 * It grows (doubling) when more than half full and never shrinks below its initial
 * capacity; it shrinks by half when less than an eighth full, so a burst does not pin a
 * large table. The number of entries is bounded by the caller (askPendingMax).
 */
import { fail } from "./assert.js";

const EMPTY = 0;
const INITIAL_CAPACITY = 64;

export class IdTable<V> {
  private keys = new Float64Array(INITIAL_CAPACITY);
  private values: (V | undefined)[] = new Array<V | undefined>(INITIAL_CAPACITY);
  private mask = INITIAL_CAPACITY - 1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: number): V | undefined {
    const keys = this.keys;
    for (let i = id & this.mask; ; i = (i + 1) & this.mask) {
      const k = keys[i] as number;
      if (k === id) return this.values[i];
      if (k === EMPTY) return undefined;
    }
  }

  /** Sets `id` (a safe integer > 0) to `value`. */
  set(id: number, value: V): void {
    if (!(id > 0 && Number.isSafeInteger(id))) fail(`IdTable id must be a safe integer > 0: ${id}`);
    if ((this.count + 1) * 2 > this.keys.length) this.resize(this.keys.length * 2);
    const keys = this.keys;
    for (let i = id & this.mask; ; i = (i + 1) & this.mask) {
      const k = keys[i] as number;
      if (k === id) {
        this.values[i] = value;
        return;
      }
      if (k === EMPTY) {
        keys[i] = id;
        this.values[i] = value;
        this.count++;
        return;
      }
    }
  }

  /** Removes `id`; true if it was there. */
  delete(id: number): boolean {
    const keys = this.keys;
    const mask = this.mask;
    let i = id & mask;
    for (;;) {
      const k = keys[i] as number;
      if (k === EMPTY) return false;
      if (k === id) break;
      i = (i + 1) & mask;
    }
    // Backward-shift deletion: move later entries of the probe run into the hole when
    // their home slot does not lie cyclically in (hole, their slot].
    let hole = i;
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const k = keys[j] as number;
      if (k === EMPTY) break;
      const home = k & mask;
      const between = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (between) continue;
      keys[hole] = k;
      this.values[hole] = this.values[j];
      hole = j;
    }
    keys[hole] = EMPTY;
    this.values[hole] = undefined;
    this.count--;
    if (this.keys.length > INITIAL_CAPACITY && this.count * 8 < this.keys.length)
      this.resize(this.keys.length / 2);
    return true;
  }

  private resize(capacity: number): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    this.keys = new Float64Array(capacity);
    this.values = new Array<V | undefined>(capacity);
    this.mask = capacity - 1;
    this.count = 0;
    for (let i = 0; i < oldKeys.length; i++) {
      const k = oldKeys[i] as number;
      if (k !== EMPTY) this.set(k, oldValues[i] as V);
    }
  }
}
