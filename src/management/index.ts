/**
 * The management HTTP server of a ClusterNode (docs/operations.md): start it with
 * `ClusterNode.start({ management: { port, host, token } })`; `managementOf(node)` gives
 * its URL, its router (other modules register routes there) and readiness checks.
 * Loading this module registers it as the `management` node extension.
 */
import type { ClusterNode } from "../api/cluster-node.js";
import {
  type DiscoveryOptions,
  type ManagementOptions,
  registerNodeExtension,
} from "../api/node-extensions.js";
import { ConfigError } from "../base/errors.js";
import { registerClusterRoutes } from "./cluster-routes.js";
import { registerDashboardRoutes } from "./dashboard-routes.js";
import { registerBootstrapRoute, resolveDiscoverySettings, startDiscovery } from "./discovery.js";
import { Readiness, type ReadinessCheck, registerHealthRoutes } from "./health.js";
import { ManagementHttpServer } from "./http-server.js";
import { registerMetricsRoutes } from "./metrics-routes.js";
import { Router } from "./router.js";
import { type ManagementSettings, resolveManagementSettings } from "./settings.js";
import { registerShardingRoutes } from "./sharding-routes.js";

export { type MemberJson, membersJson } from "./cluster-routes.js";
export {
  type DiscoverySettings,
  lookupContactPoints,
  resolveDiscoverySettings,
} from "./discovery.js";
export type { CheckResult, ReadinessCheck } from "./health.js";
export { tokenMatches } from "./http-server.js";
export {
  HttpError,
  type HttpMethod,
  type RouteHandler,
  type RouteOptions,
  type RouteRequest,
  type RouteResponse,
  Router,
} from "./router.js";
export {
  DEFAULT_MANAGEMENT_SETTINGS,
  isLoopbackHost,
  MANAGEMENT_HOST_DEFAULT,
  MANAGEMENT_PORT_DEFAULT,
  type ManagementSettings,
  resolveManagementSettings,
} from "./settings.js";

/** A running management server. */
export interface Management {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  readonly settings: ManagementSettings;
  /** Register more routes here (they are served at once). */
  readonly router: Router;
  /** Adds (or replaces) a readiness check of `GET /health/ready`. */
  addReadinessCheck(name: string, check: ReadinessCheck): void;
}

const running = new WeakMap<ClusterNode, Management>();

/** The management server of `node`, if it was started with the `management` option. */
export function managementOf(node: ClusterNode): Management | undefined {
  return running.get(node);
}

/** Starts the management server for `node` (ClusterNode.start does it for you). */
export async function startManagement(
  node: ClusterNode,
  options: ManagementOptions = {},
): Promise<{ readonly management: Management; stop(): Promise<void> }> {
  const settings = resolveManagementSettings(options);
  const router = new Router();
  const queryTimeoutMs = () => Math.max(1, Math.floor(settings.requestTimeoutMs / 2));
  const readiness = new Readiness(node, queryTimeoutMs);
  registerHealthRoutes(router, node, readiness);
  registerClusterRoutes(router, node);
  registerShardingRoutes(router, node, queryTimeoutMs);
  registerBootstrapRoute(router, node);
  if (settings.metrics) registerMetricsRoutes(router, node);
  if (settings.dashboard)
    registerDashboardRoutes(router, node, queryTimeoutMs, settings.dashboardRefreshMs);
  const log = node.system.log.child({ component: "management" });
  const server = await ManagementHttpServer.start(settings, router, log);
  const management: Management = {
    url: server.url,
    port: server.port,
    settings,
    router,
    addReadinessCheck: (name, check) => readiness.add(name, check),
  };
  running.set(node, management);
  log.info("management server started", {
    url: server.url,
    token: settings.token === undefined ? "none (writes refused)" : "required",
  });
  return {
    management,
    stop: async () => {
      running.delete(node);
      await server.close();
    },
  };
}

registerNodeExtension<ClusterNode, ManagementOptions>({
  key: "management",
  validate: (options) => {
    resolveManagementSettings(options);
  },
  start: (node, options) => startManagement(node, options),
});

registerNodeExtension<ClusterNode, DiscoveryOptions>({
  key: "discovery",
  validate: (options) => {
    resolveDiscoverySettings(options);
  },
  start: async (node, options) => {
    const management = managementOf(node);
    if (management === undefined)
      throw new ConfigError("discovery", options.method, "a `management` option too");
    return startDiscovery(node, options, management.port);
  },
});
