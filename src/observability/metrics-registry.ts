/**
 * A small in-process metrics registry: counters, gauges and histograms with a fixed list
 * of label names per metric and a bound on the number of series per metric
 * (docs/observability.md, "Metrics").
 *
 * Invariants:
 * - label names are fixed when a metric is defined; names that would carry entity ids
 *   (`entity`, `entity_id`, `entityId`) are refused, so an entity id never becomes a label;
 * - a metric holds at most `seriesPerMetricMax` series; a new series beyond it is dropped
 *   and counted in `shardkit_metrics_series_dropped_total` (the scrape stays bounded);
 * - `removeSeries(label, value)` drops every series whose label has that value (a member
 *   that left the cluster, a peer that is gone);
 * - recording is a plain field update on a series handle (`labels(...)` once, then
 *   `inc`/`set`/`observe`); most values are read from existing counters by collectors run
 *   at scrape time, so the hot paths do not change.
 */
import { ConfigError } from "../base/errors.js";

/** The kinds of metric the exposition knows. */
export type MetricType = "counter" | "gauge" | "histogram";

/** Label values by label name. */
export type Labels = Readonly<Record<string, string>>;

/** Label names that are refused: entity ids must never be labels (unbounded cardinality). */
export const FORBIDDEN_LABEL_NAMES: readonly string[] = ["entity", "entity_id", "entityId", "id"];

/** Default bound of series per metric. */
export const SERIES_PER_METRIC_MAX_DEFAULT = 1_000;

/** Default histogram buckets for durations in seconds. */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Default histogram buckets for sizes (counts of items). */
export const SIZE_BUCKETS: readonly number[] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Definition of a metric. */
export interface MetricOptions {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly string[];
}

/** Definition of a histogram (bucket upper bounds, increasing). */
export interface HistogramOptions extends MetricOptions {
  readonly buckets?: readonly number[];
}

/** One series of a counter or gauge. */
export class ValueSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
  /** Adds `by` (default 1). */
  inc(by = 1): void {
    this.value += by;
  }
  /** Sets the value (gauges; counters read from a monotonic source at scrape time). */
  set(value: number): void {
    this.value = value;
  }
}

/** One series of a histogram. */
export class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Labels,
    readonly buckets: readonly number[],
    private readonly hooks: readonly ObserveHook[] = [],
  ) {
    this.counts = new Array<number>(buckets.length).fill(0);
  }
  /** Records one observation. */
  observe(value: number): void {
    if (this.hooks.length > 0) for (const h of this.hooks) h(this.labels, value);
    this.sum += value;
    this.count++;
    const b = this.buckets;
    for (let i = 0; i < b.length; i++) {
      if (value <= (b[i] as number)) {
        this.counts[i] = (this.counts[i] as number) + 1;
        return;
      }
    }
  }
}

type AnySeries = ValueSeries | HistogramSeries;

/** Told every histogram observation (the OpenTelemetry bridge). */
export type ObserveHook = (labels: Labels, value: number) => void;

/** A metric: its definition and its series by label values. */
export class Metric<S extends AnySeries = AnySeries> {
  readonly series = new Map<string, S>();
  /** @internal Observation hooks of a histogram (shared with its series). */
  readonly hooks: ObserveHook[] = [];
  constructor(
    readonly type: MetricType,
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    private readonly make: (labels: Labels, hooks: readonly ObserveHook[]) => S,
    private readonly registry: MetricsRegistry,
  ) {}

  /** Calls `hook` on every later observation of this histogram; returns its removal. */
  onObserve(hook: ObserveHook): () => void {
    this.hooks.push(hook);
    return () => {
      const i = this.hooks.indexOf(hook);
      if (i >= 0) this.hooks.splice(i, 1);
    };
  }

  /**
   * The series with these label values (created on first use). Beyond the series bound
   * it returns a detached series that is never exported (and counts the drop).
   */
  labels(labels: Labels = {}): S {
    const key = this.keyOf(labels);
    let s = this.series.get(key);
    if (s === undefined) {
      const ordered: Record<string, string> = {};
      for (const n of this.labelNames) ordered[n] = labels[n] ?? "";
      s = this.make(ordered, this.hooks);
      if (this.series.size >= this.registry.seriesPerMetricMax) {
        this.registry.seriesDropped();
        return s;
      }
      this.series.set(key, s);
    }
    return s;
  }

  /** Removes every series (a collector rebuilds the ones that still exist). */
  reset(): void {
    this.series.clear();
  }

  /** Removes every series whose `label` is `value`; returns how many. */
  remove(label: string, value: string): number {
    let n = 0;
    for (const [k, s] of this.series)
      if (s.labels[label] === value) {
        this.series.delete(k);
        n++;
      }
    return n;
  }

  private keyOf(labels: Labels): string {
    if (this.labelNames.length === 0) return "";
    let key = "";
    for (const n of this.labelNames) key += `${labels[n] ?? ""}\u0000`;
    return key;
  }
}

/** A collector reads existing counters into the registry right before a scrape. */
export type Collector = () => void;

/** The registry (see the module comment). */
export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();
  private readonly collectors: Collector[] = [];
  private readonly dropped: Metric<ValueSeries>;

  constructor(readonly seriesPerMetricMax: number = SERIES_PER_METRIC_MAX_DEFAULT) {
    if (!Number.isInteger(seriesPerMetricMax) || seriesPerMetricMax < 1)
      throw new ConfigError("metrics.seriesPerMetricMax", seriesPerMetricMax, "an integer >= 1");
    this.dropped = this.counter({
      name: "shardkit_metrics_series_dropped_total",
      help: "Series not recorded because their metric reached seriesPerMetricMax.",
    });
  }

  /** Defines a counter (name should end in `_total`). */
  counter(options: MetricOptions): Metric<ValueSeries> {
    return this.define("counter", options, (l) => new ValueSeries(l));
  }

  /** Defines a gauge. */
  gauge(options: MetricOptions): Metric<ValueSeries> {
    return this.define("gauge", options, (l) => new ValueSeries(l));
  }

  /** Defines a histogram. */
  histogram(options: HistogramOptions): Metric<HistogramSeries> {
    const buckets = options.buckets ?? DURATION_BUCKETS_SECONDS;
    for (let i = 1; i < buckets.length; i++)
      if (!((buckets[i] as number) > (buckets[i - 1] as number)))
        throw new ConfigError(`${options.name}.buckets`, buckets, "increasing bucket bounds");
    return this.define("histogram", options, (l, hooks) => new HistogramSeries(l, buckets, hooks));
  }

  /** Adds a collector run before every scrape, in the order added. */
  addCollector(collector: Collector): void {
    this.collectors.push(collector);
  }

  /** Removes every series (of every metric) whose `label` equals `value`. */
  removeSeries(label: string, value: string): number {
    let n = 0;
    for (const m of this.metrics.values()) n += m.remove(label, value);
    return n;
  }

  /** Runs the collectors and returns the metrics in definition order. */
  collect(): readonly Metric[] {
    this.runCollectors();
    return [...this.metrics.values()];
  }

  /** Runs the collectors (values read from their sources now). */
  runCollectors(): void {
    for (const c of this.collectors) c();
  }

  /** The metric named `name`, if defined. */
  get(name: string): Metric | undefined {
    return this.metrics.get(name);
  }

  /** @internal Counts a series dropped by a full metric. */
  seriesDropped(): void {
    this.dropped.labels().inc();
  }

  private define<S extends AnySeries>(
    type: MetricType,
    options: MetricOptions,
    make: (labels: Labels, hooks: readonly ObserveHook[]) => S,
  ): Metric<S> {
    const { name, help } = options;
    const labelNames = options.labelNames ?? [];
    if (!NAME_RE.test(name)) throw new ConfigError("metric name", name, "a Prometheus metric name");
    if (this.metrics.has(name))
      throw new ConfigError("metric name", name, "a name not defined already");
    for (const l of labelNames) {
      if (!LABEL_RE.test(l) || l.startsWith("__") || l === "le")
        throw new ConfigError(`${name} label`, l, "a Prometheus label name (not le, not __*)");
      if (FORBIDDEN_LABEL_NAMES.includes(l))
        throw new ConfigError(
          `${name} label`,
          l,
          "a bounded label: entity ids are never labels (unbounded cardinality)",
        );
    }
    const m = new Metric<S>(type, name, help, labelNames, make, this);
    this.metrics.set(name, m as unknown as Metric);
    return m;
  }
}
