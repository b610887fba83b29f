/** Examples of the CRDTs' semantics, bad input, and serialization through the registry. */
import { describe, expect, it } from "vitest";
import {
  createDDataSerializer,
  DDATA_SERIALIZER_ID,
  DDataDecodeError,
  DDataTypeMismatchError,
  Flag,
  GCounter,
  InvalidDDataOperationError,
  isReplicatedData,
  LWWMap,
  LWWRegister,
  lwwWallClock,
  ORMultiMap,
  ORSet,
  PNCounter,
  PNCounterMap,
} from "../../../src/core/ddata/index.js";
import { SerializerRegistry } from "../../../src/protocol/serializer-registry.js";

describe("CRDT semantics", () => {
  it("ORSet: an add concurrent with a remove wins; a seen add is removed", () => {
    const base = ORSet.empty<string>().add("a", "x").resetDelta();
    const removed = base.remove("b", "x");
    const readded = base.add("c", "x");
    expect(removed.merge(readded).has("x")).toBe(true);
    expect(removed.merge(base).has("x")).toBe(false);
  });

  it("ORSet: the delta of one add is small whatever the size of the set", () => {
    let s = ORSet.empty<string>();
    for (let i = 0; i < 1_000; i++) s = s.add("a", `e${i}`);
    s = s.resetDelta().add("a", "new");
    const d = s.delta as ORSet<string>;
    expect(d.size).toBe(1);
    expect(JSON.stringify(d.toData()).length).toBeLessThan(200);
  });

  it("counters: PNCounter goes both ways, merges per node", () => {
    const a = PNCounter.empty.increment("a", 5).decrement("a", 2);
    const b = PNCounter.empty.increment("b", 10);
    expect(a.merge(b).value).toBe(13);
    expect(GCounter.empty.increment("a").increment("a", 3).value).toBe(4);
  });

  it("LWWRegister: the later timestamp wins, ties go to the greater node; the clock is injectable", () => {
    const r = LWWRegister.create("a", "v1");
    const b = r.set("b", "v2");
    const c = r.set("c", "v3");
    expect(b.merge(c).value).toBe("v3");
    expect(c.merge(b).value).toBe("v3");
    let now = 1_000;
    const wall = lwwWallClock(() => now);
    const w = LWWRegister.create<number>("a", 1, wall);
    expect(w.timestamp).toBe(1_000);
    now = 500; // a clock going backwards still moves the register forward
    expect(w.set("a", 2, wall).timestamp).toBe(1_001);
  });

  it("Flag, LWWMap, PNCounterMap, ORMultiMap", () => {
    expect(Flag.off.merge(Flag.on).enabled).toBe(true);
    const m = LWWMap.empty<string, number>().put("a", "k", 1).put("a", "k", 2);
    expect(m.get("k")).toBe(2);
    const p = PNCounterMap.empty<string>().increment("a", "k", 3).decrement("b", "k");
    expect(p.get("k")).toBe(2);
    const mm = ORMultiMap.empty<string, string>()
      .addBinding("a", "k", "x")
      .addBinding("a", "k", "y");
    expect([...(mm.get("k") ?? [])].sort()).toEqual(["x", "y"]);
    const gone = mm.removeBinding("a", "k", "x").removeBinding("a", "k", "y");
    expect(gone.has("k")).toBe(false);
  });

  it("bad input gets typed errors", () => {
    expect(() => GCounter.empty.increment("a", -1)).toThrow(InvalidDDataOperationError);
    expect(() => PNCounter.empty.increment("a", 0.5)).toThrow(InvalidDDataOperationError);
    expect(() => ORSet.empty().merge(GCounter.empty)).toThrow(DDataTypeMismatchError);
  });
});

describe("serialization through the registry", () => {
  const registry = new SerializerRegistry();
  registry.registerInternal(createDDataSerializer(), { match: isReplicatedData });

  it("every CRDT round-trips with the ddata serializer id", () => {
    const values = [
      GCounter.empty.increment("a", 2),
      PNCounter.empty.increment("a", -2),
      ORSet.empty<string>().add("a", "x").add("b", "y").remove("a", "x"),
      LWWRegister.create("a", { nested: [1, 2] }),
      Flag.on,
      LWWMap.empty<string, string>().put("a", "k", "v"),
      PNCounterMap.empty<string>().increment("a", "k", 4),
      ORMultiMap.empty<string, number>().addBinding("a", "k", 1),
    ];
    for (const v of values) {
      const s = registry.serialize(v);
      expect(s.serializerId).toBe(DDATA_SERIALIZER_ID);
      const back = registry.deserialize(s.serializerId, s.bytes) as typeof v;
      expect(back.kind).toBe(v.kind);
      expect(back.toData()).toEqual(v.resetDelta().toData());
    }
  });

  it("garbage bytes give a typed decode error", () => {
    const bytes = new SerializerRegistry().serialize([
      "orset",
      [[["x", "not-dots"]], [[], []]],
    ]).bytes;
    expect(() => createDDataSerializer().fromBinary(bytes)).toThrow(DDataDecodeError);
    expect(() => registry.deserialize(DDATA_SERIALIZER_ID, bytes)).toThrow(/decode/);
  });
});
