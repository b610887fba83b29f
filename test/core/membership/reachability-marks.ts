/**
 * Reachability tables for property tests: marks given as indices into a node list and a
 * status, applied in order to a table (a mark of a node about itself is skipped).
 */
import {
  markReachable,
  markTerminated,
  markUnreachable,
  type Reachability,
} from "../../../src/core/membership/reachability.js";
import type { UniqueAddress } from "../../../src/core/membership/unique-address.js";

/** A mark: observer index, subject index, what the observer now says. */
export type Mark = readonly [number, number, "unreachable" | "terminated" | "reachable"];

/** `r` with `marks` applied in order (indices into `nodes`). */
export function withMarks(
  r: Reachability,
  nodes: readonly UniqueAddress[],
  marks: readonly Mark[],
): Reachability {
  let out = r;
  for (const [o, sub, st] of marks) {
    if (o === sub) continue;
    const [observer, subject] = [nodes[o] as UniqueAddress, nodes[sub] as UniqueAddress];
    out =
      st === "unreachable"
        ? markUnreachable(out, observer, subject)
        : st === "terminated"
          ? markTerminated(out, observer, subject)
          : markReachable(out, observer, subject);
  }
  return out;
}
