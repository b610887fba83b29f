/**
 * FastUnpacker (src/protocol/msgpack-fast-unpack.ts) against the general decoder
 * (validateMsgpack + msgpackr): on random values, on random and mutated frames, and on
 * the edge cases of its subset, the default serializer returns exactly what the general
 * path returns (same value, same key order, same classes) or throws exactly the same
 * error.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SerializationError } from "../../src/protocol/errors.js";
import { FAST_UNPACK_GAVE_UP, FastUnpacker } from "../../src/protocol/msgpack-fast-unpack.js";
import {
  createGeneralMsgpackSerializer,
  createMsgpackSerializer,
} from "../../src/protocol/msgpack-serializer.js";
import type { RefCodec } from "../../src/protocol/serialization.js";
import { frames, Ref, refCodec } from "./msgpack-fuzz.js";

const fast = createMsgpackSerializer(refCodec);
const general = createGeneralMsgpackSerializer(refCodec);

/** Where `a` and `b` differ (value, type, class, key order), or undefined when the same. */
function difference(a: unknown, b: unknown, at = "$"): string | undefined {
  if (typeof a !== typeof b) return `${at}: ${typeof a} vs ${typeof b}`;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object")
    return Object.is(a, b) ? undefined : `${at}: ${String(a)} vs ${String(b)}`;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${at}: prototypes differ`;
  if (a instanceof Ref && b instanceof Ref)
    return a.address === b.address && a.path === b.path ? undefined : `${at}: refs differ`;
  if (a instanceof Date && b instanceof Date)
    return Object.is(a.getTime(), b.getTime()) ? undefined : `${at}: dates differ`;
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    return x.length === y.length && x.every((v, i) => v === y[i])
      ? undefined
      : `${at}: bytes differ`;
  }
  const entries = (v: object): [unknown, unknown][] =>
    v instanceof Map
      ? [...v.entries()]
      : v instanceof Set
        ? [...v].map((x, i) => [i, x])
        : Object.entries(v);
  const ea = entries(a);
  const eb = entries(b);
  if (ea.length !== eb.length) return `${at}: ${ea.length} vs ${eb.length} entries`;
  for (let i = 0; i < ea.length; i++) {
    const [ka, va] = ea[i] as [unknown, unknown];
    const [kb, vb] = eb[i] as [unknown, unknown];
    const key = difference(ka, kb, `${at}.key${i}`);
    if (key !== undefined) return key;
    const value = difference(va, vb, `${at}[${String(ka)}]`);
    if (value !== undefined) return value;
  }
  return undefined;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
function outcome(decode: () => unknown): Outcome {
  try {
    return { ok: true, value: decode() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Decodes `bytes` where they lie behind 3 unrelated bytes, as remoting does. */
function both(bytes: Uint8Array): { fast: Outcome; general: Outcome } {
  const source = new Uint8Array(bytes.length + 3).fill(0xc1);
  source.set(bytes, 3);
  return {
    fast: outcome(() => fast.fromBinaryRange(source, 3, source.length)),
    general: outcome(() => general.fromBinaryRange(source, 3, source.length)),
  };
}

/** Same value, or the same error class and message. */
function sameOutcome(bytes: Uint8Array): string | undefined {
  const r = both(bytes);
  if (r.fast.ok && r.general.ok) return difference(r.fast.value, r.general.value);
  if (!r.fast.ok && !r.general.ok) {
    const a = r.fast.error as Error;
    const b = r.general.error as Error;
    return a.constructor === b.constructor && a.message === b.message
      ? undefined
      : `errors differ: ${a.message} vs ${b.message}`;
  }
  return `fast ${r.fast.ok ? "decoded" : "threw"}, general ${r.general.ok ? "decoded" : "threw"}`;
}

/** Whether FastUnpacker alone decodes `bytes` (rather than leaving them to msgpackr). */
function fastTakes(bytes: Uint8Array): boolean {
  return new FastUnpacker((d) => d).unpack(bytes, 0, bytes.length) !== FAST_UNPACK_GAVE_UP;
}

const anyUnits = (maxLength: number) =>
  fc
    .array(fc.integer({ min: 0, max: 0xffff }), { maxLength })
    .map((codes) => String.fromCharCode(...codes));
const stringArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 120, unit: "grapheme" }),
  anyUnits(40),
  fc.integer({ min: 0, max: 300 }).map((n) => "x".repeat(n)),
  fc.constantFrom("__proto__", "constructor", "\uFEFFbom", "é", "😀".repeat(9), "k1", "k2"),
);
const numberArb = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 32 }),
  fc.double(),
  fc.constantFrom(0, -0, 0x7f, 0x80, -0x20, -0x21, 2 ** 53, Number.NaN, -Infinity),
);
const { anyValue } = fc.letrec((tie) => ({
  anyValue: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    stringArb,
    numberArb,
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.bigInt(),
    fc.date({ noInvalidDate: true }),
    fc.uint8Array({ maxLength: 8 }),
    fc.tuple(fc.string(), fc.string()).map(([a, p]) => new Ref(a, p)),
    fc.array(tie("anyValue"), { maxLength: 8 }).map((xs) => new Set(xs)),
    fc.array(fc.tuple(tie("anyValue"), tie("anyValue")), { maxLength: 4 }).map((e) => new Map(e)),
    fc.array(tie("anyValue"), { maxLength: 20 }),
    fc.dictionary(stringArb, tie("anyValue"), { maxKeys: 20, noNullPrototype: true }),
  ),
}));

describe("FastUnpacker", () => {
  it("decodes every value exactly as the general path does (fast-check)", () => {
    fc.assert(
      fc.property(anyValue, (v) => {
        let bytes: Uint8Array;
        try {
          bytes = fast.toBinary(v);
        } catch (e) {
          // `__proto__` keys and the like are refused at send time.
          if (e instanceof SerializationError) return;
          throw e;
        }
        expect(sameOutcome(bytes)).toBeUndefined();
      }),
      { numRuns: 3000 },
    );
  });

  it("returns the same value or the same error as the general path on random and mutated frames (fast-check)", () => {
    fc.assert(
      fc.property(frames, (bytes) => {
        expect(sameOutcome(bytes)).toBeUndefined();
      }),
      { numRuns: 30_000, seed: 0x5eed_0015 },
    );
  });

  it("takes the common messages itself", () => {
    const ref = new Ref("sk@127.0.0.1:2552", "/user/a#1");
    const common = [
      { t: "m", n: 12345, p: "x".repeat(80) },
      { replyTo: ref, n: -7, ok: true, none: null, nothing: undefined, f: 1.5 },
      [1, "two", [3], { four: 4 }],
      { set: new Set([1, 2]), map: new Map([["k", 1]]) },
      { "é-key": "é-value", emoji: "😀" },
      { k: "y".repeat(70_000) },
    ];
    for (const v of common) {
      const bytes = fast.toBinary(v);
      expect(fastTakes(bytes)).toBe(true);
      expect(sameOutcome(bytes)).toBeUndefined();
    }
  });

  it("leaves everything outside its subset to msgpackr, with the same result", () => {
    const outside = [
      5n,
      2 ** 40, // float64 in msgpackr, but written as uint64? either way: same result
      new Date(1_700_000_000_123),
      Uint8Array.of(1, 2),
      new Float64Array([1, 2]),
      { a: [1, { b: 10n ** 30n }] },
    ];
    for (const v of outside) expect(sameOutcome(fast.toBinary(v))).toBeUndefined();
    expect(fastTakes(fast.toBinary(5n))).toBe(false);
    expect(fastTakes(fast.toBinary({ d: new Date(0) }))).toBe(false);
  });

  it("renames a `__proto__` key as msgpackr does, and never sets the prototype", () => {
    // fixmap 1: fixstr "__proto__" -> fixmap 1 { "x": 1 }
    const bytes = Uint8Array.from([
      0x81,
      0xa9,
      ...new TextEncoder().encode("__proto__"),
      0x81,
      0xa1,
      0x78,
      0x01,
    ]);
    expect(fastTakes(bytes)).toBe(true);
    const v = fast.fromBinary(bytes) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(["__proto_"]);
    expect(sameOutcome(bytes)).toBeUndefined();
  });

  it("key cache: different keys of one length, and non-ASCII keys, stay distinct", () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `k${i.toString(36).padStart(3, "0")}`);
    for (let round = 0; round < 2; round++)
      for (const k of keys) {
        const v = fast.fromBinary(fast.toBinary({ [k]: 1, é: 2, [`${k}é`]: 3 }));
        expect(Object.keys(v as object)).toEqual([k, "é", `${k}é`]);
      }
  });

  it("invalid UTF-8, lone surrogates, a BOM and non-string keys: same as msgpackr", () => {
    const cases = [
      [0xa2, 0xc3, 0x28], // invalid continuation
      [0xa3, 0xed, 0xa0, 0x80], // an encoded lone surrogate (msgpackr's JS encoder writes these)
      [0xa3, 0xef, 0xbb, 0xbf], // a BOM alone
      [0xa2, 0xc0, 0x80], // overlong NUL
      [0x81, 0x01, 0x02], // an integer key
      [0x81, 0xc0, 0x02], // a nil key
      [0x81, 0xa2, 0xc3, 0x28, 0x01], // an invalid UTF-8 key
    ];
    for (const c of cases) expect(sameOutcome(Uint8Array.from(c))).toBeUndefined();
    expect(fast.fromBinary(Uint8Array.from([0xa3, 0xef, 0xbb, 0xbf]))).toBe("\uFEFF");
    expect(sameOutcome(fast.toBinary("a\uD800b"))).toBeUndefined();
  });

  it("long strings: a non-ASCII or invalid byte at any position and alignment is seen", () => {
    // Strings of 16 bytes and more are checked a 4-byte word at a time: put the one
    // byte >= 0x80 at every position (the words, the tail), behind 0-7 bytes of offset.
    for (let length = 15; length <= 41; length++)
      for (let at = 0; at < length; at++)
        for (const high of [0xff, 0x80, 0xc3]) {
          const body = new Uint8Array(length).fill(0x61);
          body[at] = high;
          const bytes = Uint8Array.from([0xd9, length, ...body]);
          for (let offset = 0; offset < 8; offset++) {
            const source = new Uint8Array(offset + bytes.length).fill(0x20);
            source.set(bytes, offset);
            const f = outcome(() => fast.fromBinaryRange(source, offset, source.length));
            const g = outcome(() => general.fromBinaryRange(source, offset, source.length));
            expect(f.ok, `length ${length}, byte ${high} at ${at}, offset ${offset}`).toBe(g.ok);
            if (f.ok && g.ok) expect(f.value).toBe(g.value);
          }
        }
    // ... and an ASCII string of each length decodes through the fast path as itself
    for (let length = 15; length <= 41; length++) {
      const s = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ".slice(0, length);
      const bytes = fast.toBinary(s);
      expect(fastTakes(bytes)).toBe(true);
      expect(fast.fromBinary(bytes)).toBe(s);
    }
  });

  it("depth: MESSAGE_DEPTH_MAX levels decode, one more is refused as before", () => {
    const ok = Uint8Array.from([...new Array(999).fill(0x91), 0x01]);
    expect(fastTakes(ok)).toBe(true);
    expect(sameOutcome(ok)).toBeUndefined();
    const deep = new Uint8Array(1002).fill(0x91);
    expect(() => fast.fromBinary(deep)).toThrow(/nested deeper/);
    expect(sameOutcome(deep)).toBeUndefined();
  });

  it("a ref decoded before the fast path gives up is decoded again by msgpackr, with the same result", () => {
    let decodes = 0;
    const counting: RefCodec = {
      ...refCodec,
      decode: (d) => {
        decodes++;
        return new Ref(d.address, d.path);
      },
    };
    const s = createMsgpackSerializer(counting);
    const v = s.fromBinary(s.toBinary([new Ref("a", "/p"), 7n])) as unknown[];
    expect(v[0]).toEqual(new Ref("a", "/p"));
    expect(v[1]).toBe(7n);
    expect(decodes).toBe(2);
  });
});
