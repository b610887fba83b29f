import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { askIdOfPath } from "../../src/protocol/ask-path.js";
import { decodeWith } from "../../src/protocol/byte-reader.js";
import {
  decodeSystemAck,
  decodeSystemMessage,
  decodeUserEnvelope,
  encodeFrame,
  encodeRecipientField,
  encodeSystemAck,
  encodeSystemMessage,
  encodeUserEnvelope,
  encodeUserPayload,
  FrameDecoder,
  FrameType,
  PayloadErrorCode,
  SerializationError,
  SerializerRegistry,
  type UserEnvelope,
  UserEnvelopeReader,
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

describe("UserEnvelopeReader (one per connection, reused)", () => {
  const envelopeArb = fc.record({
    recipient: fc.oneof(
      fc.constantFrom("/user/a#1", "/user/b#1", "/user/a#2", "/temp/$x#9", "/temp/$ask07#07"),
      fc.string({ minLength: 1, maxLength: 30, unit: "grapheme" }),
      // an ask's reply target: read as its id, the path built only when asked for
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).map((id) => `/temp/$ask${id}#${id}`),
    ),
    sender: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
    serializerId: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
    message: fc.uint8Array({ maxLength: 40 }),
  });

  it("decodes a stream of envelopes at any offset exactly as decodeUserEnvelope (fast-check)", () => {
    fc.assert(
      fc.property(fc.array(envelopeArb, { maxLength: 30 }), fc.nat(5), (envelopes, pad) => {
        const reader = new UserEnvelopeReader();
        for (const e of envelopes) {
          const payload = encodeUserEnvelope(e);
          const source = new Uint8Array(pad + payload.length + pad).fill(0xee);
          source.set(payload, pad);
          expect(reader.read(source, pad, pad + payload.length)).toBeUndefined();
          expect(reader.recipientAskId).toBe(askIdOfPath(e.recipient));
          expect({
            recipient: reader.recipient,
            sender: reader.sender,
            serializerId: reader.serializerId,
            message: reader.source.subarray(reader.messageStart, reader.messageEnd),
          }).toEqual({ ...e, sender: e.sender });
          expect(reader.source).toBe(source);
          reader.release();
          expect(reader.source.length).toBe(0);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("returns the same recipient string object for a repeated ASCII path", () => {
    const reader = new UserEnvelopeReader();
    const p1 = encodeUserEnvelope({ recipient: "/user/sink#1", serializerId: 1, message: bytes1 });
    const p2 = encodeUserEnvelope({ recipient: "/user/sink#2", serializerId: 1, message: bytes1 });
    reader.read(p1, 0, p1.length);
    const first = reader.recipient;
    reader.read(Uint8Array.from(p1), 0, p1.length);
    expect(reader.recipient).toBe(first);
    reader.read(p2, 0, p2.length);
    expect(reader.recipient).toBe("/user/sink#2");
  });

  it("agrees with a ByteReader-based reference decoder, errors included, and stays usable after one (fast-check)", () => {
    const junkArb = fc.oneof(
      fc.uint8Array({ maxLength: 60 }),
      envelopeArb.chain((e) =>
        fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(([at, xor]) => {
          const b = encodeUserEnvelope(e).slice();
          b[at % b.length]! ^= xor;
          return b.subarray(0, b.length - (at % 3));
        }),
      ),
    );
    fc.assert(
      fc.property(junkArb, envelopeArb, (junk, e) => {
        const reader = new UserEnvelopeReader();
        const expected = referenceDecode(junk);
        const error = reader.read(junk, 0, junk.length);
        if (expected.ok) {
          expect(error).toBeUndefined();
          expect(reader.recipient).toBe(expected.value.recipient);
          expect(reader.sender).toBe(expected.value.sender);
          expect(reader.serializerId).toBe(expected.value.serializerId);
          expect(reader.messageStart).toBe(junk.length - expected.value.message.length);
          expect(decodeUserEnvelope(junk)).toEqual(expected);
        } else {
          expect(error).toEqual(expected.error);
          expect(decodeUserEnvelope(junk)).toEqual(expected);
        }
        const good = encodeUserEnvelope(e);
        expect(reader.read(good, 0, good.length)).toBeUndefined();
        expect(reader.recipient).toBe(e.recipient);
      }),
      { numRuns: 2000 },
    );
  });

  it("rejects invalid UTF-8 in a recipient whose length matches the cached one", () => {
    const reader = new UserEnvelopeReader();
    const ok = encodeUserEnvelope({ recipient: "/ab", serializerId: 1, message: bytes1 });
    reader.read(ok, 0, ok.length);
    const bad = ok.slice();
    bad[8] = 0xff;
    expect(reader.read(bad, 0, bad.length)).toMatchObject({ code: "PAYLOAD_INVALID_FIELD" });
  });
});

const bytes1 = Uint8Array.of(1);

/** The ByteReader-based USER envelope decoder this reader replaced: an independent oracle. */
function referenceDecode(payload: Uint8Array) {
  return decodeWith(payload, (r) => {
    const flags = r.u8("flags");
    if ((flags & ~1) !== 0) r.fail(PayloadErrorCode.INVALID_FIELD, `unknown flags ${flags}`, 0);
    const serializerId = r.u32("serializerId");
    const at = r.offset;
    const recipient = r.str16("recipient");
    if (recipient.length === 0) r.fail(PayloadErrorCode.INVALID_FIELD, "empty recipient", at);
    const sender = flags & 1 ? r.str16("sender") : undefined;
    return { recipient, sender, serializerId, message: r.rest() };
  });
}

describe("encodeUserPayload (serialize straight into a USER payload)", () => {
  it("gives the same bytes as encodeUserEnvelope over serialize, on every path", () => {
    const registry = new SerializerRegistry().register(
      {
        id: 100,
        name: "text",
        toBinary: (v) => new TextEncoder().encode(String((v as { text: string }).text)),
        fromBinary: (b) => ({ text: new TextDecoder().decode(b) }),
      },
      { match: (v) => typeof v === "object" && v !== null && "text" in v },
    );
    const recipients = ["/user/sink#1", `/user/${"long".repeat(100)}#1`, "/user/é#3"];
    const values = [{ t: "m", n: 1, p: "x".repeat(80) }, new Map([[1, 2]]), { text: "hi" }];
    for (const recipient of recipients)
      for (const v of values) {
        const s = registry.serialize(v);
        const expected = encodeUserEnvelope({
          recipient,
          serializerId: s.serializerId,
          message: s.bytes,
        });
        const payload = encodeUserPayload(registry, encodeRecipientField(recipient), v);
        expect(Uint8Array.from(payload)).toEqual(expected);
      }
  });

  it("rejects a recipient path longer than 65535 UTF-8 bytes with SerializationError", () => {
    expect(() => encodeRecipientField(`/${"é".repeat(40_000)}`)).toThrow(SerializationError);
  });
});
