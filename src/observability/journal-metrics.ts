/**
 * Journal metrics: a Journal that records write latency, batch size, failures, conflicts
 * and replay (recovery) time into a registry, then delegates. Wrapping the port keeps the
 * journals themselves unchanged; what is measured is what a writer waits for.
 *
 * Label `journal` names the wrapped journal (bounded: one per store the application has).
 */
import { ShardkitError } from "../base/errors.js";
import type { Clock } from "../ports/clock.js";
import type { Journal, JournalEvent, PersistedEvent, WriteFence } from "../ports/journal.js";
import { type MetricsRegistry, SIZE_BUCKETS } from "./metrics-registry.js";

const JOURNAL_METRICS = new WeakMap<MetricsRegistry, ReturnType<typeof defineJournalMetrics>>();

function defineJournalMetrics(r: MetricsRegistry) {
  return {
    writeSeconds: r.histogram({
      name: "shardkit_journal_write_duration_seconds",
      help: "Time from a journal append to its acknowledgement (or failure).",
      labelNames: ["journal"],
    }),
    batchSize: r.histogram({
      name: "shardkit_journal_write_batch_size",
      help: "Events per journal append.",
      labelNames: ["journal"],
      buckets: SIZE_BUCKETS,
    }),
    failures: r.counter({
      name: "shardkit_journal_write_failures_total",
      help: "Journal appends that failed (conflicts included), by error code.",
      labelNames: ["journal", "code"],
    }),
    conflicts: r.counter({
      name: "shardkit_journal_conflicts_total",
      help: "Journal appends refused with a sequence-number conflict (another writer).",
      labelNames: ["journal"],
    }),
    recoverySeconds: r.histogram({
      name: "shardkit_journal_recovery_duration_seconds",
      help: "Time of a journal replay read (recovery of a persistent entity, page by page).",
      labelNames: ["journal"],
    }),
  };
}

/**
 * Wraps `journal` so that its appends and reads are measured in `registry` under the
 * label `journal=name`. `clock` gives monotonic ms (the node's `system.runtime.clock`).
 */
export function instrumentJournal(
  journal: Journal,
  registry: MetricsRegistry,
  clock: Clock,
  name = "default",
): Journal {
  let m = JOURNAL_METRICS.get(registry);
  if (m === undefined) {
    m = defineJournalMetrics(registry);
    JOURNAL_METRICS.set(registry, m);
  }
  const metrics = m;
  const labels = { journal: name };
  const writeSeconds = metrics.writeSeconds.labels(labels);
  const batchSize = metrics.batchSize.labels(labels);
  const recoverySeconds = metrics.recoverySeconds.labels(labels);
  const conflicts = metrics.conflicts.labels(labels);
  const advanceFence = journal.advanceFence?.bind(journal);
  return {
    // fenced writes pass through (docs/sharding.md, "Leases and fencing")
    ...(advanceFence === undefined ? {} : { advanceFence }),
    async append(
      persistenceId: string,
      expectedSeqNr: number,
      events: readonly JournalEvent[],
      fence?: WriteFence,
    ) {
      const start = clock.now();
      batchSize.observe(events.length);
      try {
        await journal.append(persistenceId, expectedSeqNr, events, fence);
      } catch (error) {
        const code = error instanceof ShardkitError ? error.code : "UNKNOWN";
        metrics.failures.labels({ journal: name, code }).inc();
        if (code === "JOURNAL_CONFLICT") conflicts.inc();
        throw error;
      } finally {
        writeSeconds.observe((clock.now() - start) / 1000);
      }
    },
    async read(
      persistenceId: string,
      fromSeqNr: number,
      toSeqNr: number,
      max?: number,
    ): Promise<readonly PersistedEvent[]> {
      const start = clock.now();
      try {
        return await journal.read(persistenceId, fromSeqNr, toSeqNr, max);
      } finally {
        recoverySeconds.observe((clock.now() - start) / 1000);
      }
    },
    highestSequenceNr: (persistenceId) => journal.highestSequenceNr(persistenceId),
    deleteTo: (persistenceId, toSeqNr) => journal.deleteTo(persistenceId, toSeqNr),
    close: () => journal.close(),
  };
}
