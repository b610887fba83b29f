import { readFileSync } from "node:fs";
import fc from "fast-check";
import { Packr } from "msgpackr";
import { describe, expect, it } from "vitest";
import {
  createMsgpackSerializer,
  MESSAGE_DEPTH_MAX,
  type RefCodec,
} from "../../src/protocol/index.js";
import { FastPacker } from "../../src/protocol/msgpack-fast-pack.js";
import { prepareForPack } from "../../src/protocol/msgpack-prepare.js";
import { MSGPACKR_OPTIONS } from "../../src/protocol/msgpack-serializer.js";
import { Ref, refCodec } from "./msgpack-fuzz.js";

// The extension must be installed exactly as in production before comparing bytes.
createMsgpackSerializer();
const packr = new Packr({ ...MSGPACKR_OPTIONS });
const msgpackrBytes = (v: unknown) => Uint8Array.from(packr.pack(v));

/** Strings of any UTF-16 code units (lone surrogates included), around every length boundary. */
const anyUnits = (maxLength: number) =>
  fc
    .array(fc.integer({ min: 0, max: 0xffff }), { maxLength })
    .map((codes) => String.fromCharCode(...codes));
const stringArb = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ maxLength: 300, unit: "grapheme" }),
  anyUnits(70),
  fc.integer({ min: 0, max: 300 }).map((n) => "x".repeat(n)),
  fc.integer({ min: 0x18, max: 0x48 }).map((n) => "é".repeat(n)),
  fc.constantFrom(
    "\uD800",
    "a\uDC00b",
    "\uFEFFbom",
    "😀".repeat(40),
    "€".repeat(90),
    // lone surrogates in strings long enough for the platform encoder (U+FFFD there)
    `${"x".repeat(70)}\uD800`,
    "\uDC00".repeat(100),
    `${"é".repeat(40)}\uD83D${"y".repeat(40)}`,
  ),
);
/** Keys the fast path leaves to the general path on purpose are tested separately. */
const keyArb = stringArb.filter((k) => !["__proto__", "constructor", "hasOwnProperty"].includes(k));
const BOUNDARY_INTS = [
  0,
  1,
  0x1f,
  0x20,
  0x7f,
  0x80,
  0xff,
  0x100,
  0xffff,
  0x10000,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 53,
  -1,
  -0x20,
  -0x21,
  -0x80,
  -0x81,
  -0x8000,
  -0x8001,
  -(2 ** 31),
  -(2 ** 31) - 1,
  -(2 ** 53),
];
const numberArb = fc.oneof(
  fc.constantFrom(...BOUNDARY_INTS),
  fc.integer({ min: -(2 ** 31), max: 2 ** 32 }),
  fc.double(),
  fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, 0.1, -1.5),
);
const { plain } = fc.letrec((tie) => ({
  plain: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    stringArb,
    numberArb,
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie("plain"), { maxLength: 20 }),
    fc.dictionary(keyArb, tie("plain"), { maxKeys: 20, noNullPrototype: true }),
  ),
}));

const readJson = (path: string) =>
  JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8")) as Record<string, unknown>;

/**
 * Asserts equal bytes: compared with Buffer.equals first (fast: the properties below
 * compare thousands of encodings), through toEqual only when they differ (for the diff).
 */
function expectBytes(actual: Uint8Array | undefined, expected: Uint8Array): void {
  if (
    actual !== undefined &&
    Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected)
  )
    return;
  expect(actual).toEqual(expected);
}

describe("msgpackr pin", () => {
  it("package.json pins msgpackr to one exact version, and that version is the one installed", () => {
    // FastPacker copies msgpackr's output byte for byte: another msgpackr version may
    // write other bytes, so the dependency must not float (no ^ or ~ range).
    const pinned = (readJson("../../package.json").dependencies as Record<string, string>).msgpackr;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(readJson("../../node_modules/msgpackr/package.json").version).toBe(pinned);
  });
});

describe("FastPacker", () => {
  it("writes exactly msgpackr's bytes for plain data, behind any room (fast-check)", () => {
    fc.assert(
      fc.property(plain, fc.integer({ min: 0, max: 255 }), (v, room) => {
        const fast = new FastPacker(undefined);
        expectBytes(fast.pack(v, 0), msgpackrBytes(v));
        expectBytes(fast.pack(v, room)?.subarray(room), msgpackrBytes(v));
      }),
      { numRuns: 2000 },
    );
  });

  it("the default serializer's output equals msgpackr's for random plain data (fast-check)", () => {
    // The same comparison through the serializer that remoting uses (toBinary and
    // toBinaryWithRoom), so a change in how it picks the fast path is covered too.
    const serializer = createMsgpackSerializer();
    fc.assert(
      fc.property(plain, fc.integer({ min: 0, max: 255 }), (v, room) => {
        const expected = msgpackrBytes(v);
        expectBytes(Uint8Array.from(serializer.toBinary(v)), expected);
        expectBytes(serializer.toBinaryWithRoom(v, room)?.subarray(room), expected);
      }),
      { numRuns: 2000 },
    );
  });

  it("writes msgpackr's bytes for containers of 16 and more entries and long strings", () => {
    const fast = new FastPacker(undefined);
    const values = [
      Array.from({ length: 16 }, (_, i) => i),
      Array.from({ length: 300 }, (_, i) => `s${i}`),
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i * 1000])),
      "y".repeat(8_000),
      "é".repeat(3000),
      { nested: [[[{ deep: [1, [2, [3]]] }]]] },
    ];
    for (const v of values) expect(fast.pack(v, 3)?.subarray(3)).toEqual(msgpackrBytes(v));
  });

  it("gives up on everything outside its subset", () => {
    class Point {
      x = 1;
    }
    const codec: RefCodec = {
      isRef: (v) => v instanceof Point,
      encode: () => ({ address: "a", path: "/p" }),
      decode: () => new Point(),
    };
    const nested = (depth: number) => {
      let v: unknown = 1;
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };
    const arrayWithOwnCtor = Object.assign([1], { constructor: 1 });
    const outside = [
      new Map([[1, 2]]),
      new Set([1]),
      new Date(0),
      1n,
      Uint8Array.of(1),
      new Point(),
      () => 1,
      Symbol("s"),
      JSON.parse('{"__proto__": 1}'),
      { hasOwnProperty: 1 },
      { constructor: "own" },
      Object.create(null),
      arrayWithOwnCtor,
      Array.from({ length: 0x10000 }, () => 0),
      nested(MESSAGE_DEPTH_MAX + 1),
    ];
    const fast = new FastPacker(undefined);
    for (const v of outside) {
      expect(fast.pack(v, 0)).toBeUndefined();
      expect(fast.pack({ a: [0, { b: v }] }, 0)).toBeUndefined();
    }
    expect(fast.pack(nested(MESSAGE_DEPTH_MAX), 0)).toEqual(
      msgpackrBytes(nested(MESSAGE_DEPTH_MAX)),
    );
    // An array object with Object.prototype is written as msgpackr writes it: a map.
    const arrayLike = Object.setPrototypeOf([1], Object.prototype);
    expect(fast.pack(arrayLike, 0)).toEqual(msgpackrBytes(arrayLike));
    // A ref is inside the subset (next describe block); a Map next to it is not.
    expect(new FastPacker(codec).pack({ replyTo: new Point(), m: new Map() }, 0)).toBeUndefined();
  });

  it("gives up on a value larger than its slab, and packs the next one normally", () => {
    const fast = new FastPacker(undefined);
    expect(fast.pack({ big: "z".repeat(40_000) }, 0)).toBeUndefined();
    expect(fast.pack({ small: 1 }, 0)).toEqual(msgpackrBytes({ small: 1 }));
  });

  it("never writes again over bytes it handed out, across slabs and give-ups", () => {
    const fast = new FastPacker(undefined);
    const out: { view: Uint8Array; copy: Uint8Array }[] = [];
    for (let i = 0; i < 2_000; i++) {
      const v = { i, s: "v".repeat(i % 200), list: Array.from({ length: i % 9 }, (_, j) => j) };
      if (i % 7 === 0) expect(fast.pack({ ...v, bad: new Map() }, 0)).toBeUndefined();
      const view = fast.pack(v, i % 30) as Uint8Array;
      out.push({ view, copy: view.slice() });
    }
    for (const { view, copy } of out) expect(view).toEqual(copy);
  });
});

describe("FastPacker and actor refs", () => {
  const codec = refCodec;
  /** What the general path writes: prepareForPack's placeholders, then msgpackr. */
  const generalBytes = (v: unknown) => Uint8Array.from(packr.pack(prepareForPack(v, codec, 1)));
  const refArb = fc.tuple(stringArb, stringArb).map(([a, p]) => new Ref(a, p));
  const { withRefs } = fc.letrec((tie) => ({
    withRefs: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      refArb,
      stringArb,
      numberArb,
      fc.boolean(),
      fc.constant(null),
      fc.array(tie("withRefs"), { maxLength: 6 }),
      fc.dictionary(keyArb, tie("withRefs"), { maxKeys: 6, noNullPrototype: true }),
    ),
  }));

  it("writes exactly the general path's bytes for data with refs, behind any room (fast-check)", () => {
    fc.assert(
      fc.property(withRefs, fc.integer({ min: 0, max: 255 }), (v, room) => {
        const fast = new FastPacker(codec);
        expectBytes(fast.pack(v, 0), generalBytes(v));
        expectBytes(fast.pack(v, room)?.subarray(room), generalBytes(v));
      }),
      { numRuns: 500 },
    );
  });

  it("an ask-shaped message round-trips through the serializer with its ref", () => {
    const serializer = createMsgpackSerializer(codec);
    const msg = { t: "inc", replyTo: new Ref("sys@127.0.0.1:2552#7", "/temp/$ask12") };
    const fast = new FastPacker(codec).pack(msg, 0) as Uint8Array;
    expect(fast).toEqual(generalBytes(msg));
    expect(serializer.fromBinary(fast)).toEqual(msg);
  });

  it("an ask's reply target through RefCodec.askId: the general path's bytes, for ids of every length", () => {
    /** A local ask reply target: the codec knows its id and this node's address. */
    class AskTarget {
      constructor(readonly id: number) {}
    }
    const address = "sys@127.0.0.1:2552";
    const encoded: number[] = [];
    const viaId: RefCodec = {
      isRef: (v) => v instanceof AskTarget || v instanceof Ref,
      encode: (r) =>
        r instanceof AskTarget
          ? { address, path: `/temp/$ask${r.id}#${r.id}` }
          : refCodec.encode(r),
      decode: refCodec.decode,
      askId: (r) => {
        if (!(r instanceof AskTarget)) return -1;
        encoded.push(r.id);
        return r.id;
      },
      localAddress: address,
    };
    const general = (v: unknown) => Uint8Array.from(packr.pack(prepareForPack(v, viaId, 1)));
    const ids = [
      1,
      9,
      10,
      99,
      12_345,
      10 ** 10 - 1,
      10 ** 10,
      2 ** 40 + 3,
      Number.MAX_SAFE_INTEGER,
    ];
    for (const id of ids) {
      const msg = {
        t: "inc",
        n: id,
        replyTo: new AskTarget(id),
        other: new Ref("a@h:1", "/user/x#1"),
      };
      const fast = new FastPacker(viaId).pack(msg, 3) as Uint8Array;
      expectBytes(fast.subarray(3), general(msg));
    }
    expect(encoded).toEqual(ids);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (id) => {
        const msg = [new AskTarget(id)];
        expectBytes(new FastPacker(viaId).pack(msg, 0), general(msg));
      }),
      { numRuns: 300 },
    );
  });

  it("gives up when the RefCodec answers with the wrong shape, so the general path reports it", () => {
    const bad: RefCodec = { ...codec, encode: () => ({ address: 1, path: "/p" }) as never };
    const fast = new FastPacker(bad);
    expect(fast.pack({ replyTo: new Ref("a", "/p") }, 0)).toBeUndefined();
    expect(() => prepareForPack({ replyTo: new Ref("a", "/p") }, bad, 1)).toThrow(
      "RefCodec.encode must return",
    );
    expect(new FastPacker(codec).pack({ next: 1 }, 0)).toEqual(msgpackrBytes({ next: 1 }));
  });
});

describe("FastPacker and user code", () => {
  it("gives up when called again from inside a pack (RefCodec or getter), without corrupting either", () => {
    let fast: FastPacker;
    let inner: Uint8Array | undefined | "not called" = "not called";
    const codec: RefCodec = {
      isRef: () => {
        if (inner === "not called") inner = fast.pack({ inner: true }, 0);
        return false;
      },
      encode: () => ({ address: "a", path: "/p" }),
      decode: () => undefined,
    };
    fast = new FastPacker(codec);
    const outer = fast.pack({ outer: [1, 2, 3] }, 0);
    expect(inner).toBeUndefined();
    expect(outer).toEqual(msgpackrBytes({ outer: [1, 2, 3] }));
    expect(fast.pack({ next: 1 }, 0)).toEqual(msgpackrBytes({ next: 1 }));
  });

  it("lets an exception from a getter through and stays usable", () => {
    const fast = new FastPacker(undefined);
    const bad = {
      get boom(): number {
        throw new Error("getter");
      },
    };
    expect(() => fast.pack({ a: 1, bad }, 0)).toThrow("getter");
    expect(fast.pack({ a: 1 }, 0)).toEqual(msgpackrBytes({ a: 1 }));
  });
});
