/**
 * The Prometheus text exposition format (version 0.0.4), written by hand: HELP and TYPE
 * lines, one line per series, histograms as cumulative `_bucket{le=...}` lines plus `_sum`
 * and `_count`. shardkit writes it itself instead of depending on prom-client: the format
 * is small and stable, and the package keeps no runtime dependency for it
 * (docs/observability.md, "Why no prom-client").
 */

import { compareByKey } from "../base/compare.js";
import type { HistogramSeries, Labels, Metric, ValueSeries } from "./metrics-registry.js";

/** The content type of the text exposition. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A sample value as the format spells it (`+Inf`, `-Inf`, `NaN`). */
export function formatSampleValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function labelText(labels: Labels, extra?: readonly [string, string]): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(labels)) parts.push(`${k}="${escapeLabelValue(v)}"`);
  if (extra !== undefined) parts.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

/** Sorted series of a metric (by their label text), for a stable output. */
function sortedSeries<S>(m: Metric): S[] {
  return [...m.series.values()]
    .map((s) => [labelText(s.labels), s] as const)
    .sort(compareByKey)
    .map(([, s]) => s as S);
}

/** Writes `metrics` in the text format. Metrics without series still get HELP and TYPE. */
export function prometheusText(metrics: readonly Metric[]): string {
  const out: string[] = [];
  for (const m of metrics) {
    out.push(`# HELP ${m.name} ${escapeHelp(m.help)}`);
    out.push(`# TYPE ${m.name} ${m.type}`);
    if (m.type === "histogram") {
      for (const s of sortedSeries<HistogramSeries>(m)) {
        let cumulative = 0;
        s.buckets.forEach((le, i) => {
          cumulative += s.counts[i] as number;
          out.push(
            `${m.name}_bucket${labelText(s.labels, ["le", formatSampleValue(le)])} ${cumulative}`,
          );
        });
        out.push(`${m.name}_bucket${labelText(s.labels, ["le", "+Inf"])} ${s.count}`);
        out.push(`${m.name}_sum${labelText(s.labels)} ${formatSampleValue(s.sum)}`);
        out.push(`${m.name}_count${labelText(s.labels)} ${s.count}`);
      }
    } else {
      for (const s of sortedSeries<ValueSeries>(m))
        out.push(`${m.name}${labelText(s.labels)} ${formatSampleValue(s.value)}`);
    }
  }
  return `${out.join("\n")}\n`;
}
