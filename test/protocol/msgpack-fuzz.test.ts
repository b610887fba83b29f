/**
 * Decoder strictness: 100 000 random and mutated frames (fixed seed) through the default
 * serializer's decoder; it never throws anything but SerializationError and never decodes
 * anything larger than the frame. `npm run fuzz` runs the same property longer, with a
 * fresh seed. Also the specific inputs msgpackr alone would accept.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SerializationError } from "../../src/protocol/errors.js";
import { validateMsgpack } from "../../src/protocol/msgpack-validate.js";
import { checkFrame, fuzzProperty, registry } from "./msgpack-fuzz.js";

const SEED = 0x5eed_0014;
const RUNS = 100_000;

const decode = (bytes: number[]) => () => registry.deserialize(1, Uint8Array.from(bytes));

describe("msgpack decoder strictness", () => {
  it("the reserved byte 0xC1 is a SerializationError, alone or nested", () => {
    expect(decode([0xc1])).toThrow(SerializationError);
    expect(decode([0xc1])).toThrow(/reserved byte 0xC1/);
    expect(decode([0x92, 0x01, 0xc1])).toThrow(SerializationError);
    expect(decode([0x81, 0xa1, 0x61, 0xc1])).toThrow(SerializationError);
  });

  it("extensions shardkit never writes are refused (bundled strings, records, Error, RegExp, clone ids)", () => {
    for (const type of [0x62, 0x65, 0x69, 0x70, 0x72, 0x78, 0x01, 0x7f])
      expect(decode([0xd4, type, 0x00, 0xc0])).toThrow(/not used by shardkit|fixext/);
    // A Set or a tagged value with a body longer than the filler, or a non-zero filler.
    expect(decode([0xc7, 0x02, 0x73, 0x00, 0x00, 0x90])).toThrow(SerializationError);
    expect(decode([0xd4, 0x73, 0x01, 0x90])).toThrow(SerializationError);
    expect(decode([0xd6, 0xff, 0, 0, 0, 1])).not.toThrow();
    expect(decode([0xc7, 0x05, 0xff, 0, 0, 0, 0, 1])).toThrow(/timestamp of 5 bytes/);
  });

  it("a length beyond the message fails before anything is allocated for it", () => {
    expect(decode([0xdd, 0xff, 0xff, 0xff, 0xff])).toThrow(/array of 4294967295 items/);
    expect(decode([0xdf, 0x7f, 0xff, 0xff, 0xff, 0x01])).toThrow(/map of/);
    expect(decode([0xdb, 0x00, 0x10, 0x00, 0x00, 0x61])).toThrow(/a string needs 1048576 bytes/);
    expect(decode([0xc6, 0xff, 0xff, 0xff, 0xff])).toThrow(/a binary needs/);
  });

  it("trailing bytes, an empty message and nesting beyond MESSAGE_DEPTH_MAX are refused", () => {
    expect(decode([0x01, 0x02])).toThrow(/1 bytes after the value/);
    expect(decode([])).toThrow(/empty message/);
    expect(() => validateMsgpack(new Uint8Array(1002).fill(0x91))).toThrow(/nested deeper/);
    expect(() =>
      validateMsgpack(Uint8Array.from([...new Array(999).fill(0x91), 0x01])),
    ).not.toThrow();
  });

  it("the known-bad inputs also satisfy the fuzz property", () => {
    for (const b of [[0xc1], [0xdd, 0xff, 0xff, 0xff, 0xff], [0xd4, 0x62, 0, 0]])
      expect(checkFrame(Uint8Array.from(b))).toBeUndefined();
  });

  it(`never throws anything but SerializationError and never decodes more than the frame (${RUNS} frames, seed ${SEED})`, () => {
    fc.assert(fuzzProperty, { seed: SEED, numRuns: RUNS });
  }, 120_000);
});
