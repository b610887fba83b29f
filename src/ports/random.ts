/**
 * Random port: every random choice (gossip targets, jitter, backoff) goes through it so
 * the simulator can replay a run from its seed.
 */
export interface Random {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, maxExclusive). */
  nextInt(maxExclusive: number): number;
}
