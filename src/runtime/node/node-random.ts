/**
 * The real Random. Without a seed it uses `Math.random` (fine for jitter and gossip
 * target choice in production); with a seed it uses xoshiro128** so a single real
 * process can reproduce its random choices (e.g. when debugging a benchmark).
 *
 * `nextInt` is unbiased in the seeded form (rejection sampling on uint32 draws).
 */
import { fail } from "../../base/assert.js";
import { Xoshiro128 } from "../../base/prng.js";
import type { Random } from "../../ports/random.js";

const UINT32_RANGE = 0x1_0000_0000;

/** Random backed by Math.random, or by a seeded Xoshiro128 when `seed` is given. */
export class NodeRandom implements Random {
  private readonly prng: Xoshiro128 | undefined;

  constructor(seed?: number) {
    if (seed !== undefined && !Number.isSafeInteger(seed)) fail(`seed must be an integer: ${seed}`);
    this.prng = seed === undefined ? undefined : new Xoshiro128(seed);
  }

  /** True when the stream is reproducible (constructed with a seed). */
  get seeded(): boolean {
    return this.prng !== undefined;
  }

  next(): number {
    return this.prng === undefined ? Math.random() : this.prng.next();
  }

  nextInt(maxExclusive: number): number {
    assertIntBound(maxExclusive);
    if (this.prng === undefined) return Math.floor(Math.random() * maxExclusive);
    return seededInt(this.prng, maxExclusive);
  }
}

function assertIntBound(maxExclusive: number): void {
  if (!(Number.isSafeInteger(maxExclusive) && maxExclusive > 0))
    fail(`nextInt bound must be a positive integer: ${maxExclusive}`);
}

function seededInt(prng: Xoshiro128, maxExclusive: number): number {
  if (maxExclusive > UINT32_RANGE) return Math.floor(next53(prng) * maxExclusive);
  const limit = UINT32_RANGE - (UINT32_RANGE % maxExclusive);
  let u = prng.nextUint32();
  while (u >= limit) u = prng.nextUint32();
  return u % maxExclusive;
}

/** Uniform float in [0, 1) with 53 random bits, for bounds wider than 32 bits. */
function next53(prng: Xoshiro128): number {
  const hi = prng.nextUint32() >>> 11;
  const lo = prng.nextUint32();
  return (hi * UINT32_RANGE + lo) / 2 ** 53;
}
