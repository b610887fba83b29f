/**
 * `GET /metrics`: the node's metrics in the Prometheus text format
 * (docs/observability.md). Like every read, it needs the bearer token when one is
 * configured (Prometheus: `authorization: { credentials: ... }` in the scrape config).
 */
import type { ClusterNode } from "../api/cluster-node.js";
import { metricsOf } from "../observability/index.js";
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from "../observability/prometheus-text.js";
import type { Router } from "./router.js";

export function registerMetricsRoutes(router: Router, node: ClusterNode): void {
  const metrics = metricsOf(node);
  router.register("GET", "/metrics", () => ({
    status: 200,
    contentType: PROMETHEUS_CONTENT_TYPE,
    body: prometheusText(metrics.registry.collect()),
  }));
}
