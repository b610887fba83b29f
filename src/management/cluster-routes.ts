/**
 * Cluster membership routes (in the spirit of Akka Management):
 * - `GET /cluster/members`: self, leader, oldest, every member (status, roles,
 *   appVersion, upNumber, reachability) and the unreachable members with their observers;
 * - `GET /cluster/members/{address}`: one member;
 * - `PUT /cluster/members/{address}` with `{"operation":"leave"|"down"}`, and
 *   `DELETE /cluster/members/{address}` (= leave). Writes need the bearer token.
 * `{address}` is `system@host:port` or `host:port` (URL-encoded or not).
 */
import type { ClusterNode } from "../api/cluster-node.js";
import { ConfigError } from "../base/errors.js";
import type { Member } from "../core/membership/member.js";
import { compareByAge } from "../core/membership/member-ordering.js";
import { observersGroupedByUnreachable } from "../core/membership/reachability.js";
import { parseSeedAddress } from "../core/membership/seed-address.js";
import type { UniqueAddress } from "../core/membership/unique-address.js";
import { HttpError, type RouteRequest, type RouteResponse, type Router } from "./router.js";

/** `system@host:port` of a node. */
export function nodeOf(u: UniqueAddress): string {
  const a = u.address;
  return `${a.system}@${a.host}:${a.port}`;
}

export interface MemberJson {
  readonly node: string;
  readonly hostPort: string;
  readonly uid: string;
  readonly status: string;
  readonly roles: readonly string[];
  readonly appVersion: string;
  readonly upNumber: number;
  readonly reachable: boolean;
}

function memberJson(m: Member, unreachable: ReadonlySet<string>): MemberJson {
  const a = m.uniqueAddress.address;
  const node = nodeOf(m.uniqueAddress);
  return {
    node,
    hostPort: `${a.host}:${a.port}`,
    uid: String(m.uniqueAddress.uid),
    status: m.status,
    roles: m.roles,
    appVersion: m.appVersion,
    upNumber: m.upNumber,
    reachable: !unreachable.has(node),
  };
}

/** The members view of `node` as the routes answer it. */
export function membersJson(node: ClusterNode) {
  const c = node.cluster;
  const s = c.state;
  const unreachable = new Set(s.unreachable.map((m) => nodeOf(m.uniqueAddress)));
  const ageCandidates = s.members.filter(
    (m) => m.status === "up" || m.status === "leaving" || m.status === "exiting",
  );
  const oldest = [...ageCandidates].sort(compareByAge)[0];
  return {
    self: nodeOf(c.self),
    selfStatus: c.selfMember?.status ?? "not-a-member",
    leader: s.leader === undefined ? null : nodeOf(s.leader),
    oldest: oldest === undefined ? null : nodeOf(oldest.uniqueAddress),
    convergence: s.convergence,
    members: s.members.map((m) => memberJson(m, unreachable)),
    unreachable: observersGroupedByUnreachable(
      c.membershipState.latestGossip.overview.reachability,
    ).map((g) => ({ node: nodeOf(g.subject), observedBy: g.observers.map(nodeOf) })),
  };
}

function memberAt(node: ClusterNode, address: string): Member {
  let a: { host: string; port: number };
  try {
    a = parseSeedAddress(address, "address", node.system.name);
  } catch (error) {
    throw new HttpError(
      400,
      "INVALID_ADDRESS",
      `bad member address "${address}": ${error instanceof ConfigError ? error.allowed : String(error)}`,
    );
  }
  const m = node.cluster.state.members.find(
    (x) => x.uniqueAddress.address.host === a.host && x.uniqueAddress.address.port === a.port,
  );
  if (m === undefined)
    throw new HttpError(404, "MEMBER_NOT_FOUND", `no member at ${a.host}:${a.port}`);
  return m;
}

function operate(node: ClusterNode, req: RouteRequest, operation: unknown): RouteResponse {
  const m = memberAt(node, req.params.address as string);
  const a = m.uniqueAddress.address;
  const hostPort = `${a.host}:${a.port}`;
  if (operation === "leave") {
    node.cluster.leave(hostPort);
    return { status: 200, body: { message: `leaving ${nodeOf(m.uniqueAddress)}` } };
  }
  if (operation === "down") {
    node.cluster.down(hostPort);
    return { status: 200, body: { message: `downing ${nodeOf(m.uniqueAddress)}` } };
  }
  throw new HttpError(
    400,
    "BAD_OPERATION",
    `expected a body {"operation":"leave"} or {"operation":"down"}, got ${JSON.stringify(operation) ?? "nothing"}`,
  );
}

export function registerClusterRoutes(router: Router, node: ClusterNode): void {
  router.register("GET", "/cluster/members", () => ({ status: 200, body: membersJson(node) }));
  router.register("GET", "/cluster/members/{address}", (req) => {
    const m = memberAt(node, req.params.address as string);
    const unreachable = new Set(node.cluster.state.unreachable.map((x) => nodeOf(x.uniqueAddress)));
    return { status: 200, body: memberJson(m, unreachable) };
  });
  router.register("PUT", "/cluster/members/{address}", (req) => {
    const body = req.body;
    const operation =
      typeof body === "object" && body !== null
        ? (body as { operation?: unknown }).operation
        : undefined;
    return operate(node, req, operation);
  });
  router.register("DELETE", "/cluster/members/{address}", (req) => operate(node, req, "leave"));
}
