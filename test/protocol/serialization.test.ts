import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import {
  createMsgpackSerializer,
  MESSAGE_DEPTH_MAX,
  MSGPACK_SERIALIZER_ID,
  type RefCodec,
  SerializationError,
  type Serializer,
  SerializerRegistry,
  UnknownSerializerError,
  type WireRefData,
} from "../../src/protocol/index.js";
import { catchError } from "./helpers.js";

const roundTrip = (value: unknown, registry = new SerializerRegistry()) => {
  const { serializerId, bytes } = registry.serialize(value);
  return registry.deserialize(serializerId, bytes);
};

describe("default msgpackr serializer", () => {
  it("has id 1 and is chosen for plain data", () => {
    const registry = new SerializerRegistry();
    expect(registry.serialize({ a: 1 }).serializerId).toBe(MSGPACK_SERIALIZER_ID);
    expect(registry.defaultSerializer.name).toBe("msgpackr");
  });

  it.each<[string, unknown]>([
    ["string", "héllo 🚀"],
    ["empty string", ""],
    ["integer", 42],
    ["negative", -7],
    ["float", 1.25],
    ["large integer", 2 ** 40],
    ["max safe integer", Number.MAX_SAFE_INTEGER],
    ["NaN", Number.NaN],
    ["Infinity", Number.NEGATIVE_INFINITY],
    ["boolean", true],
    ["null", null],
    ["undefined", undefined],
    ["small bigint", 5n],
    ["negative bigint", -5n],
    ["u64 bigint", 2n ** 64n - 1n],
    ["i64 min bigint", -(2n ** 63n)],
    ["huge bigint", 2n ** 200n + 3n],
    ["huge negative bigint", -(2n ** 100n)],
    ["plain object", { a: 1, b: "x", nested: { c: [1, 2, { d: null }] }, u: undefined }],
    ["empty object", {}],
    ["array", [1, "a", [2, [3]], {}]],
    [
      "Map with mixed keys",
      new Map<unknown, unknown>([
        ["k", 1],
        [2, { z: 3 }],
        [true, null],
      ]),
    ],
    ["empty Map", new Map()],
    ["Map of Maps", new Map([["a", new Map([["b", new Map()]])]])],
    ["Map with object keys", new Map([[{ id: 1 }, [new Map([[2n, "two"]])]]])],
    ["object holding a Map", { m: new Map([["x", { y: new Set([1]) }]]), o: { x: 1 } }],
    ["Set", new Set([1, "a", 2n])],
    ["Date", new Date(1_700_000_000_123)],
    ["pre-epoch Date", new Date(-86_400_000 * 365)],
    ["Uint8Array", Uint8Array.of(0, 1, 255)],
    ["empty Uint8Array", new Uint8Array(0)],
    ["Float64Array", Float64Array.of(1.5, -0.25)],
    ["Int32Array", Int32Array.of(-1, 7)],
    ["BigInt64Array", BigInt64Array.of(-5n, 9n)],
  ])("round-trips %s exactly", (_name, value) => {
    const out = roundTrip(value);
    expect(out).toStrictEqual(value);
    if (value !== null && typeof value === "object")
      expect(Object.getPrototypeOf(out)).toBe(Object.getPrototypeOf(value));
  });

  it("keeps a Map with string keys a Map and an object an object, side by side", () => {
    const out = roundTrip({ m: new Map([["x", 1]]), o: { x: 1 } }) as { m: unknown; o: unknown };
    expect(out.m).toBeInstanceOf(Map);
    expect(Object.getPrototypeOf(out.o)).toBe(Object.prototype);
  });

  it("keeps object key order", () => {
    expect(Object.keys(roundTrip({ z: 1, a: 2, m: 3 }) as object)).toEqual(["z", "a", "m"]);
  });

  it("turns -0 into 0 (documented loss)", () => {
    expect(Object.is(roundTrip(-0), 0)).toBe(true);
  });

  it("sends a Buffer as a plain Uint8Array, also when decoding from a Buffer", () => {
    const registry = new SerializerRegistry();
    const { bytes } = registry.serialize({ b: Buffer.from([1, 2]) });
    for (const input of [Uint8Array.from(bytes), Buffer.from(bytes)]) {
      const out = (registry.deserialize(1, input) as { b: Uint8Array }).b;
      expect(Object.getPrototypeOf(out)).toBe(Uint8Array.prototype);
      expect([...out]).toEqual([1, 2]);
    }
  });

  it("decodes binaries as copies, independent of the input bytes", () => {
    const registry = new SerializerRegistry();
    const { bytes } = registry.serialize({ b: Uint8Array.of(9, 9, 9) });
    const input = bytes.slice();
    const out = registry.deserialize(1, input) as { b: Uint8Array };
    input.fill(0);
    expect([...out.b]).toEqual([9, 9, 9]);
  });

  it("round-trips many message shapes in any order with a fresh registry (no shared state)", () => {
    const sender = new SerializerRegistry();
    const messages = Array.from({ length: 80 }, (_, i) => ({
      [`k${i}`]: i,
      list: Array.from({ length: i % 7 }, (_, j) => ({ [`f${j}`]: j + 64 })),
    }));
    const encoded = messages.map((m) => sender.serialize(m));
    encoded.reverse().forEach((e, i) => {
      expect(new SerializerRegistry().deserialize(e.serializerId, e.bytes)).toEqual(
        messages[messages.length - 1 - i],
      );
    });
  });

  it("round-trips arbitrary JSON-like values (fast-check)", () => {
    const registry = new SerializerRegistry();
    fc.assert(
      fc.property(
        // -0 is not JSON; a `__proto__` key is refused with a typed error (tested below)
        fc.jsonValue().filter((v) => !containsNegativeZero(v) && !containsProtoKey(v)),
        (v) => {
          expect(roundTrip(v, registry)).toStrictEqual(v);
        },
      ),
      { numRuns: 300 },
    );
  });
});

function containsNegativeZero(v: unknown): boolean {
  if (Object.is(v, -0)) return true;
  if (Array.isArray(v)) return v.some(containsNegativeZero);
  if (v !== null && typeof v === "object") return Object.values(v).some(containsNegativeZero);
  return false;
}

function containsProtoKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(containsProtoKey);
  if (v !== null && typeof v === "object")
    return Object.keys(v).includes("__proto__") || Object.values(v).some(containsProtoKey);
  return false;
}

describe("unserializable values", () => {
  class Point {
    constructor(
      readonly x: number,
      readonly y: number,
    ) {}
  }
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;

  it.each<[string, unknown, string, string]>([
    ["a function", { f: () => 1 }, "$.f", "a function cannot be serialized"],
    ["a symbol", [1, Symbol("s")], "$[1]", "a symbol cannot be serialized"],
    ["a class instance", { p: new Point(1, 2) }, "$.p", "an instance of Point"],
    ["a class instance at the root", new Point(1, 2), "$", "an instance of Point"],
    ["an Error", { e: new Error("x") }, "$.e", "an instance of Error"],
    ["a RegExp", { r: /x/ }, "$.r", "an instance of RegExp"],
    ["a DataView", { d: new DataView(new ArrayBuffer(1)) }, "$.d", "an instance of DataView"],
    ["a cycle", cyclic, "$.self", "cycle"],
    ["a class in a Map value", new Map([["k", new Point(0, 0)]]), "$<Map entry 0>", "Point"],
    ["a function in a Set", new Set([1, () => 1]), "$<Set entry 1>", "function"],
    ["a __proto__ key", JSON.parse('{"ok":{"__proto__":1}}'), "$.ok.__proto__", "__proto__"],
    ["an odd key", { "a b": { f: () => 1 } }, '$["a b"].f', "function"],
  ])("rejects %s with SerializationError naming the path", (_name, value, path, reason) => {
    const err = catchError(() => new SerializerRegistry().serialize(value));
    expect(err).toBeInstanceOf(SerializationError);
    expect(err).toMatchObject({ code: "SERIALIZATION_FAILED", path, serializerId: 1 });
    expect((err as SerializationError).reason).toContain(reason);
  });

  it("reports the shortest path of a cycle that closes deep inside", () => {
    const loop: Record<string, unknown> = {};
    const message = { a: [{ b: loop }] };
    loop.back = message.a;
    const err = catchError(() => new SerializerRegistry().serialize(message));
    expect(err).toMatchObject({ reason: "the message contains a cycle", path: "$.a[0].b.back" });
  });

  it(`accepts ${MESSAGE_DEPTH_MAX} nested containers and rejects one more`, () => {
    const nest = (depth: number) => {
      let v: unknown = 0;
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };
    expect(roundTrip(nest(MESSAGE_DEPTH_MAX))).toEqual(nest(MESSAGE_DEPTH_MAX));
    const err = catchError(() => new SerializerRegistry().serialize(nest(MESSAGE_DEPTH_MAX + 1)));
    expect(err).toBeInstanceOf(SerializationError);
    expect((err as SerializationError).reason).toContain("deeper than 1000");
  });

  it("accepts shared (non-cyclic) references, serializing them twice", () => {
    const shared = { v: 1 };
    expect(roundTrip({ a: shared, b: [shared] })).toEqual({ a: { v: 1 }, b: [{ v: 1 }] });
  });

  it("wraps garbage bytes in SerializationError", () => {
    const registry = new SerializerRegistry();
    const ext = [0xd4, 0x53, 0]; // shardkit's extension, followed by its tagged array
    const garbage = [
      [0x92, 1],
      [1, 2],
      [0xc7, 1, 0x50, 0],
      [...ext, 0x01],
      [...ext, 0x92, 0x01, 0xa1, 0x6b], // Map tag with an odd number of items: [1, "k"]
      [...ext, 0x91, 0x05], // unknown tag 5
      [...ext, 0x93, 0x00, 0x01, 0x02], // ref with non-string address and path
      [],
    ];
    for (const bytes of garbage.map((b) => Uint8Array.from(b))) {
      const err = catchError(() => registry.deserialize(1, bytes));
      expect(err).toBeInstanceOf(SerializationError);
      expect(err).toMatchObject({ code: "SERIALIZATION_FAILED", serializerId: 1 });
    }
  });

  it("never throws anything but SerializationError when decoding arbitrary bytes", () => {
    const registry = new SerializerRegistry();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        try {
          registry.deserialize(1, bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(SerializationError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

/** A stand-in for the actor system's ActorRef. */
class DummyRef {
  constructor(
    readonly address: string,
    readonly path: string,
  ) {}
}

const dummyCodec: RefCodec = {
  isRef: (v) => v instanceof DummyRef,
  encode: (ref) => ({ address: (ref as DummyRef).address, path: (ref as DummyRef).path }),
  decode: (d: WireRefData) => new DummyRef(d.address, d.path),
};

describe("actor refs inside messages", () => {
  const a = new DummyRef("shop@10.0.0.1:2552", "/user/cart-42");
  const b = new DummyRef("shop@10.0.0.2:2552", "/user/orders");

  it("resolve through the RefCodec at any depth and inside Map and Set", () => {
    const registry = new SerializerRegistry({ refCodec: dummyCodec });
    const message = {
      replyTo: a,
      nested: {
        list: [1, { who: b }],
        map: new Map<unknown, unknown>([
          [a, "key ref"],
          ["v", b],
        ]),
      },
      set: new Set([a]),
    };
    const out = roundTrip(message, registry) as typeof message;
    expect(out).toEqual(message);
    expect(out.replyTo).toBeInstanceOf(DummyRef);
    expect((out.nested.list[1] as { who: unknown }).who).toBeInstanceOf(DummyRef);
    expect([...out.nested.map.keys()][0]).toBeInstanceOf(DummyRef);
    expect([...out.set][0]).toBeInstanceOf(DummyRef);
  });

  it("serialize a ref sent as the whole message", () => {
    const registry = new SerializerRegistry({ refCodec: dummyCodec });
    expect(roundTrip(a, registry)).toEqual(a);
  });

  it("leave the caller's message untouched (copy on write)", () => {
    const registry = new SerializerRegistry({ refCodec: dummyCodec });
    const inner = { who: a };
    const message = { inner, list: [a], other: { x: 1 } };
    registry.serialize(message);
    expect(message.inner).toBe(inner);
    expect(inner.who).toBe(a);
    expect(message.list[0]).toBe(a);
  });

  it("are rejected as class instances when no RefCodec is set", () => {
    const err = catchError(() => new SerializerRegistry().serialize({ replyTo: a }));
    expect(err).toMatchObject({ code: "SERIALIZATION_FAILED", path: "$.replyTo" });
  });

  it("fail to decode on a registry without a RefCodec", () => {
    const { bytes } = new SerializerRegistry({ refCodec: dummyCodec }).serialize({ r: a });
    const err = catchError(() => new SerializerRegistry().deserialize(1, bytes));
    expect(err).toBeInstanceOf(SerializationError);
    expect((err as SerializationError).reason).toContain("no RefCodec");
  });

  it("fail when the codec returns something that is not { address, path }", () => {
    const bad: RefCodec = {
      ...dummyCodec,
      encode: () => ({ address: 1 }) as unknown as WireRefData,
    };
    const err = catchError(() => new SerializerRegistry({ refCodec: bad }).serialize([a]));
    expect(err).toMatchObject({ code: "SERIALIZATION_FAILED", path: "$[0]" });
  });

  it("each registry resolves with its own codec", () => {
    const tagged = (tag: string): RefCodec => ({
      ...dummyCodec,
      decode: (d) => new DummyRef(d.address, `${tag}:${d.path}`),
    });
    const bytes = createMsgpackSerializer(dummyCodec).toBinary({ r: a });
    expect(createMsgpackSerializer(tagged("one")).fromBinary(bytes)).toEqual({
      r: new DummyRef(a.address, `one:${a.path}`),
    });
    expect(createMsgpackSerializer(tagged("two")).fromBinary(bytes)).toEqual({
      r: new DummyRef(a.address, `two:${a.path}`),
    });
  });
});

/** Example user type with a hand-written JSON serializer. */
class Money {
  constructor(
    readonly amountCents: bigint,
    readonly currency: string,
  ) {}
}

const moneySerializer: Serializer<Money> = {
  id: 100,
  name: "money-json",
  toBinary: (m) =>
    new TextEncoder().encode(JSON.stringify({ c: m.amountCents.toString(), k: m.currency })),
  fromBinary: (bytes) => {
    const o = JSON.parse(new TextDecoder().decode(bytes)) as { c: string; k: string };
    return new Money(BigInt(o.c), o.k);
  },
};

describe("SerializerRegistry", () => {
  it("uses a user serializer bound to a class, and the default for everything else", () => {
    const registry = new SerializerRegistry().register(moneySerializer, { class: Money });
    const m = new Money(1234n, "EUR");
    const s = registry.serialize(m);
    expect(s.serializerId).toBe(100);
    expect(new TextDecoder().decode(s.bytes)).toBe('{"c":"1234","k":"EUR"}');
    const out = registry.deserialize(100, s.bytes);
    expect(out).toBeInstanceOf(Money);
    expect(out).toEqual(m);
    expect(registry.serialize({ plain: true }).serializerId).toBe(1);
  });

  it("tries bindings in registration order, predicate bindings included", () => {
    const tagged = (id: number): Serializer<unknown> => ({
      id,
      name: `s${id}`,
      toBinary: () => Uint8Array.of(id),
      fromBinary: () => id,
    });
    const registry = new SerializerRegistry()
      .register(tagged(101), { match: (v) => typeof v === "string" && v.startsWith("a") })
      .register(tagged(102), { match: (v) => typeof v === "string" })
      .register(tagged(103));
    expect(registry.serialize("abc").serializerId).toBe(101);
    expect(registry.serialize("xyz").serializerId).toBe(102);
    expect(registry.serialize(1).serializerId).toBe(1);
    expect(registry.deserialize(103, Uint8Array.of())).toBe(103);
    expect(registry.serializerById(103)?.name).toBe("s103");
  });

  it("rejects duplicate ids, including the default's", () => {
    const registry = new SerializerRegistry().register(moneySerializer);
    const dup = catchError(() => registry.register({ ...moneySerializer, name: "again" }));
    expect(dup).toBeInstanceOf(ConfigError);
    expect(dup).toMatchObject({ code: "CONFIG_INVALID", key: "serializers.again.id", value: 100 });
    expect(() => registry.registerInternal({ ...moneySerializer, id: 1 })).toThrow(ConfigError);
  });

  it.each([0, 1, 99, -1, 1.5, 2 ** 32])("rejects user id %s outside 100..2^32-1", (id) => {
    expect(() => new SerializerRegistry().register({ ...moneySerializer, id })).toThrow(
      ConfigError,
    );
  });

  it("keeps 0..99 for shardkit's own serializers", () => {
    const registry = new SerializerRegistry().registerInternal({ ...moneySerializer, id: 5 });
    expect(registry.serializerById(5)).toBeDefined();
    expect(() => registry.registerInternal({ ...moneySerializer, id: 100 })).toThrow(ConfigError);
  });

  it("throws UnknownSerializerError for an unregistered id", () => {
    const err = catchError(() => new SerializerRegistry().deserialize(4242, Uint8Array.of()));
    expect(err).toBeInstanceOf(UnknownSerializerError);
    expect(err).toMatchObject({ code: "UNKNOWN_SERIALIZER", serializerId: 4242 });
  });

  it("wraps a throwing user serializer in SerializationError with the cause", () => {
    const boom = new Error("boom");
    const registry = new SerializerRegistry().register(
      {
        id: 200,
        name: "fragile",
        toBinary: () => {
          throw boom;
        },
        fromBinary: () => {
          throw boom;
        },
      },
      { match: () => true },
    );
    for (const op of [
      () => registry.serialize(1),
      () => registry.deserialize(200, Uint8Array.of()),
    ]) {
      const err = catchError(op);
      expect(err).toBeInstanceOf(SerializationError);
      expect(err).toMatchObject({ serializerId: 200, cause: boom });
    }
  });

  it("rejects a user serializer whose toBinary returns no bytes", () => {
    const registry = new SerializerRegistry().register(
      {
        id: 300,
        name: "liar",
        toBinary: () => "nope" as unknown as Uint8Array,
        fromBinary: () => 0,
      },
      { match: () => true },
    );
    expect(catchError(() => registry.serialize(1))).toBeInstanceOf(SerializationError);
  });
});

describe("serializing with room and decoding a range (remoting hot path)", () => {
  const messages: unknown[] = [
    { t: "m", n: 7, p: "x".repeat(80) },
    { replyTo: new DummyRef("shop@10.0.0.1:2552", "/user/a"), n: 1 },
    new Map([[1, { s: new Set([2]) }]]),
    [1n, new Date(5), Uint8Array.of(1, 2)],
    "just a string",
  ];

  it("puts exactly serialize's bytes behind the requested room, for every path", () => {
    const registry = new SerializerRegistry({ refCodec: dummyCodec });
    for (const m of messages)
      for (const room of [0, 1, 25, 255]) {
        const s = registry.serializeWithRoom(m, room);
        expect(s.room).toBe(room);
        expect(s.serializerId).toBe(MSGPACK_SERIALIZER_ID);
        expect(s.bytes.subarray(room)).toEqual(registry.serialize(m).bytes);
        expect(registry.deserialize(1, s.bytes.subarray(room))).toEqual(m);
      }
  });

  it("gives no room for more than 255 bytes or with a user serializer, with the same errors", () => {
    const registry = new SerializerRegistry().register(moneySerializer, { class: Money });
    expect(registry.serializeWithRoom({ a: 1 }, 256)).toMatchObject({ room: 0, serializerId: 1 });
    const money = registry.serializeWithRoom(new Money(5n, "EUR"), 10);
    expect(money).toMatchObject({ room: 0, serializerId: 100 });
    expect(registry.deserialize(100, money.bytes)).toEqual(new Money(5n, "EUR"));
    const err = catchError(() => registry.serializeWithRoom({ f: () => 1 }, 10));
    expect(err).toMatchObject({ code: "SERIALIZATION_FAILED", path: "$.f" });
  });

  it("decodes a message in the middle of a larger buffer, refs included", () => {
    const registry = new SerializerRegistry({ refCodec: dummyCodec });
    for (const m of messages) {
      const bytes = registry.serialize(m).bytes;
      const source = new Uint8Array(bytes.length + 20).fill(0xc1);
      source.set(bytes, 9);
      expect(registry.deserializeRange(1, source, 9, 9 + bytes.length)).toEqual(m);
    }
  });

  it("honours the end of the range even when the bytes after it would complete the message", () => {
    const registry = new SerializerRegistry();
    const bytes = registry.serialize({ a: "hello", b: [1, 2, 3] }).bytes;
    const source = new Uint8Array(bytes.length + 4);
    source.set(bytes, 2);
    for (let cut = 0; cut < bytes.length; cut++) {
      const err = catchError(() => registry.deserializeRange(1, source, 2, 2 + cut));
      expect(err).toBeInstanceOf(SerializationError);
    }
    const twice = new Uint8Array([...bytes, ...bytes]);
    expect(catchError(() => registry.deserializeRange(1, twice, 0, twice.length))).toBeInstanceOf(
      SerializationError,
    );
  });

  it("uses the general path for other serializers and fails on unknown ids", () => {
    const registry = new SerializerRegistry().register(moneySerializer, { class: Money });
    const bytes = registry.serialize(new Money(3n, "USD")).bytes;
    const source = new Uint8Array([0, ...bytes, 0]);
    expect(registry.deserializeRange(100, source, 1, 1 + bytes.length)).toEqual(
      new Money(3n, "USD"),
    );
    expect(catchError(() => registry.deserializeRange(77, source, 1, 2))).toBeInstanceOf(
      UnknownSerializerError,
    );
  });

  it("never throws anything but SerializationError for arbitrary ranges of arbitrary bytes", () => {
    const registry = new SerializerRegistry({ refCodec: dummyCodec });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const start = a % (bytes.length + 1);
        const end = start + (b % (bytes.length - start + 1));
        try {
          registry.deserializeRange(1, bytes, start, end);
        } catch (e) {
          expect(e).toBeInstanceOf(SerializationError);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
