/**
 * Observability (docs/observability.md): the metrics registry of a node, its Prometheus
 * text exposition, the OpenTelemetry metrics bridge and journal instrumentation.
 * `metricsOf(node)` creates the node's metrics on first use; the management server does
 * it when it starts, so the metrics see every entity type started afterwards.
 */
import type { ClusterNode } from "../api/cluster-node.js";
import { NodeMetrics } from "./node-metrics.js";

export { instrumentJournal } from "./journal-metrics.js";
export { JournalSpanAttributes, traceJournal } from "./journal-tracing.js";
export {
  type Collector,
  DURATION_BUCKETS_SECONDS,
  FORBIDDEN_LABEL_NAMES,
  type HistogramOptions,
  HistogramSeries,
  type Labels,
  Metric,
  type MetricOptions,
  MetricsRegistry,
  type MetricType,
  type ObserveHook,
  SERIES_PER_METRIC_MAX_DEFAULT,
  SIZE_BUCKETS,
  ValueSeries,
} from "./metrics-registry.js";
export { NodeMetrics, SHARD_EVENTS_MAX, type ShardEvent } from "./node-metrics.js";
export {
  bridgeToOpenTelemetry,
  type OtelAttributes,
  type OtelHistogram,
  type OtelInstrumentOptions,
  type OtelMeterLike,
  type OtelObservable,
  type OtelObservableResult,
  otelName,
} from "./otel-metrics.js";
export { formatSampleValue, PROMETHEUS_CONTENT_TYPE, prometheusText } from "./prometheus-text.js";

const nodes = new WeakMap<ClusterNode, NodeMetrics>();

/**
 * The metrics of `node` (created on first call; disposed when its actor system stops).
 * Entity types started before the first call are not seen by the shard and entity
 * metrics: call it (or start the management server) before `ClusterSharding.init`.
 */
export function metricsOf(node: ClusterNode): NodeMetrics {
  let m = nodes.get(node);
  if (m === undefined) {
    const created = new NodeMetrics(node);
    m = created;
    nodes.set(node, created);
    node.system.whenTerminated.then(() => created.dispose());
  }
  return m;
}
