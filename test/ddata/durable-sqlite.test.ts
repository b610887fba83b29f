/** Durable keys on SQLite: round trip, loaded before serving, corrupt files named in errors. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ddataKey, Replicator } from "../../src/api/ddata.js";
import { ORSet } from "../../src/core/ddata/index.js";
import { SqliteDDataStore } from "../../src/persistence/sqlite/sqlite-ddata-store.js";
import { DurableStoreError } from "../../src/ports/ddata-durable-store.js";
import { SimClusterHarness } from "../cluster/sim-cluster.js";

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "sk-ddata-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const KEY = ddataKey<ORSet<string>>("entities");

describe("SqliteDDataStore", () => {
  it("keeps entries across reopen", () => {
    const path = join(tmp(), "ddata.db");
    const s = new SqliteDDataStore({ path });
    s.store("a", { serializerId: 1, bytes: Uint8Array.of(1, 2, 3) });
    s.store("a", { serializerId: 1, bytes: Uint8Array.of(4) });
    s.close();
    const again = new SqliteDDataStore({ path });
    expect([...again.loadAll()].map(([k, e]) => [k, e.serializerId, [...e.bytes]])).toEqual([
      ["a", 1, [4]],
    ]);
    again.close();
  });

  it("a file that is not a database fails with an error naming the file", () => {
    const path = join(tmp(), "corrupt.db");
    writeFileSync(
      path,
      "this is not a sqlite database, just some text that is long enough ".repeat(20),
    );
    expect(() => new SqliteDDataStore({ path })).toThrow(DurableStoreError);
    expect(() => new SqliteDDataStore({ path })).toThrow(path);
  });

  it("a replicator loads its durable keys before serving, and a corrupt entry names file and key", async () => {
    const path = join(tmp(), "node.db");
    const h = new SimClusterHarness(1);
    const m = await h.member("a", { seedNodes: ["a:2552"] });
    await h.until(() => m.cluster.selfMember?.status === "up", 20_000);
    const store = new SqliteDDataStore({ path });
    const r = Replicator.start(m, { durableKeys: ["entit*"], durableStore: store });
    let done = false;
    r.update(KEY, ORSet.empty<string>(), (s) => s.add(r.selfNode, "e1")).then(() => {
      done = true;
    });
    await h.until(() => done, 1_000);
    r.stop();
    store.close();

    const h2 = new SimClusterHarness(2);
    const m2 = await h2.member("a", { seedNodes: ["a:2552"] });
    const store2 = new SqliteDDataStore({ path });
    const r2 = Replicator.start(m2, {
      name: "ddata2",
      durableKeys: ["entit*"],
      durableStore: store2,
    });
    let value: ORSet<string> | undefined;
    r2.get(KEY).then((v) => {
      value = v;
    });
    await h2.until(() => value !== undefined, 1_000);
    expect(value?.has("e1")).toBe(true);
    // Corrupt the stored bytes: the next start fails naming the file and the key.
    store2.store(KEY.id, { serializerId: 1, bytes: Uint8Array.of(0xc1, 0xc1) });
    r2.stop();
    expect(() =>
      Replicator.start(m2, { name: "ddata3", durableKeys: ["*"], durableStore: store2 }),
    ).toThrow(new RegExp(`${path}.*entities`));
    store2.close();
  });
});
