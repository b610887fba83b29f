/**
 * Child of sqlite-kill9.test.ts: appends to `ids` persistence ids in a closed loop (one
 * event at a time per id, through group commit) on the SQLite file argv[2] with
 * synchronous argv[3], and prints every acknowledged append as a JSON line
 * `{"event":"ack","id":..,"seq":..}`. Runs until it is killed.
 */
import { sqlitePersistence } from "../../src/persistence/sqlite/sqlite-persistence.js";

const [path, synchronous, idsArg] = process.argv.slice(2);
const p = sqlitePersistence({
  path: path as string,
  synchronous: synchronous as "full" | "normal",
  walCheckpointIntervalMs: 20,
});
const bytes = new TextEncoder().encode("deposit");
process.stdout.write(`${JSON.stringify({ event: "ready" })}\n`);
await Promise.all(
  Array.from({ length: Number(idsArg) }, async (_, i) => {
    const id = `acct-${i}`;
    for (let seq = 1; ; seq++) {
      await p.journal.append(id, seq, [{ serializerId: 1, bytes, timestampMs: 0 }]);
      process.stdout.write(`${JSON.stringify({ event: "ack", id, seq })}\n`);
    }
  }),
);
