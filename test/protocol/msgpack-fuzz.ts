/**
 * The msgpack decoder fuzz property, shared by test/protocol/msgpack-fuzz.test.ts (fixed
 * seed, 100 000 frames, part of `npm test`) and `npm run fuzz` (any number of runs with a
 * fresh seed, printed so a failure can be replayed).
 *
 * Frames are random bytes, and valid encodings of varied values mutated (bytes flipped,
 * inserted, deleted, truncated, lengths rewritten). For each: decoding either returns a
 * value or throws SerializationError, and a returned value is no larger than the frame
 * (its nodes, string characters and binary bytes added up; see `decodedSize`).
 */
import fc from "fast-check";
import { SerializationError } from "../../src/protocol/errors.js";
import type { RefCodec } from "../../src/protocol/serialization.js";
import { SerializerRegistry } from "../../src/protocol/serializer-registry.js";

/** A stand-in actor ref for the serializer tests: the codec reads its address and path back. */
export class Ref {
  constructor(
    readonly address: string,
    readonly path: string,
  ) {}
}

export const refCodec: RefCodec = {
  isRef: (v) => v instanceof Ref,
  encode: (r) => ({ address: (r as Ref).address, path: (r as Ref).path }),
  decode: (d) => new Ref(d.address, d.path),
};

export const registry = new SerializerRegistry({ refCodec });

/** Values of every kind the default serializer writes, encoded once. */
const SAMPLES: readonly Uint8Array[] = [
  null,
  undefined,
  true,
  0,
  -1,
  1.5,
  2 ** 40,
  -(2 ** 40),
  5n,
  -(10n ** 30n),
  "",
  "hé🚀",
  "x".repeat(40),
  "y".repeat(300),
  new Uint8Array([1, 2, 3]),
  new Float64Array([1, 2]),
  new Int16Array([-1, 7]),
  new Date(1_700_000_000_123),
  new Set([1, "a", null]),
  new Map<unknown, unknown>([
    [1, "one"],
    ["k", [1, 2]],
  ]),
  [1, [2, [3, [4, {}]]]],
  { a: 1, b: [true, null], c: { d: "e", f: new Uint8Array(20) } },
  Array.from({ length: 20 }, (_, i) => i * 1000),
  { ref: new Ref("sk@127.0.0.1:2552", "/user/a#1"), list: [new Ref("sk@h:1", "/p#2")] },
].map((v) => registry.serialize(v).bytes);

/**
 * Nodes + characters of string values + binary bytes of a decoded value (an object key
 * counts as one node: a number key such as 10 becomes the string "10", longer than its
 * one-byte encoding, but is still one key per encoded key).
 */
export function decodedSize(v: unknown, seen = new Set<unknown>()): number {
  if (v === null || typeof v !== "object") return 1 + (typeof v === "string" ? v.length : 0);
  if (seen.has(v)) return 1;
  seen.add(v);
  if (ArrayBuffer.isView(v)) return 1 + v.byteLength;
  if (v instanceof Date || v instanceof Ref) return 1;
  let n = 1;
  if (v instanceof Map) for (const [k, x] of v) n += decodedSize(k, seen) + decodedSize(x, seen);
  else if (v instanceof Set) for (const x of v) n += decodedSize(x, seen);
  else if (Array.isArray(v)) for (const x of v) n += decodedSize(x, seen);
  else for (const x of Object.values(v as Record<string, unknown>)) n += 1 + decodedSize(x, seen);
  return n;
}

type Mutation =
  | { readonly t: "flip"; readonly at: number; readonly xor: number }
  | { readonly t: "set"; readonly at: number; readonly byte: number }
  | { readonly t: "insert"; readonly at: number; readonly byte: number }
  | { readonly t: "delete"; readonly at: number }
  | { readonly t: "truncate"; readonly at: number }
  | { readonly t: "length"; readonly at: number; readonly value: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    t: fc.constant("flip" as const),
    at: fc.nat(),
    xor: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({
    t: fc.constant("set" as const),
    at: fc.nat(),
    byte: fc.constantFrom(0xc1, 0xdd, 0xdf, 0xc9, 0xc6, 0xdb, 0xd4, 0xc7, 0xff, 0x00),
  }),
  fc.record({
    t: fc.constant("insert" as const),
    at: fc.nat(),
    byte: fc.integer({ min: 0, max: 255 }),
  }),
  fc.record({ t: fc.constant("delete" as const), at: fc.nat() }),
  fc.record({ t: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({
    t: fc.constant("length" as const),
    at: fc.nat(),
    value: fc.constantFrom(0xffff_ffff, 0x7fff_ffff, 0x1_0000, 0xffff, 255, 0),
  }),
);

function mutate(bytes: Uint8Array, m: Mutation): Uint8Array {
  const at = bytes.length === 0 ? 0 : m.at % bytes.length;
  switch (m.t) {
    case "flip": {
      const out = bytes.slice();
      out[at] = (out[at] ?? 0) ^ m.xor;
      return out;
    }
    case "set": {
      const out = bytes.slice();
      out[at] = m.byte;
      return out;
    }
    case "insert":
      return Uint8Array.from([...bytes.subarray(0, at), m.byte, ...bytes.subarray(at)]);
    case "delete":
      return Uint8Array.from([...bytes.subarray(0, at), ...bytes.subarray(at + 1)]);
    case "truncate":
      return bytes.slice(0, at);
    case "length": {
      // A 32-bit length written over whatever is at `at` (a header's length field, often).
      const out = bytes.slice();
      for (let i = 0; i < 4 && at + i < out.length; i++)
        out[at + i] = (m.value >>> (24 - 8 * i)) & 0xff;
      return out;
    }
  }
}

/** Random frames and mutated valid ones, about half each. */
export const frames: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc
    .tuple(
      fc.integer({ min: 0, max: SAMPLES.length - 1 }),
      fc.array(mutation, { minLength: 1, maxLength: 3 }),
    )
    .map(([i, ms]) => ms.reduce(mutate, SAMPLES[i] as Uint8Array)),
);

/** The property: SerializationError or a value no larger than the frame. Returns a failure text. */
export function checkFrame(bytes: Uint8Array): string | undefined {
  let value: unknown;
  try {
    // Decoded where it lies, as remoting does, behind a few unrelated bytes.
    const source = new Uint8Array(bytes.length + 3);
    source.set(bytes, 3);
    value = registry.deserializeRange(1, source, 3, source.length);
  } catch (e) {
    return e instanceof SerializationError ? undefined : `threw ${String(e)}`;
  }
  const size = decodedSize(value);
  return size <= bytes.length ? undefined : `decoded size ${size} > frame ${bytes.length}`;
}

export const fuzzProperty = fc.property(frames, (bytes) => {
  const failure = checkFrame(bytes);
  if (failure !== undefined) throw new Error(`${failure}: ${Buffer.from(bytes).toString("hex")}`);
});
