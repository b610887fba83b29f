/**
 * Child of sqlite-close.test.ts: opens the SQLite file argv[2] (background checkpointer
 * on), appends one event, awaits `close()` with nothing else keeping the process alive,
 * then opens the file again and prints what it reads. A close that let the process end
 * while it was awaited would stop this script before the second line.
 */
import { sqlitePersistence } from "../../src/persistence/sqlite/sqlite-persistence.js";

const path = process.argv[2] as string;
const bytes = new TextEncoder().encode("e");
const first = sqlitePersistence({ path, walCheckpointIntervalMs: 10 });
await first.journal.append("p-1", 1, [{ serializerId: 1, bytes, timestampMs: 0 }]);
await first.close();
process.stdout.write(`${JSON.stringify({ event: "closed" })}\n`);
const second = sqlitePersistence({ path, walCheckpointIntervalMs: 10 });
const highest = await second.journal.highestSequenceNr("p-1");
await second.close();
process.stdout.write(`${JSON.stringify({ event: "reopened", highest })}\n`);
