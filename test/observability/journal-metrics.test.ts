/**
 * instrumentJournal: appends are timed and their batch sizes recorded, a sequence-number
 * conflict counts as a failure and a conflict, replay reads are timed, and the wrapped
 * journal behaves exactly like the journal (results and errors pass through). It and
 * traceJournal keep fenced writes working (fence and advanceFence pass through).
 */

import * as otel from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { otelTracing } from "../../src/api/otel-tracing.js";
import {
  instrumentJournal,
  MetricsRegistry,
  prometheusText,
  traceJournal,
} from "../../src/observability/index.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import type { Clock } from "../../src/ports/clock.js";

const ev = (n: number) => ({ serializerId: 1, bytes: new Uint8Array([n]), timestampMs: 0 });

describe("instrumentJournal", () => {
  it("records write latency, batch size, conflicts and replay time", {
    timeout: 5_000,
  }, async () => {
    let now = 0;
    const clock: Clock = { now: () => (now += 2) };
    const r = new MetricsRegistry();
    const j = instrumentJournal(new MemoryJournal(), r, clock, "orders");
    await j.append("p1", 1, [ev(1), ev(2), ev(3)]);
    await j.append("p1", 4, [ev(4)]);
    await expect(j.append("p1", 2, [ev(9)])).rejects.toMatchObject({ code: "JOURNAL_CONFLICT" });
    const read = await j.read("p1", 1, 10);
    expect(read.map((e) => e.sequenceNr)).toEqual([1, 2, 3, 4]);
    expect(await j.highestSequenceNr("p1")).toBe(4);
    const text = prometheusText(r.collect());
    expect(text).toContain('shardkit_journal_write_duration_seconds_count{journal="orders"} 3');
    expect(text).toContain('shardkit_journal_write_duration_seconds_sum{journal="orders"} 0.006');
    expect(text).toContain('shardkit_journal_write_batch_size_bucket{journal="orders",le="1"} 2');
    expect(text).toContain('shardkit_journal_write_batch_size_bucket{journal="orders",le="5"} 3');
    expect(text).toContain('shardkit_journal_conflicts_total{journal="orders"} 1');
    expect(text).toContain(
      'shardkit_journal_write_failures_total{journal="orders",code="JOURNAL_CONFLICT"} 1',
    );
    expect(text).toContain('shardkit_journal_recovery_duration_seconds_count{journal="orders"} 1');
    // a second journal on the same registry shares the metrics under its own label
    const k = instrumentJournal(new MemoryJournal(), r, clock, "audit");
    await k.append("q", 1, [ev(1)]);
    expect(prometheusText(r.collect())).toContain(
      'shardkit_journal_write_duration_seconds_count{journal="audit"} 1',
    );
  });
});

describe("journal wrappers and fencing", () => {
  const clock: Clock = { now: () => 0 };
  const wrappers = {
    instrumentJournal: (j: MemoryJournal) => instrumentJournal(j, new MetricsRegistry(), clock),
    traceJournal: (j: MemoryJournal) => traceJournal(j, { tracing: otelTracing(otel) }),
  };
  for (const [name, wrap] of Object.entries(wrappers))
    it(`${name}: a write with an older fencing token is refused`, { timeout: 5_000 }, async () => {
      const j = wrap(new MemoryJournal());
      expect(j.advanceFence).toBeTypeOf("function");
      await j.advanceFence?.({ key: "Cart/1", token: 2 });
      await expect(j.append("p", 1, [ev(1)], { key: "Cart/1", token: 1 })).rejects.toMatchObject({
        code: "FENCED_WRITE",
      });
      await j.append("p", 1, [ev(1)], { key: "Cart/1", token: 2 });
      expect(await j.highestSequenceNr("p")).toBe(1);
    });
});
