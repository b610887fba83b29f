/**
 * Benchmark harness: groups of measurements printed as a table, or with --json as one
 * JSON object per line: {"metric": NAME, "value": NUMBER, "unit": TEXT}. Benchmarks are
 * not tests: they report, they do not assert. Each figure is the median of its runs.
 */

export interface Metric {
  readonly metric: string;
  readonly value: number;
  readonly unit: string;
  /** Extra context for the table (not part of the JSON line contract). */
  readonly note?: string;
}

export interface BenchGroup {
  readonly name: string;
  readonly description: string;
  /**
   * Node flags the group's process must run with (bench/run.ts runs the group in a child
   * process with them when this one lacks them), e.g. a heap setting the group's figures
   * are measured with.
   */
  readonly nodeFlags?: readonly string[];
  /**
   * Run from compiled JavaScript (bench/run.ts bundles the benchmarks with esbuild and
   * runs the group from the bundle in a child process), as the library runs from `dist/`,
   * instead of through tsx's loader, which wraps every named function to keep its name:
   * for a group that creates hundreds of thousands of closures (a simulated 1 000-member
   * cluster) that wrapper alone costs a tenth of the wall time.
   */
  readonly compiled?: boolean;
  run(report: (m: Metric) => void): Promise<void>;
}

let only: readonly string[] = [];

/**
 * Restricts the parts a group runs (`--only=<prefix>[,<prefix>...]` on bench/run.ts): a
 * part runs when one of its metric names starts with one of the prefixes. Empty: all.
 */
export function setOnly(prefixes: readonly string[]): void {
  only = prefixes;
}

/**
 * Whether the part whose metrics start with `part` should run under the current `--only`
 * filter: a prefix matches the part or one of its metrics (either starts with the other).
 */
export function wants(part: string): boolean {
  return only.length === 0 || only.some((p) => p.startsWith(part) || part.startsWith(p));
}

/**
 * Like `wants`, but false without `--only`: for diagnostic parts that a group runs only
 * on request (so that the whole group stays within its time budget).
 */
export function wantsOnRequest(part: string): boolean {
  return only.length > 0 && wants(part);
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i] as number;
}

/** Runs `fn` `runs` times after `warmup` runs and returns every measured result. */
export async function repeat(
  runs: number,
  warmup: number,
  fn: () => Promise<number>,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) out.push(await fn());
  return out;
}

export function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
}

export function hasGc(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === "function";
}

export function formatTable(rows: readonly Metric[]): string {
  const fmt = (v: number) =>
    Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en-US") : String(Math.round(v * 100) / 100);
  const cells = rows.map((r) => [r.metric, fmt(r.value), r.unit, r.note ?? ""]);
  const head = ["metric", "value", "unit", "note"];
  const widths = head.map((h, i) =>
    Math.max(h.length, ...cells.map((c) => (c[i] as string).length)),
  );
  const line = (c: string[]) =>
    c
      .map((x, i) => (i === 1 ? x.padStart(widths[i] as number) : x.padEnd(widths[i] as number)))
      .join("  ");
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

/** Upper bounds (µs) of the latency histogram's buckets; the last bucket is open. */
const HISTOGRAM_BOUNDS_US = [50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000];

/**
 * Latency histogram of `valuesUs` as text (one line per bucket: bound, count, share,
 * cumulative share), printed by the latency benches when SHARDKIT_BENCH_HISTOGRAM=1
 * (docs/performance.md compares them before and after).
 */
export function latencyHistogram(title: string, valuesUs: readonly number[]): string {
  const counts = new Array<number>(HISTOGRAM_BOUNDS_US.length + 1).fill(0);
  for (const v of valuesUs) {
    let i = HISTOGRAM_BOUNDS_US.findIndex((b) => v <= b);
    if (i < 0) i = HISTOGRAM_BOUNDS_US.length;
    counts[i] = (counts[i] ?? 0) + 1;
  }
  const n = Math.max(1, valuesUs.length);
  let cumulative = 0;
  const lines = [`${title} (${valuesUs.length} samples)`];
  counts.forEach((c, i) => {
    cumulative += c;
    const bound = HISTOGRAM_BOUNDS_US[i];
    const label = bound === undefined ? `> ${HISTOGRAM_BOUNDS_US.at(-1)} µs` : `<= ${bound} µs`;
    lines.push(
      `  ${label.padEnd(14)} ${String(c).padStart(8)}  ${((100 * c) / n).toFixed(2).padStart(6)} %  ${((100 * cumulative) / n).toFixed(2).padStart(6)} %`,
    );
  });
  return lines.join("\n");
}

/** True when the latency benches should print their histograms (to stderr). */
export const wantsHistogram = (): boolean => process.env.SHARDKIT_BENCH_HISTOGRAM === "1";

/** One timed run of one-way messages: rate at the receiver, CPU per message on each side. */
export interface StreamRun {
  readonly rate: number;
  readonly receiverNs: number;
  readonly senderNs: number;
  /**
   * Share of the run the receiver's and the sender's event loops were busy (not waiting
   * in the poll for I/O), from `performance.eventLoopUtilization`. Both below 1 with the
   * rate below what the CPU per message allows: the pipeline, not a process, bounds
   * the rate.
   */
  readonly receiverBusy: number;
  readonly senderBusy: number;
}

/**
 * Reports `throughputMetric`, `<cpuPrefix>.receiver.cpu.ns` and `<cpuPrefix>.sender.cpu.ns`
 * as the medians of `runs` (the remote and remote-floor groups).
 */
const pct = (share: number) => `${(share * 100).toFixed(0)} %`;

export function reportStreamRuns(
  throughputMetric: string,
  cpuPrefix: string,
  runs: readonly StreamRun[],
  runMs: number,
  report: (m: Metric) => void,
): void {
  report({
    metric: throughputMetric,
    value: median(runs.map((r) => r.rate)),
    unit: "msg/s",
    note: `~100 B msgs, ${runMs} ms runs, at the receiver; event loops busy ${pct(median(runs.map((r) => r.receiverBusy)))} (receiver), ${pct(median(runs.map((r) => r.senderBusy)))} (sender)`,
  });
  report({
    metric: `${cpuPrefix}.receiver.cpu.ns`,
    value: median(runs.map((r) => r.receiverNs)),
    unit: "ns/msg",
    note: "receiver process CPU (user+sys) per message",
  });
  report({
    metric: `${cpuPrefix}.sender.cpu.ns`,
    value: median(runs.map((r) => r.senderNs)),
    unit: "ns/msg",
    note: "sender process CPU (user+sys) per message",
  });
}
