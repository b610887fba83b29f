/**
 * A Journal that hands every call to `inner`. The tests' slow, gated, failing and checked
 * journals extend it and override only what they change (usually `append`). Like the
 * wrappers it replaces, it has no `advanceFence`: a subclass that supports fencing adds it.
 */
import type { Journal } from "../../src/ports/journal.js";

export class JournalWrapper<J extends Journal = Journal> implements Journal {
  constructor(readonly inner: J) {}
  append(...args: Parameters<Journal["append"]>): Promise<void> {
    return this.inner.append(...args);
  }
  read(...args: Parameters<Journal["read"]>) {
    return this.inner.read(...args);
  }
  highestSequenceNr(persistenceId: string): Promise<number> {
    return this.inner.highestSequenceNr(persistenceId);
  }
  deleteTo(persistenceId: string, toSeqNr: number): Promise<void> {
    return this.inner.deleteTo(persistenceId, toSeqNr);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
