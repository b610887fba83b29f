/**
 * Journal tracing (docs/observability.md, "Tracing"): a Journal whose appends made inside
 * a span (an entity handler of a traced message, or the application's own span) get a
 * `shardkit.journal.append` child span, then delegates. Appends outside any span are not
 * traced. Wrapping the port keeps the journals and the event-sourced behaviour unchanged;
 * the span measures what the writer waits for (with group commit: its batch's round trip).
 */
import { ShardkitError } from "../base/errors.js";
import { SpanNames } from "../cluster/sharding/traced-message.js";
import type { Journal, JournalEvent, WriteFence } from "../ports/journal.js";
import { TraceSpanKind, type Tracing } from "../ports/tracing.js";

/** Attribute keys of the journal span. */
export const JournalSpanAttributes = {
  JOURNAL: "shardkit.journal.name",
  PERSISTENCE_ID: "shardkit.persistence.id",
  EVENTS: "shardkit.journal.events",
  FIRST_SEQ_NR: "shardkit.journal.first_seq_nr",
  ERROR_CODE: "shardkit.error.code",
} as const;

/**
 * `journal` with append spans when `node` traces (ClusterNodeOptions.tracing); the
 * journal itself when it does not. `name` is the `shardkit.journal.name` attribute.
 */
export function traceJournal(
  journal: Journal,
  node: { readonly tracing: Tracing | undefined },
  name = "default",
): Journal {
  const { tracing } = node;
  return tracing === undefined ? journal : new TracedJournal(journal, tracing, name);
}

class TracedJournal implements Journal {
  /** Fenced writes pass through (docs/sharding.md, "Leases and fencing"). */
  readonly advanceFence?: (fence: WriteFence) => Promise<void>;

  constructor(
    private readonly journal: Journal,
    private readonly tracing: Tracing,
    private readonly name: string,
  ) {
    const advance = journal.advanceFence?.bind(journal);
    if (advance !== undefined) this.advanceFence = advance;
  }

  append(
    persistenceId: string,
    expectedSeqNr: number,
    events: readonly JournalEvent[],
    fence?: WriteFence,
  ): Promise<void> {
    const parent = this.tracing.active();
    if (parent === undefined)
      return this.journal.append(persistenceId, expectedSeqNr, events, fence);
    const span = this.tracing.start(SpanNames.JOURNAL_APPEND, TraceSpanKind.CLIENT, parent, {
      [JournalSpanAttributes.JOURNAL]: this.name,
      [JournalSpanAttributes.PERSISTENCE_ID]: persistenceId,
      [JournalSpanAttributes.EVENTS]: events.length,
      [JournalSpanAttributes.FIRST_SEQ_NR]: expectedSeqNr,
    });
    let appended: Promise<void>;
    try {
      appended = this.journal.append(persistenceId, expectedSeqNr, events, fence);
    } catch (error) {
      appended = Promise.reject(error);
    }
    return appended.then(
      () => span.end(),
      (error: unknown) => {
        if (error instanceof ShardkitError)
          span.setAttribute(JournalSpanAttributes.ERROR_CODE, error.code);
        span.fail(error);
        span.end();
        throw error;
      },
    );
  }

  read(persistenceId: string, fromSeqNr: number, toSeqNr: number, max?: number) {
    return this.journal.read(persistenceId, fromSeqNr, toSeqNr, max);
  }

  highestSequenceNr(persistenceId: string): Promise<number> {
    return this.journal.highestSequenceNr(persistenceId);
  }

  deleteTo(persistenceId: string, toSeqNr: number): Promise<void> {
    return this.journal.deleteTo(persistenceId, toSeqNr);
  }

  close(): Promise<void> {
    return this.journal.close();
  }
}
