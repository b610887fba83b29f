/**
 * The phi function of the phi accrual failure detector (Hayashibara et al.): how
 * surprised we are, on a -log10 scale, that no heartbeat arrived for `timeDiffMs` given
 * inter-arrival times with the given mean and standard deviation. phi = 1 means a 10%
 * chance the peer is still alive, phi = 8 about 1e-8.
 *
 * The normal CDF is approximated with the logistic formula used by Akka/Pekko
 * (y = (t - mean) / sd; e = exp(-y * (1.5976 + 0.070566 * y^2))). This is deliberate and
 * normative (test/fixtures/reference-vectors/phi-accrual.json): in the tails it gives much
 * higher phi than the exact CDF (15.3 instead of 11.9 at +7 sd), which is what decides when
 * a node is declared unavailable, so clusters mixing implementations agree. Two
 * algebraically equal branches keep precision on each side of the mean.
 */

const LOGISTIC_A = 1.5976;
const LOGISTIC_B = 0.070566;

/**
 * phi for a silence of `timeDiffMs` given the interval distribution.
 * Precondition: `stdDeviationMs > 0`. Returns a value >= 0 (never -0); +Infinity when the
 * silence is so long that the probability underflows.
 */
export function phi(timeDiffMs: number, meanMs: number, stdDeviationMs: number): number {
  const y = (timeDiffMs - meanMs) / stdDeviationMs;
  const e = Math.exp(-y * (LOGISTIC_A + LOGISTIC_B * y * y));
  const p = timeDiffMs > meanMs ? -Math.log10(e / (1 + e)) : -Math.log10(1 - 1 / (1 + e));
  // -log10(1) is -0 far below the mean; report it as +0.
  return p === 0 ? 0 : p;
}
