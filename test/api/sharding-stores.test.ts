/** Which stores a sharded entity type gets from its options, and the typed errors for bad ones. */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import { JournalCoordinatorStore } from "../../src/cluster/sharding/coordinator-store.js";
import { JournalRememberEntitiesStore } from "../../src/cluster/sharding/journal-remember-entities-store.js";
import { resolveShardingStores } from "../../src/cluster/sharding/sharding-type.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { MemoryRememberEntitiesStore } from "../../src/persistence/memory/memory-remember-entities-store.js";
import { MemoryDDataDurableStore } from "../../src/ports/ddata-durable-store.js";

const now = () => 0;
const journal = new MemoryJournal();

describe("resolveShardingStores", () => {
  it("defaults to regions recovery and no remembering", () => {
    const r = resolveShardingStores("T", {}, undefined, now);
    expect(r).toEqual({
      rememberEntities: false,
      rememberStore: undefined,
      coordinatorStore: undefined,
      ddata: undefined,
    });
  });

  it("uses the journal for the coordinator and remembered entities when persistence is given", () => {
    const r = resolveShardingStores(
      "T",
      { persistence: { journal }, rememberEntities: true },
      undefined,
      now,
    );
    expect(r.coordinatorStore?.()).toBeInstanceOf(JournalCoordinatorStore);
    expect(r.rememberStore).toBeInstanceOf(JournalRememberEntitiesStore);
    expect(r.rememberEntities).toBe(true);
  });

  it("keeps regions recovery when asked, and takes an explicit remember store", () => {
    const store = new MemoryRememberEntitiesStore();
    const r = resolveShardingStores(
      "T",
      {
        persistence: { journal },
        stateStoreMode: "regions",
        rememberEntities: true,
        rememberEntitiesStore: store,
      },
      undefined,
      now,
    );
    expect(r.coordinatorStore).toBeUndefined();
    expect(r.rememberStore).toBe(store);
  });

  it("takes rememberEntities from the option only: in the settings it is a ConfigError naming the key", () => {
    const store = new MemoryRememberEntitiesStore();
    for (const part of ["shard", "coordinator"] as const) {
      const settings = { [part]: { rememberEntities: true } } as never;
      expect(() =>
        resolveShardingStores("T", { rememberEntitiesStore: store }, settings, now),
      ).toThrow(new RegExp(`settings\\.${part}\\.rememberEntities`));
      expect(() =>
        resolveShardingStores("T", { rememberEntitiesStore: store }, settings, now),
      ).toThrow(ConfigError);
    }
    const r = resolveShardingStores(
      "T",
      { rememberEntitiesStore: store, rememberEntities: true },
      {},
      now,
    );
    expect(r.rememberEntities).toBe(true);
  });

  it("ddata: stores come from the type's replicator at start; durable keys by default with remembering", () => {
    const disk = new MemoryDDataDurableStore();
    const r = resolveShardingStores(
      "T",
      { stateStoreMode: "ddata", rememberEntities: true, ddata: { durableStore: disk } },
      undefined,
      now,
    );
    expect(r.coordinatorStore).toBeUndefined();
    expect(r.rememberStore).toBeUndefined();
    expect(r.ddata?.durableStore).toBe(disk);
    expect(r.ddata?.majorityTimeoutMs).toBe(5_000);
    // without remembering, nothing is durable unless asked
    const plain = resolveShardingStores("T", { stateStoreMode: "ddata" }, undefined, now);
    expect(plain.ddata?.durableStore).toBeUndefined();
    const off = resolveShardingStores(
      "T",
      { stateStoreMode: "ddata", rememberEntities: true, ddata: { durableKeys: false } },
      undefined,
      now,
    );
    expect(off.ddata?.durableStore).toBeUndefined();
  });

  it("rejects modes that lack their store with a ConfigError naming the setting", () => {
    const bad: [Parameters<typeof resolveShardingStores>[1], string][] = [
      [{ stateStoreMode: "persistence" }, "stateStoreMode"],
      [{ stateStoreMode: "other" as never, persistence: { journal } }, "stateStoreMode"],
      [{ ddata: {} }, "ddata"],
      [{ stateStoreMode: "ddata", rememberEntities: true }, "ddata.durableStore"],
      [{ stateStoreMode: "ddata", ddata: { durableKeys: true } }, "ddata.durableStore"],
      [{ stateStoreMode: "ddata", ddata: { majorityTimeoutMs: 0 } }, "ddata.majorityTimeoutMs"],
      [{ stateStoreMode: "ddata", ddata: { majorityMinCap: -1 } }, "ddata.majorityMinCap"],
      [{ rememberEntities: true }, "rememberEntities"],
      [{ rememberEntities: "yes" as never }, "rememberEntities"],
      [{ persistence: { journal: {} as never } }, "persistence.journal"],
    ];
    for (const [options, key] of bad) {
      let error: unknown;
      try {
        resolveShardingStores("T", options, undefined, now);
      } catch (e) {
        error = e;
      }
      expect(error, key).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain(key);
    }
  });
});
