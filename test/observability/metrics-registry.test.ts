/**
 * The metrics registry and its Prometheus text exposition: golden text for a fixed set of
 * values, label escaping, the label-cardinality bound (entity ids are never labels; a
 * metric holds at most seriesPerMetricMax series), removal of a member's series, and the
 * OpenTelemetry bridge against a recording meter.
 */
import { describe, expect, it } from "vitest";
import {
  bridgeToOpenTelemetry,
  MetricsRegistry,
  type OtelMeterLike,
  prometheusText,
} from "../../src/observability/index.js";

function fixture(): MetricsRegistry {
  const r = new MetricsRegistry();
  const members = r.gauge({
    name: "shardkit_cluster_members",
    help: "Members by status.",
    labelNames: ["status"],
  });
  members.labels({ status: "up" }).set(3);
  members.labels({ status: "leaving" }).set(1);
  const msgs = r.counter({
    name: "shardkit_remote_messages_total",
    help: "Remote messages.\nSecond line \\ backslash.",
    labelNames: ["direction", "lane"],
  });
  msgs.labels({ direction: "out", lane: "user" }).inc(41);
  msgs.labels({ direction: "out", lane: "user" }).inc();
  msgs.labels({ direction: "in", lane: "user" }).set(7);
  const h = r.histogram({
    name: "shardkit_ask_duration_seconds",
    help: "Ask latency.",
    labelNames: ["type"],
    buckets: [0.01, 0.1, 1],
  });
  const s = h.labels({ type: 'Co"unter\n' });
  for (const v of [0.005, 0.05, 0.05, 0.5, 3]) s.observe(v);
  r.gauge({ name: "shardkit_empty", help: "No series." });
  return r;
}

const GOLDEN = `# HELP shardkit_metrics_series_dropped_total Series not recorded because their metric reached seriesPerMetricMax.
# TYPE shardkit_metrics_series_dropped_total counter
# HELP shardkit_cluster_members Members by status.
# TYPE shardkit_cluster_members gauge
shardkit_cluster_members{status="leaving"} 1
shardkit_cluster_members{status="up"} 3
# HELP shardkit_remote_messages_total Remote messages.\\nSecond line \\\\ backslash.
# TYPE shardkit_remote_messages_total counter
shardkit_remote_messages_total{direction="in",lane="user"} 7
shardkit_remote_messages_total{direction="out",lane="user"} 42
# HELP shardkit_ask_duration_seconds Ask latency.
# TYPE shardkit_ask_duration_seconds histogram
shardkit_ask_duration_seconds_bucket{type="Co\\"unter\\n",le="0.01"} 1
shardkit_ask_duration_seconds_bucket{type="Co\\"unter\\n",le="0.1"} 3
shardkit_ask_duration_seconds_bucket{type="Co\\"unter\\n",le="1"} 4
shardkit_ask_duration_seconds_bucket{type="Co\\"unter\\n",le="+Inf"} 5
shardkit_ask_duration_seconds_sum{type="Co\\"unter\\n"} 3.605
shardkit_ask_duration_seconds_count{type="Co\\"unter\\n"} 5
# HELP shardkit_empty No series.
# TYPE shardkit_empty gauge
`;

describe("Prometheus text exposition", () => {
  it("writes the golden text for a fixed set of values", { timeout: 5_000 }, () => {
    expect(prometheusText(fixture().collect())).toBe(GOLDEN);
  });

  it("runs collectors before each scrape", { timeout: 5_000 }, () => {
    const r = new MetricsRegistry();
    const g = r.gauge({ name: "x", help: "x" });
    let source = 1;
    r.addCollector(() => g.labels().set(source));
    expect(prometheusText(r.collect())).toContain("\nx 1\n");
    source = 5;
    expect(prometheusText(r.collect())).toContain("\nx 5\n");
  });
});

describe("label cardinality", () => {
  it("refuses label names that would carry entity ids", { timeout: 5_000 }, () => {
    const r = new MetricsRegistry();
    for (const l of ["entity", "entity_id", "entityId", "id"])
      expect(() => r.counter({ name: `c_${l}_total`, help: "h", labelNames: [l] })).toThrow(
        /entity ids are never labels/,
      );
    expect(() => r.counter({ name: "bad name", help: "h" })).toThrow(/Prometheus metric name/);
    expect(() => r.counter({ name: "c_total", help: "h", labelNames: ["le"] })).toThrow();
    r.counter({ name: "dup_total", help: "h" });
    expect(() => r.gauge({ name: "dup_total", help: "h" })).toThrow(/not defined already/);
  });

  it("bounds the series of a metric and counts what it drops", { timeout: 5_000 }, () => {
    const r = new MetricsRegistry(3);
    const c = r.counter({ name: "c_total", help: "h", labelNames: ["type"] });
    for (let i = 0; i < 10; i++) c.labels({ type: `t${i}` }).inc();
    expect(c.series.size).toBe(3);
    const text = prometheusText(r.collect());
    expect(text).toContain("shardkit_metrics_series_dropped_total 7");
    expect(text.match(/^c_total\{/gm)?.length).toBe(3);
  });
});

describe("series of a member that left", () => {
  it("are removed from every metric", { timeout: 5_000 }, () => {
    const r = new MetricsRegistry();
    const up = r.gauge({ name: "assoc_up", help: "h", labelNames: ["member"] });
    const fails = r.counter({ name: "fails_total", help: "h", labelNames: ["member", "cause"] });
    up.labels({ member: "s@a:1" }).set(1);
    up.labels({ member: "s@b:1" }).set(1);
    fails.labels({ member: "s@b:1", cause: "refused" }).inc();
    expect(r.removeSeries("member", "s@b:1")).toBe(2);
    const text = prometheusText(r.collect());
    expect(text).toContain('assoc_up{member="s@a:1"} 1');
    expect(text).not.toContain("s@b:1");
  });
});

describe("OpenTelemetry bridge", () => {
  it("exports counters, gauges and histogram observations to a meter", { timeout: 5_000 }, () => {
    const r = fixture();
    const observed: string[] = [];
    const recorded: string[] = [];
    const callbacks: (() => void)[] = [];
    const observable = (name: string) => ({
      addCallback(cb: (res: { observe(v: number, a?: Record<string, string>): void }) => void) {
        callbacks.push(() =>
          cb({ observe: (v, a) => observed.push(`${name} ${JSON.stringify(a)} ${v}`) }),
        );
      },
    });
    const meter: OtelMeterLike = {
      createObservableCounter: (name) => observable(name),
      createObservableGauge: (name) => observable(name),
      createHistogram: (name, opts) => ({
        record: (v, a) => recorded.push(`${name} ${opts?.unit} ${JSON.stringify(a)} ${v}`),
      }),
    };
    const stop = bridgeToOpenTelemetry(r, meter);
    for (const cb of callbacks) cb();
    expect(observed).toContain('shardkit_remote_messages {"direction":"out","lane":"user"} 42');
    expect(observed).toContain('shardkit_cluster_members {"status":"up"} 3');
    r.get("shardkit_ask_duration_seconds");
    const h = r.get("shardkit_ask_duration_seconds");
    if (h === undefined || h.type !== "histogram") throw new Error("no histogram");
    (h.labels({ type: "T" }) as { observe(v: number): void }).observe(0.2);
    expect(recorded).toEqual(['shardkit_ask_duration_seconds s {"type":"T"} 0.2']);
    stop();
    (h.labels({ type: "T" }) as { observe(v: number): void }).observe(0.3);
    expect(recorded.length).toBe(1);
  });
});
