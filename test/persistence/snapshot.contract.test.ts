/**
 * P1: one contract suite for the SnapshotStore port, run against memory, SQLite and
 * PostgreSQL (when SHARDKIT_PG_URL is set; otherwise a visible SKIP line).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import { MemorySnapshotStore } from "../../src/persistence/memory/memory-snapshot-store.js";
import {
  type SnapshotStore,
  SnapshotTooLargeError,
  type StoredSnapshot,
} from "../../src/ports/snapshot-store.js";
import { type Backend, persistenceBackends } from "./journal-backends.js";

const enc = new TextEncoder();
const dec = new TextDecoder();
const snap = (text: string, serializerId = 1) => ({ serializerId, bytes: enc.encode(text) });
const text = (s: StoredSnapshot | undefined) => (s === undefined ? undefined : dec.decode(s.bytes));

let counter = 0;
const uid = (what: string) => `${what}-${process.pid}-${counter++}`;

describe.each(persistenceBackends("snapshot"))("SnapshotStore contract: %s", (_name, make) => {
  let backend: Backend;
  let s: SnapshotStore;
  beforeAll(() => {
    backend = make();
    s = backend.open().snapshots;
  });
  afterAll(async () => {
    await backend.teardown();
  });

  /** Snapshots at seq 10, 20, 30 taken at times 1000, 2000, 3000. */
  async function three(id: string): Promise<void> {
    await s.save(id, 10, 1_000, snap("s10"));
    await s.save(id, 30, 3_000, snap("s30", 0xffff_ffff));
    await s.save(id, 20, 2_000, snap("s20", 101));
  }

  it("loads the latest snapshot with every field; none for an unknown id", async () => {
    const id = uid("latest");
    expect(await s.loadLatest(id)).toBeUndefined();
    await three(id);
    const latest = await s.loadLatest(id);
    expect(latest).toEqual({
      persistenceId: id,
      sequenceNr: 30,
      timestampMs: 3_000,
      serializerId: 0xffff_ffff,
      bytes: enc.encode("s30"),
    });
    expect(latest?.bytes.constructor).toBe(Uint8Array);
  });

  it("loadLatest honours sequence number and timestamp criteria", async () => {
    const id = uid("criteria");
    await three(id);
    expect(text(await s.loadLatest(id, { maxSeqNr: 29 }))).toBe("s20");
    expect(text(await s.loadLatest(id, { maxSeqNr: 20 }))).toBe("s20");
    expect(text(await s.loadLatest(id, { maxTimestampMs: 1_999 }))).toBe("s10");
    expect(text(await s.loadLatest(id, { maxSeqNr: 25, maxTimestampMs: 1_500 }))).toBe("s10");
    expect(text(await s.loadLatest(id, { minSeqNr: 11, maxSeqNr: 29 }))).toBe("s20");
    expect(text(await s.loadLatest(id, { minTimestampMs: 3_001 }))).toBeUndefined();
    expect(await s.loadLatest(id, { maxSeqNr: 9 })).toBeUndefined();
    expect((await s.loadLatest(id, { maxSeqNr: 20 }))?.serializerId).toBe(101);
  });

  it("saving again at a sequence number replaces that snapshot", async () => {
    const id = uid("replace");
    await s.save(id, 5, 100, snap("old"));
    await s.save(id, 5, 200, snap("new", 7));
    const got = await s.loadLatest(id);
    expect(text(got)).toBe("new");
    expect(got?.timestampMs).toBe(200);
    expect(got?.serializerId).toBe(7);
    await s.deleteUpTo(id, { maxSeqNr: 5 });
    expect(await s.loadLatest(id)).toBeUndefined(); // only one row existed
  });

  it("deleteUpTo removes exactly the matching snapshots of that id", async () => {
    const id = uid("delete");
    const bystander = uid("bystander");
    await three(id);
    await three(bystander);
    await s.deleteUpTo(id, { maxSeqNr: 20 });
    expect(text(await s.loadLatest(id))).toBe("s30");
    expect(await s.loadLatest(id, { maxSeqNr: 29 })).toBeUndefined();
    await three(id);
    await s.deleteUpTo(id, { maxTimestampMs: 1_000 });
    expect(text(await s.loadLatest(id, { maxSeqNr: 29 }))).toBe("s20");
    expect(await s.loadLatest(id, { maxSeqNr: 19 })).toBeUndefined();
    await s.deleteUpTo(id, {});
    expect(await s.loadLatest(id)).toBeUndefined();
    expect(text(await s.loadLatest(bystander))).toBe("s30");
    expect(text(await s.loadLatest(bystander, { maxSeqNr: 10 }))).toBe("s10");
  });

  it("round-trips a large snapshot byte for byte", async () => {
    const id = uid("large");
    const big = new Uint8Array(6 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 131 + (i >>> 13)) & 0xff;
    await s.save(id, 1, 1, { serializerId: 2, bytes: big });
    const got = await s.loadLatest(id);
    expect(got?.bytes.byteLength).toBe(big.byteLength);
    expect(Buffer.compare(got?.bytes as Uint8Array, big)).toBe(0);
  });
});

describe("snapshot settings", () => {
  it("refuses a snapshot beyond snapshotBytesMax with SnapshotTooLargeError", async () => {
    const s = new MemorySnapshotStore({ snapshot: { snapshotBytesMax: 4 } });
    await s.save("id", 1, 1, { serializerId: 1, bytes: new Uint8Array(4) });
    const error = await s
      .save("id", 2, 1, { serializerId: 1, bytes: new Uint8Array(5) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotTooLargeError);
    expect(error).toMatchObject({ code: "SNAPSHOT_TOO_LARGE" });
    expect((await s.loadLatest("id"))?.sequenceNr).toBe(1);
  });

  it("rejects an invalid snapshotBytesMax with ConfigError", () => {
    expect(() => new MemorySnapshotStore({ snapshot: { snapshotBytesMax: 0 } })).toThrow(
      ConfigError,
    );
  });
});
