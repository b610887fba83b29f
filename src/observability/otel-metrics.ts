/**
 * OpenTelemetry metrics bridge: exports a MetricsRegistry through a Meter of
 * `@opentelemetry/api` (an optional peer dependency: the application passes its meter,
 * shardkit never imports the package). Counters become observable counters, gauges
 * observable gauges (both read at collection time, like the Prometheus scrape);
 * histograms become OpenTelemetry histograms fed by each observation.
 *
 * Names: the Prometheus name without `_total` (OpenTelemetry exporters add their own
 * suffixes); `_seconds` metrics get unit `s`. The types below are the subset of the
 * `@opentelemetry/api` Meter that is used, so a real Meter fits them.
 */
import type { Metric, MetricsRegistry } from "./metrics-registry.js";

/** Attribute values as OpenTelemetry takes them. */
export type OtelAttributes = Record<string, string>;

/** What an observable instrument's callback receives. */
export interface OtelObservableResult {
  observe(value: number, attributes?: OtelAttributes): void;
}

/** An observable instrument. */
export interface OtelObservable {
  addCallback(callback: (result: OtelObservableResult) => void): void;
}

/** A synchronous histogram. */
export interface OtelHistogram {
  record(value: number, attributes?: OtelAttributes): void;
}

/** Options of an instrument. */
export interface OtelInstrumentOptions {
  description?: string;
  unit?: string;
}

/** The part of an `@opentelemetry/api` Meter the bridge uses. */
export interface OtelMeterLike {
  createObservableCounter(name: string, options?: OtelInstrumentOptions): OtelObservable;
  createObservableGauge(name: string, options?: OtelInstrumentOptions): OtelObservable;
  createHistogram(name: string, options?: OtelInstrumentOptions): OtelHistogram;
}

/** The OpenTelemetry name of a registry metric. */
export function otelName(m: Pick<Metric, "name" | "type">): string {
  return m.type === "counter" ? m.name.replace(/_total$/, "") : m.name;
}

/**
 * Registers every metric defined in `registry` so far with `meter`. Returns a function
 * that stops feeding histograms (observable callbacks stop with the meter provider).
 */
export function bridgeToOpenTelemetry(registry: MetricsRegistry, meter: OtelMeterLike): () => void {
  const metrics = registry.collect();
  const unhooks: (() => void)[] = [];
  for (const m of metrics) {
    const options: OtelInstrumentOptions = {
      description: m.help,
      ...(m.name.endsWith("_seconds") ? { unit: "s" } : {}),
    };
    if (m.type === "histogram") {
      const h = meter.createHistogram(otelName(m), options);
      unhooks.push(m.onObserve((labels, v) => h.record(v, { ...labels })));
      continue;
    }
    const instrument =
      m.type === "counter"
        ? meter.createObservableCounter(otelName(m), options)
        : meter.createObservableGauge(otelName(m), options);
    instrument.addCallback((result) => {
      registry.runCollectors();
      for (const s of m.series.values()) if ("value" in s) result.observe(s.value, { ...s.labels });
    });
  }
  return () => {
    for (const u of unhooks) u();
  };
}
