/**
 * Random port over a seeded xoshiro128** generator: the only randomness in the
 * simulator. `nextInt` is unbiased (rejection sampling on uint32 draws), so the
 * values drawn depend only on the seed and the sequence of calls.
 */
import { fail } from "../../base/assert.js";
import { Xoshiro128 } from "../../base/prng.js";
import type { Random } from "../../ports/random.js";

const UINT32_RANGE = 0x1_0000_0000;

/** Deterministic Random from a 32-bit seed. */
export class SeededRandom implements Random {
  private readonly prng: Xoshiro128;

  constructor(seed: number) {
    this.prng = new Xoshiro128(seed);
  }

  next(): number {
    return this.prng.next();
  }

  nextInt(maxExclusive: number): number {
    if (!(Number.isSafeInteger(maxExclusive) && maxExclusive > 0))
      fail(`nextInt bound must be a positive integer: ${maxExclusive}`);
    if (maxExclusive > UINT32_RANGE) return Math.floor(this.next53() * maxExclusive);
    const limit = UINT32_RANGE - (UINT32_RANGE % maxExclusive);
    let u = this.prng.nextUint32();
    while (u >= limit) u = this.prng.nextUint32();
    return u % maxExclusive;
  }

  private next53(): number {
    const hi = this.prng.nextUint32() >>> 11;
    return (hi * UINT32_RANGE + this.prng.nextUint32()) / 2 ** 53;
  }
}
