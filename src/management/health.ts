/**
 * Health probes:
 * - `GET /health/alive`: 200 while the process serves requests (liveness);
 * - `GET /health/ready`: 200 when every readiness check passes, else 503 with a JSON
 *   reason (readiness). Built-in checks: this member is Up (or WeaklyUp), the coordinated
 *   shutdown has not started, and every entity type hosted here has its region registered
 *   with the type's coordinator. More checks are added with `addReadinessCheck`.
 * Both are public (no token): probes of an orchestrator reach them.
 */
import type { ClusterNode } from "../api/cluster-node.js";
import { ClusterSharding, EntityTypeKey } from "../api/cluster-sharding.js";
import type { Router } from "./router.js";

/** A readiness check: true when ready, else the reason (a string) it is not. */
export type ReadinessCheck = () => true | string | Promise<true | string>;

export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  readonly reason?: string;
}

export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();

  constructor(
    private readonly node: ClusterNode,
    private readonly queryTimeoutMs: () => number,
  ) {
    this.add("member-up", () => {
      const status = node.cluster.selfMember?.status;
      return status === "up" || status === "weakly-up"
        ? true
        : `this member is ${status ?? "not a member yet (joining)"}, not up`;
    });
    this.add("not-shutting-down", () =>
      node.isShuttingDown
        ? `coordinated shutdown is running (${node.coordinatedShutdown.shutdownReason})`
        : true,
    );
    this.add("sharding-regions-registered", () => this.regionsRegistered());
  }

  /** Adds (or replaces) the check `name`. */
  add(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  async run(): Promise<CheckResult[]> {
    const out: CheckResult[] = [];
    for (const [name, check] of this.checks) {
      let r: true | string;
      try {
        r = await check();
      } catch (error) {
        r = `check failed: ${error instanceof Error ? error.message : String(error)}`;
      }
      out.push(r === true ? { name, ok: true } : { name, ok: false, reason: r });
    }
    return out;
  }

  private async regionsRegistered(): Promise<true | string> {
    if (this.node.cluster.selfMember?.status !== "up") return true; // member-up reports it
    const sharding = ClusterSharding.get(this.node);
    const prefix = `${this.node.address}/`;
    const missing: string[] = [];
    for (const type of sharding.typeNames({ hosting: true })) {
      const regions = await sharding
        .getCurrentRegions(EntityTypeKey<unknown>(type), { timeoutMs: this.queryTimeoutMs() })
        .catch(() => [] as readonly string[]);
      if (!regions.some((r) => r.startsWith(prefix))) missing.push(type);
    }
    return missing.length === 0
      ? true
      : `sharding regions not registered with their coordinator yet: ${missing.join(", ")}`;
  }
}

export function registerHealthRoutes(router: Router, node: ClusterNode, readiness: Readiness) {
  router.register(
    "GET",
    "/health/alive",
    () => ({ status: 200, body: { status: "alive", node: node.address } }),
    { public: true },
  );
  router.register(
    "GET",
    "/health/ready",
    async () => {
      const checks = await readiness.run();
      const failed = checks.filter((c) => !c.ok);
      if (failed.length === 0)
        return { status: 200, body: { status: "ready", node: node.address, checks } };
      return {
        status: 503,
        body: {
          error: `not ready: ${failed.map((c) => c.reason).join("; ")}`,
          code: "NOT_READY",
          node: node.address,
          checks,
        },
      };
    },
    { public: true },
  );
}
