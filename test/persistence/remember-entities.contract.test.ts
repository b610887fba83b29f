/** Contract of the RememberEntitiesStore port (in-memory; durable stores join later). */
import { describe, expect, it } from "vitest";
import {
  InvalidRememberBatchError,
  MemoryRememberEntitiesStore,
} from "../../src/persistence/memory/memory-remember-entities-store.js";
import type { RememberEntitiesStore } from "../../src/ports/remember-entities-store.js";

describe.each([["memory", () => new MemoryRememberEntitiesStore() as RememberEntitiesStore]])(
  "RememberEntitiesStore contract: %s",
  (_name, make) => {
    it("remembers started and forgets stopped entities per type and shard", async () => {
      const s = make();
      await s.update("Cart", "1", { started: ["a", "b", "c"], stopped: [] });
      await s.update("Cart", "1", { started: ["d"], stopped: ["b"] });
      await s.update("Cart", "2", { started: ["x"], stopped: [] });
      await s.update("User", "1", { started: ["u"], stopped: [] });
      expect(await s.getEntities("Cart", "1")).toEqual(["a", "c", "d"]);
      expect(await s.getEntities("Cart", "2")).toEqual(["x"]);
      expect(await s.getEntities("User", "1")).toEqual(["u"]);
      expect(await s.getEntities("Cart", "3")).toEqual([]);
    });

    it("is idempotent: applying a batch twice changes nothing more", async () => {
      const s = make();
      const batch = { started: ["a"], stopped: ["z"] };
      await s.update("T", "s", batch);
      await s.update("T", "s", batch);
      expect(await s.getEntities("T", "s")).toEqual(["a"]);
    });

    it("rejects a batch naming an entity twice, changing nothing", async () => {
      const s = make();
      await s.update("T", "s", { started: ["a"], stopped: [] });
      await expect(s.update("T", "s", { started: ["b"], stopped: ["b"] })).rejects.toBeInstanceOf(
        InvalidRememberBatchError,
      );
      expect(await s.getEntities("T", "s")).toEqual(["a"]);
    });
  },
);
