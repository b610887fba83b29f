/**
 * Conflict-check details of the journals not pinned by the contract suite
 * (journal.contract.test.ts): a constraint violation of a single append is a store
 * failure, not a conflict (only a batch is split to find the offender), and a closed
 * memory journal says so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { sqlitePersistence } from "../../src/persistence/sqlite/sqlite-persistence.js";
import { JournalConflictError, JournalRejectedError } from "../../src/ports/journal.js";

const ev = (text: string) => ({
  serializerId: 1,
  bytes: new TextEncoder().encode(text),
  timestampMs: 1_700_000_000_000,
});

describe("journal conflict checks", { timeout: 20_000 }, () => {
  it("sqlite: a constraint violation of an append alone is a store failure, not a conflict", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shardkit-sqlite-"));
    const p = sqlitePersistence({ path: join(dir, "poison-alone.db") });
    try {
      // a trigger stands in for the (otherwise impossible) primary-key violation
      p.db.exec(`CREATE TRIGGER poison BEFORE INSERT ON shardkit_journal
        WHEN NEW.persistence_id = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END`);
      const error = await p.journal.append("poison", 1, [ev("p")]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(JournalConflictError);
      expect(String(error)).toMatch(/poisoned/);
      expect(p.journal.stats()).toMatchObject({ batches: 1, appends: 1 });
      expect(await p.journal.highestSequenceNr("poison")).toBe(0);
    } finally {
      await p.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("memory: an append to a closed journal is rejected as closed, saying so", async () => {
    const j = new MemoryJournal();
    await j.close();
    const error = await j.append("a", 1, [ev("x")]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JournalRejectedError);
    expect((error as JournalRejectedError).message).toMatch(/journal is closed/);
  });
});
