import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeSystemAck,
  decodeSystemMessage,
  decodeUserEnvelope,
  encodeFrame,
  encodeSystemAck,
  encodeSystemMessage,
  encodeUserEnvelope,
  FrameDecoder,
  FrameType,
  SerializationError,
  SerializerRegistry,
  type UserEnvelope,
} from "../../src/protocol/index.js";

describe("user envelope", () => {
  const envelope: UserEnvelope = {
    recipient: "/user/cart-42",
    sender: "shop@10.0.0.1:2552/user/checkout",
    serializerId: 100_000,
    message: Uint8Array.of(1, 2, 3),
  };

  it("round-trips with and without a sender", () => {
    expect(decodeUserEnvelope(encodeUserEnvelope(envelope))).toEqual({ ok: true, value: envelope });
    const noSender = { ...envelope, sender: undefined };
    expect(decodeUserEnvelope(encodeUserEnvelope(noSender))).toEqual({ ok: true, value: noSender });
  });

  it("has the documented layout", () => {
    const bytes = encodeUserEnvelope({
      recipient: "/a",
      serializerId: 1,
      message: Uint8Array.of(9),
    });
    expect([...bytes]).toEqual([0, 0, 0, 0, 1, 0, 2, 0x2f, 0x61, 9]);
  });

  it("carries a serialized message end to end through a USER frame", () => {
    const registry = new SerializerRegistry();
    const { serializerId, bytes } = registry.serialize({ type: "add", sku: "tea", qty: 2 });
    const frame = encodeFrame(
      FrameType.USER,
      encodeUserEnvelope({ recipient: "/user/cart", serializerId, message: bytes }),
    );
    const [decodedFrame] = new FrameDecoder().push(frame).frames;
    expect(decodedFrame?.type).toBe(FrameType.USER);
    const env = decodeUserEnvelope(decodedFrame!.payload);
    if (!env.ok) throw new Error(env.error.detail);
    expect(registry.deserialize(env.value.serializerId, env.value.message)).toEqual({
      type: "add",
      sku: "tea",
      qty: 2,
    });
  });

  it("rejects a path longer than 65535 UTF-8 bytes with SerializationError", () => {
    expect(() => encodeUserEnvelope({ ...envelope, recipient: `/${"é".repeat(40_000)}` })).toThrow(
      SerializationError,
    );
  });

  it("fails to decode an empty recipient, unknown flags and truncation", () => {
    expect(decodeUserEnvelope(Uint8Array.of(0, 0, 0, 0, 1, 0, 0))).toMatchObject({
      error: { code: "PAYLOAD_INVALID_FIELD" },
    });
    expect(decodeUserEnvelope(Uint8Array.of(2, 0, 0, 0, 1, 0, 1, 0x61))).toMatchObject({
      error: { code: "PAYLOAD_INVALID_FIELD" },
    });
    expect(decodeUserEnvelope(Uint8Array.of(1, 0, 0, 0, 1, 0, 1, 0x61))).toMatchObject({
      error: { code: "PAYLOAD_TRUNCATED" },
    });
  });

  it("round-trips arbitrary envelopes (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40, unit: "grapheme" }),
        fc.option(fc.string({ maxLength: 40, unit: "grapheme" }), { nil: undefined }),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.uint8Array({ maxLength: 64 }),
        (recipient, sender, serializerId, message) => {
          const e = { recipient, sender, serializerId, message };
          expect(decodeUserEnvelope(encodeUserEnvelope(e))).toEqual({ ok: true, value: e });
        },
      ),
      { numRuns: 500 },
    );
  });

  it("never throws when decoding arbitrary bytes (fast-check)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        expect(typeof decodeUserEnvelope(bytes).ok).toBe("boolean");
        expect(typeof decodeSystemMessage(bytes).ok).toBe("boolean");
        expect(typeof decodeSystemAck(bytes).ok).toBe("boolean");
      }),
      { numRuns: 3000 },
    );
  });
});

describe("system messages", () => {
  it("round-trip sequence numbers across the u64 range", () => {
    for (const seq of [0n, 1n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 64n - 1n]) {
      const msg = Uint8Array.of(7, 8);
      expect(decodeSystemMessage(encodeSystemMessage(seq, msg))).toEqual({
        ok: true,
        value: { seq, message: msg },
      });
      expect(decodeSystemAck(encodeSystemAck(seq))).toEqual({ ok: true, value: seq });
    }
  });

  it("fail on truncated or oversized payloads", () => {
    expect(decodeSystemMessage(new Uint8Array(7))).toMatchObject({
      error: { code: "PAYLOAD_TRUNCATED" },
    });
    expect(decodeSystemAck(new Uint8Array(9))).toMatchObject({
      error: { code: "PAYLOAD_TRAILING_BYTES" },
    });
  });
});
