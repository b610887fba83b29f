/**
 * The gossip message without copies of its content (src/cluster/membership/gossip-message-wire.ts):
 * the parts concatenated are exactly msgpackr's bytes for the same map (so members of
 * any version read them), the reader returns what the general decoder returns with the
 * content as a view of the received bytes, and anything of another layout, truncated or
 * malformed is left to the general decoder without a throw.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  gossipMessageParts,
  NOT_CANONICAL,
  readGossipMessage,
} from "../../src/cluster/membership/gossip-message-wire.js";
import { framePayloadBytes } from "../../src/protocol/framing.js";
import { createMsgpackSerializer } from "../../src/protocol/msgpack-serializer.js";

const serializer = createMsgpackSerializer();

/** Content lengths around msgpackr's extension header sizes, and random ones. */
const contentLength = fc.oneof(
  fc.constantFrom(0, 1, 253, 254, 255, 256, 65_533, 65_534, 65_535, 65_536, 70_000),
  fc.integer({ min: 0, max: 3_000 }),
);

const message = fc.record({
  to: fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: "grapheme", minLength: 20, maxLength: 300 }),
    fc.constant("akka://sk@n123:2552#8124536"),
  ),
  content: contentLength.chain((n) =>
    fc.integer({ min: 0, max: 255 }).map((seed) => {
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) b[i] = (seed + i * 31) & 0xff;
      return b;
    }),
  ),
  s: fc.array(fc.integer({ min: 0, max: 127 }), { maxLength: 300 }),
  mh: fc.option(fc.tuple(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff })), {
    nil: undefined,
  }),
  c: fc.option(fc.constant(1 as const), { nil: undefined }),
});
type Message = typeof message extends fc.Arbitrary<infer T> ? T : never;

/**
 * Bytes as a hex string: equal bytes compare equal whether msgpackr handed out a Node
 * Buffer or a Uint8Array, and fast (deep equality walks tens of kilobytes slowly).
 */
const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length).toString("hex");
/** A decoded map with its typed arrays as hex strings. */
function plainRecord(v: unknown): unknown {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k, x instanceof Uint8Array ? `bytes ${hex(x)}` : x]),
  );
}

/** The map as membership-messages.ts built it before the parts: one msgpackr value. */
function packedWhole(m: Message): Uint8Array {
  const body: Record<string, unknown> = { to: m.to, gb: m.content, s: m.s };
  if (m.mh !== undefined) body.mh = m.mh;
  if (m.c !== undefined) body.c = m.c;
  return serializer.toBinary(body);
}

function parts(m: Message): readonly Uint8Array[] {
  return gossipMessageParts(serializer, m.to, m.content, {
    s: m.s,
    ...(m.mh === undefined ? {} : { mh: m.mh }),
    ...(m.c === undefined ? {} : { c: m.c }),
  });
}

describe("gossip message wire", () => {
  it("the parts one after the other are msgpackr's bytes of the whole map; the content is a part as it is", () => {
    fc.assert(
      fc.property(message, (m) => {
        const p = parts(m);
        expect(p[1]).toBe(m.content);
        expect(hex(framePayloadBytes(p))).toBe(hex(packedWhole(m)));
      }),
      { numRuns: 300 },
    );
  });

  it("the reader returns what the general decoder returns, with the content as a view of the received bytes", () => {
    fc.assert(
      fc.property(message, (m) => {
        const bytes = packedWhole(m);
        const read = readGossipMessage(serializer, bytes);
        if (read === NOT_CANONICAL) throw new Error("a canonical message was not read");
        const general = serializer.fromBinary(bytes) as Record<string, unknown>;
        expect(plainRecord(read)).toEqual(plainRecord(general));
        const gb = read.gb as Uint8Array;
        expect(gb.buffer).toBe(bytes.buffer);
        expect(hex(gb)).toBe(hex(m.content));
      }),
      { numRuns: 300 },
    );
  });

  it("another layout is left to the general decoder", () => {
    const content = new Uint8Array([1, 2, 3]);
    const others: unknown[] = [
      { gb: content, to: "x", s: [] }, // another key order
      { to: "x", gb: [1, 2, 3], s: [] }, // gb is no typed array
      { to: "x", gb: new Uint16Array([1, 2]), s: [] }, // another typed array
      { to: 7, gb: content, s: [] }, // to is no string
      { to: "x" }, // no gb
      { to: "x", gb: content, s: [], gb2: 1 },
      [1, 2, 3],
      "gossip",
    ];
    for (const o of others) {
      const bytes = serializer.toBinary(o);
      const read = readGossipMessage(serializer, bytes);
      if (read !== NOT_CANONICAL) {
        // only a layout it can read is read, and then as the general decoder does
        expect(plainRecord(read)).toEqual(plainRecord(serializer.fromBinary(bytes)));
        expect(o).toEqual({ to: "x", gb: content, s: [], gb2: 1 });
      }
    }
    // a second gb among the pairs after the content: the general decoder keeps the last one
    const twice = framePayloadBytes([
      ...parts({ to: "x", content, s: [], mh: undefined, c: undefined }).slice(0, 2),
      serializer.toBinary(["s", [], "gb", 5]).subarray(1),
    ]);
    twice[2] = 4; // four pairs
    expect(readGossipMessage(serializer, twice)).toBe(NOT_CANONICAL);
  });

  it("truncated or damaged messages never throw, and are read only if the general decoder reads them alike", () => {
    fc.assert(
      fc.property(
        message,
        fc.nat(),
        fc.nat({ max: 255 }),
        fc.boolean(),
        (m, at, byte, truncate) => {
          const whole = packedWhole(m);
          const i = at % whole.length;
          const bytes = truncate ? whole.slice(0, i) : whole.slice();
          if (!truncate) bytes[i] = byte;
          const read = readGossipMessage(serializer, bytes);
          if (read === NOT_CANONICAL) return;
          expect(plainRecord(read)).toEqual(plainRecord(serializer.fromBinary(bytes)));
        },
      ),
      { numRuns: 500 },
    );
  });
});
