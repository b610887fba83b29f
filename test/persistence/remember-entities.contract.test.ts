/**
 * Contract of the RememberEntitiesStore port, run against the in-memory store and the
 * journal-backed store on memory, SQLite and PostgreSQL (when SHARDKIT_PG_URL is set;
 * otherwise a visible SKIP line). The journal-backed store is also checked across two
 * "nodes" (two store instances on one database), the way a shard moves between regions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import { JournalRememberEntitiesStore } from "../../src/cluster/sharding/journal-remember-entities-store.js";
import {
  coordinatorPersistenceId,
  rememberPersistenceId,
} from "../../src/cluster/sharding/sharding-store-codec.js";
import { MemoryRememberEntitiesStore } from "../../src/persistence/memory/memory-remember-entities-store.js";
import {
  InvalidRememberBatchError,
  type RememberEntitiesStore,
} from "../../src/ports/remember-entities-store.js";
import { type Backend, persistenceBackends } from "./journal-backends.js";

let clock = 1_000;
const now = () => clock++;
let counter = 0;
const uidType = () => `T${process.pid}x${counter++}`;

type Maker = () => { store: () => RememberEntitiesStore; teardown: () => Promise<void> };

const makers: [string, Maker][] = [
  [
    "memory store",
    () => {
      const s = new MemoryRememberEntitiesStore();
      return { store: () => s, teardown: async () => undefined };
    },
  ],
  ...persistenceBackends("remember").map(([name, make]): [string, Maker] => [
    `journal store on ${name}`,
    () => {
      const b = make();
      const opened = b.open();
      return {
        store: () => new JournalRememberEntitiesStore(opened.journal, opened.snapshots, now),
        teardown: () => b.teardown(),
      };
    },
  ]),
];

describe.each(makers)("RememberEntitiesStore contract: %s", (_name, make) => {
  let env: ReturnType<Maker>;
  let s: RememberEntitiesStore;
  beforeAll(() => {
    env = make();
    s = env.store();
  });
  afterAll(() => env.teardown());

  it("remembers started and forgets stopped entities per type and shard", async () => {
    const cart = uidType();
    const user = uidType();
    await s.update(cart, "1", { started: ["a", "b", "c"], stopped: [] });
    await s.update(cart, "1", { started: ["d"], stopped: ["b"] });
    await s.update(cart, "2", { started: ["x"], stopped: [] });
    await s.update(user, "1", { started: ["u"], stopped: [] });
    expect(await s.getEntities(cart, "1")).toEqual(["a", "c", "d"]);
    expect(await s.getEntities(cart, "2")).toEqual(["x"]);
    expect(await s.getEntities(user, "1")).toEqual(["u"]);
    expect(await s.getEntities(cart, "3")).toEqual([]);
  });

  it("is idempotent: applying a batch twice changes nothing more", async () => {
    const t = uidType();
    const batch = { started: ["a"], stopped: ["z"] };
    await s.update(t, "s", batch);
    await s.update(t, "s", batch);
    expect(await s.getEntities(t, "s")).toEqual(["a"]);
  });

  it("rejects a batch naming an entity twice, changing nothing", async () => {
    const t = uidType();
    await s.update(t, "s", { started: ["a"], stopped: [] });
    await expect(s.update(t, "s", { started: ["b"], stopped: ["b"] })).rejects.toBeInstanceOf(
      InvalidRememberBatchError,
    );
    expect(await s.getEntities(t, "s")).toEqual(["a"]);
  });

  it("keeps entity ids of any shape (unicode, separators, empty batches)", async () => {
    const t = uidType();
    const ids = ["ä/ö|x", " sp ace ", "%2F", "🙂", "a".repeat(300)];
    await s.update(t, "shard|/1", { started: ids, stopped: [] });
    await s.update(t, "shard|/1", { started: [], stopped: [] });
    expect(await s.getEntities(t, "shard|/1")).toEqual([...ids].sort());
  });

  it("a second store on the same data sees the writes and can write after them", async () => {
    const t = uidType();
    const other = env.store();
    await s.update(t, "1", { started: ["a"], stopped: [] });
    // The shard moves to the other node: it loads, then writes.
    expect(await other.getEntities(t, "1")).toEqual(["a"]);
    await other.update(t, "1", { started: ["b"], stopped: [] });
    // Back on the first node, which still caches its old view: the write must not be lost.
    await s.update(t, "1", { started: ["c"], stopped: ["a"] });
    expect(await other.getEntities(t, "1")).toEqual(["b", "c"]);
    expect(await s.getEntities(t, "1")).toEqual(["b", "c"]);
  });
});

describe.each(persistenceBackends("remember_compact"))(
  "JournalRememberEntitiesStore on %s",
  (_name, make) => {
    let backend: Backend;
    beforeAll(() => {
      backend = make();
    });
    afterAll(() => backend.teardown());

    it("snapshots every snapshotAfterEvents batches and deletes the events before", async () => {
      const { journal, snapshots } = backend.open();
      const t = uidType();
      const s = new JournalRememberEntitiesStore(journal, snapshots, now, {
        snapshotAfterEvents: 5,
      });
      for (let i = 0; i < 12; i++)
        await s.update(t, "7", { started: [`e${i}`], stopped: i > 0 ? [`e${i - 1}`] : [] });
      const pid = rememberPersistenceId(t, "7");
      expect(await journal.highestSequenceNr(pid)).toBe(12);
      // Events up to the last snapshot (at 10) are gone; 11 and 12 remain.
      const left = await journal.read(pid, 1, 12);
      expect(left.map((e) => e.sequenceNr)).toEqual([11, 12]);
      expect((await snapshots.loadLatest(pid))?.sequenceNr).toBe(10);
      const fresh = new JournalRememberEntitiesStore(journal, snapshots, now);
      expect(await fresh.getEntities(t, "7")).toEqual(["e11"]);
      expect(pid.startsWith("/sharding/")).toBe(true);
      expect(coordinatorPersistenceId(t)).toBe(`/sharding/${t}/coordinator`);
    });

    it("rejects an invalid snapshotAfterEvents with a ConfigError", () => {
      const { journal, snapshots } = backend.open();
      expect(
        () => new JournalRememberEntitiesStore(journal, snapshots, now, { snapshotAfterEvents: 0 }),
      ).toThrow(ConfigError);
    });
  },
);
