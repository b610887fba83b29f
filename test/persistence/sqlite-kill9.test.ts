/**
 * Durability of an acknowledged append under kill -9 at both `synchronous` levels
 * (docs/persistence.md, "Throughput and durability"): a child process appends in a
 * closed loop on a SQLite file (with the background checkpointer running) and prints
 * each acknowledgement; it is SIGKILLed mid-stream; the file, opened again, holds every
 * acknowledged event, and each id's sequence numbers are 1..n without a hole. (Power
 * loss, where "normal" may lose the last commits, cannot be tested here.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sqlitePersistence } from "../../src/persistence/sqlite/sqlite-persistence.js";
import { kill, spawnNode, waitFor } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";

installChildTeardown("perFile");

const IDS = 40;
/** Acknowledgements to wait for before the kill (several checkpoints happen meanwhile). */
const ACKS_BEFORE_KILL = 3_000;
const dir = mkdtempSync(join(tmpdir(), "shardkit-kill9-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(["normal", "full"] as const)("SQLite synchronous %s", (synchronous) => {
  it("keeps every acknowledged append across kill -9 of the writer", async () => {
    const path = join(dir, `${synchronous}.db`);
    const child = spawnNode(
      "test/persistence/sqlite-kill9-writer.ts",
      [path, synchronous, String(IDS)],
      { name: `writer-${synchronous}` },
    );
    await waitFor(child, (e) => e.event === "ready", 30_000, "writer ready");
    await waitFor(
      child,
      () => child.events.length > ACKS_BEFORE_KILL,
      60_000,
      `${ACKS_BEFORE_KILL} acknowledgements`,
    );
    await kill(child, "SIGKILL");
    const acked = new Map<string, number>();
    for (const e of child.events)
      if (e.event === "ack")
        acked.set(String(e.id), Math.max(acked.get(String(e.id)) ?? 0, Number(e.seq)));
    expect(acked.size).toBe(IDS);
    const p = sqlitePersistence({ path });
    try {
      for (const [id, seq] of acked) {
        const highest = await p.journal.highestSequenceNr(id);
        expect(highest).toBeGreaterThanOrEqual(seq);
        const events = await p.journal.read(id, 1, highest);
        expect(events.map((e) => e.sequenceNr)).toEqual(
          Array.from({ length: highest }, (_, i) => i + 1),
        );
      }
    } finally {
      await p.close();
    }
  }, 120_000);
});
