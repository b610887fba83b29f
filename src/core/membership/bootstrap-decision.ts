/**
 * Cluster bootstrap by discovery (docs/operations.md, "Bootstrap by discovery"): the
 * decision of one member, as a pure function of what it has observed.
 *
 * A member that is not yet in a cluster looks up its contact points (static list or DNS)
 * and probes each one's management endpoint, which answers with that node's remoting
 * address and the seed nodes of the cluster it belongs to (empty when it is in none).
 *
 * - If any contact point reports seed nodes, a cluster exists: join it, through seed nodes
 *   other than this node (a joiner is listed as up before its welcome arrives).
 * - Otherwise a new cluster is formed only by the member with the lowest remoting address
 *   among all contact points, and only once at least `requiredContactPoints` were found,
 *   every one of them answered, and the set has been unchanged for `stableMarginMs`.
 *   Every other member waits (and then joins the cluster the lowest one formed).
 * Because all members judge the same stable set, and only one of them is the lowest, a
 * bootstrap race never forms two clusters.
 */
import { compareStrings } from "../../base/compare.js";

/** What one probe of a contact point returned. */
export type ContactPointProbe =
  | {
      readonly type: "answered";
      /** The probed node's remoting address, `system@host:port`. */
      readonly self: string;
      /** Seed nodes of its cluster (its Up members), `system@host:port`; empty: no cluster. */
      readonly seedNodes: readonly string[];
    }
  | { readonly type: "failed"; readonly reason: string };

export interface BootstrapObservation {
  /** This member's remoting address, `system@host:port`. */
  readonly self: string;
  /** Contact points found by the last lookup (`host:port` of management endpoints). */
  readonly contactPoints: readonly string[];
  /** The last probe per contact point. */
  readonly probes: ReadonlyMap<string, ContactPointProbe>;
  /** Since when (ms) the contact-point set has been the same as now. */
  readonly contactPointsStableSinceMs: number;
  readonly nowMs: number;
  readonly requiredContactPoints: number;
  readonly stableMarginMs: number;
}

export type BootstrapDecision =
  | { readonly type: "join"; readonly seedNodes: readonly string[] }
  | { readonly type: "form" }
  | { readonly type: "wait"; readonly reason: string };

/** `system@host:port` -> sortable parts; undefined when malformed. */
function parts(address: string): { host: string; port: number } | undefined {
  const at = address.lastIndexOf("@");
  const colon = address.lastIndexOf(":");
  if (colon <= at + 1) return undefined;
  const port = Number(address.slice(colon + 1));
  if (!Number.isInteger(port)) return undefined;
  return { host: address.slice(at + 1, colon), port };
}

/** Address order of the membership model: host (code units), then port (numeric). */
export function compareRemotingAddresses(a: string, b: string): number {
  const x = parts(a);
  const y = parts(b);
  if (x === undefined || y === undefined) return compareStrings(a, b);
  if (x.host !== y.host) return x.host < y.host ? -1 : 1;
  return x.port - y.port;
}

export function decideBootstrap(o: BootstrapObservation): BootstrapDecision {
  const answered: { contactPoint: string; self: string; seedNodes: readonly string[] }[] = [];
  const failed: string[] = [];
  for (const cp of o.contactPoints) {
    const p = o.probes.get(cp);
    if (p?.type === "answered") answered.push({ contactPoint: cp, ...p });
    else failed.push(`${cp} (${p === undefined ? "not probed yet" : p.reason})`);
  }
  // An existing cluster wins, whatever else is known. Its seed nodes never include this
  // node: a cluster lists a joiner as up as soon as its leader moved it up, before the
  // joiner got the welcome, and joining oneself forms a second cluster. A cluster that
  // lists only this node is one this node is already joining: wait for the welcome.
  const withCluster = answered
    .filter((a) => a.seedNodes.length > 0 && a.self !== o.self)
    .sort((a, b) => compareRemotingAddresses(a.self, b.self));
  const first = withCluster[0];
  if (first !== undefined) {
    const seedNodes = first.seedNodes.filter((s) => s !== o.self);
    if (seedNodes.length > 0) return { type: "join", seedNodes };
    return {
      type: "wait",
      reason: `the cluster of ${first.self} lists only this node as up: waiting for its welcome`,
    };
  }

  if (o.contactPoints.length < o.requiredContactPoints)
    return {
      type: "wait",
      reason: `found ${o.contactPoints.length} contact point(s), requiredContactPoints is ${o.requiredContactPoints}`,
    };
  if (failed.length > 0)
    return { type: "wait", reason: `contact points not answering: ${failed.join(", ")}` };
  if (!answered.some((a) => a.self === o.self))
    return {
      type: "wait",
      reason: `this node (${o.self}) is not among the contact points (${o.contactPoints.join(", ")})`,
    };
  const stableFor = o.nowMs - o.contactPointsStableSinceMs;
  if (stableFor < o.stableMarginMs)
    return {
      type: "wait",
      reason: `contact points stable for ${Math.round(stableFor)} ms of stableMarginMs ${o.stableMarginMs}`,
    };
  const lowest = answered.map((a) => a.self).sort(compareRemotingAddresses)[0] as string;
  if (lowest === o.self) return { type: "form" };
  return {
    type: "wait",
    reason: `no cluster yet; ${lowest} (the lowest address) forms it`,
  };
}
