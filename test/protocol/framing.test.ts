import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import {
  DEFAULT_FRAMING_SETTINGS,
  encodeFrame,
  FrameTooLargeError,
  FrameType,
  FrameWriter,
  framePayloadBytes,
  framePayloadLength,
  frameTypeName,
  framingSettings,
  isFrameType,
} from "../../src/protocol/index.js";
import { catchError, concat } from "./helpers.js";

const bytes = (...b: number[]) => Uint8Array.from(b);

const alignUp = (n: number) => (n + 7) & ~7;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

describe("frame types", () => {
  it("are 1..8 and named", () => {
    expect(Object.values(FrameType).sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(frameTypeName(FrameType.SYSTEM_ACK)).toBe("SYSTEM_ACK");
    expect(isFrameType(0)).toBe(false);
    expect(isFrameType(9)).toBe(false);
    expect(frameTypeName(FrameType.HANDSHAKE_CONFIRM)).toBe("HANDSHAKE_CONFIRM");
    expect(isFrameType(FrameType.CONTROL)).toBe(true);
  });
});

describe("encodeFrame", () => {
  it("writes a big-endian body length, the type byte, then the payload", () => {
    expect(encodeFrame(FrameType.USER, bytes(0xaa, 0xbb))).toEqual(
      bytes(0, 0, 0, 3, FrameType.USER, 0xaa, 0xbb),
    );
    expect(encodeFrame(FrameType.CONTROL, new Uint8Array(0))).toEqual(
      bytes(0, 0, 0, 1, FrameType.CONTROL),
    );
  });

  it("encodes a 300-byte payload with a multi-byte length", () => {
    const f = encodeFrame(FrameType.SYSTEM, new Uint8Array(300).fill(7));
    expect([...f.subarray(0, 5)]).toEqual([0, 0, 0x01, 0x2d, FrameType.SYSTEM]);
    expect(f.length).toBe(305);
  });

  it("accepts a body of exactly frameSizeMaxBytes and rejects one byte more", () => {
    const max = DEFAULT_FRAMING_SETTINGS.frameSizeMaxBytes;
    expect(encodeFrame(FrameType.USER, new Uint8Array(max - 1)).length).toBe(max + 4);
    const err = catchError(() => encodeFrame(FrameType.USER, new Uint8Array(max)));
    expect(err).toBeInstanceOf(FrameTooLargeError);
    expect(err).toMatchObject({
      code: "FRAME_TOO_LARGE",
      sizeBytes: max + 1,
      frameSizeMaxBytes: max,
    });
  });

  it("honours a custom frameSizeMaxBytes", () => {
    expect(() => encodeFrame(FrameType.USER, new Uint8Array(10), 10)).toThrow(FrameTooLargeError);
    expect(encodeFrame(FrameType.USER, new Uint8Array(9), 10).length).toBe(14);
  });
});

describe("framingSettings", () => {
  it("defaults frameSizeMaxBytes to 256 KiB and allows up to 64 MiB", () => {
    expect(framingSettings().frameSizeMaxBytes).toBe(262_144);
    expect(framingSettings({ frameSizeMaxBytes: 64 * 1024 * 1024 }).frameSizeMaxBytes).toBe(
      64 * 1024 * 1024,
    );
  });

  it.each([0, -1, 1.5, Number.NaN, 64 * 1024 * 1024 + 1])("rejects frameSizeMaxBytes=%s", (v) => {
    const err = catchError(() => framingSettings({ frameSizeMaxBytes: v }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ code: "CONFIG_INVALID", key: "frameSizeMaxBytes" });
  });
});

describe("FrameWriter", () => {
  it("coalesces appended frames into one batch identical to separate encodings", () => {
    const w = new FrameWriter();
    w.append(FrameType.USER, bytes(1));
    w.append(FrameType.CONTROL, bytes(2, 3));
    expect(w.pendingFrames).toBe(2);
    expect(w.pendingBytes).toBe(6 + 7);
    const batch = w.take();
    expect(batch).toEqual(
      concat(encodeFrame(FrameType.USER, bytes(1)), encodeFrame(FrameType.CONTROL, bytes(2, 3))),
    );
    expect(w.pendingBytes).toBe(0);
    expect(w.take().length).toBe(0);
  });

  it("never overwrites a batch it handed out, across growth", () => {
    const w = new FrameWriter({ bufferSizeInitialBytes: 16 });
    w.append(FrameType.USER, bytes(9, 9, 9));
    const first = w.take();
    const firstCopy = first.slice();
    for (let i = 0; i < 50; i++) w.append(FrameType.USER, new Uint8Array(i).fill(i));
    const second = w.take();
    w.append(FrameType.SYSTEM, bytes(1));
    expect(first).toEqual(firstCopy);
    expect(second.length).toBe(50 * 5 + (49 * 50) / 2);
    expect(w.take()).toEqual(encodeFrame(FrameType.SYSTEM, bytes(1)));
  });

  it("throws FrameTooLargeError and appends nothing for an oversized payload", () => {
    const w = new FrameWriter({ frameSizeMaxBytes: 8 });
    w.append(FrameType.USER, bytes(1));
    expect(() => w.append(FrameType.USER, new Uint8Array(8))).toThrow(FrameTooLargeError);
    expect(w.pendingFrames).toBe(1);
    expect(w.take()).toEqual(encodeFrame(FrameType.USER, bytes(1)));
  });

  it("validates its options", () => {
    expect(() => new FrameWriter({ bufferSizeInitialBytes: 0 })).toThrow(ConfigError);
    expect(() => new FrameWriter({ frameSizeMaxBytes: 0 })).toThrow(ConfigError);
  });
});

describe("FrameWriter buffer sizing", () => {
  it("never overwrites a batch it handed out, for any pattern of batch sizes (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.nat(1_500), { maxLength: 30 }), { maxLength: 25 }),
        fc.integer({ min: 1, max: 512 }),
        (batches, initial) => {
          const w = new FrameWriter({ bufferSizeInitialBytes: initial });
          const out: { view: Uint8Array; expected: Uint8Array }[] = [];
          for (const sizes of batches) {
            const payloads = sizes.map((n, i) => new Uint8Array(n).fill(i & 0xff));
            for (const p of payloads) w.append(FrameType.USER, p);
            out.push({
              view: w.take(),
              expected: concat(...payloads.map((p) => encodeFrame(FrameType.USER, p))),
            });
          }
          for (const { view, expected } of out) expect(sameBytes(view, expected)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("carves a bulk sender's batches one after another from the pool and holds no buffer between batches", () => {
    const w = new FrameWriter({ bufferSizeInitialBytes: 1024 });
    const payload = new Uint8Array(100);
    const bulkBatch = () => {
      while (w.pendingBytes < 100_000) w.append(FrameType.USER, payload);
      return w.take();
    };
    bulkBatch();
    expect(w.bufferBytes).toBe(0);
    const batches = Array.from({ length: 6 }, () => bulkBatch());
    // no copying: each batch starts where the one before ended (or in a fresh chunk)
    let contiguous = 0;
    for (let i = 1; i < batches.length; i++) {
      const a = batches[i - 1] as Uint8Array;
      const b = batches[i] as Uint8Array;
      if (a.buffer === b.buffer && b.byteOffset === alignUp(a.byteOffset + a.length)) contiguous++;
    }
    expect(contiguous).toBeGreaterThanOrEqual(3);
    // a batch's bytes are never written again by later batches
    const first = (batches[0] as Uint8Array).slice();
    for (let i = 0; i < 20; i++) bulkBatch();
    expect(sameBytes(batches[0] as Uint8Array, first)).toBe(true);
    // after the burst, small batches take small buffers again, each released at take
    w.append(FrameType.USER, payload);
    w.take();
    w.append(FrameType.USER, payload);
    expect(w.bufferBytes).toBe(1024);
    w.take();
    expect(w.bufferBytes).toBe(0);
  });

  it("appendTagged writes the same frame as append of the tag byte and the payload", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.nat(3_000)), { maxLength: 20 }),
        (frames) => {
          const tagged = new FrameWriter({ bufferSizeInitialBytes: 64 });
          const plain = new FrameWriter({ bufferSizeInitialBytes: 64 });
          for (const [tag, n] of frames) {
            const payload = new Uint8Array(n).fill(tag ^ 0x5a);
            tagged.appendTagged(FrameType.CONTROL, tag, payload);
            plain.append(FrameType.CONTROL, concat(Uint8Array.of(tag), payload));
          }
          expect(tagged.pendingFrames).toBe(plain.pendingFrames);
          expect(sameBytes(tagged.take(), plain.take())).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
    const w = new FrameWriter({ frameSizeMaxBytes: 10 });
    expect(() => w.appendTagged(FrameType.CONTROL, 1, new Uint8Array(9))).toThrow(
      FrameTooLargeError,
    );
    expect(w.pendingBytes).toBe(0);
    w.appendTagged(FrameType.CONTROL, 1, new Uint8Array(8));
    expect(w.pendingFrames).toBe(1);
  });

  it("a payload in parts makes the same frame as the parts one after the other, and counts their sum", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 255 }), fc.array(fc.nat(2_000), { maxLength: 5 })),
          { maxLength: 12 },
        ),
        (frames) => {
          const parted = new FrameWriter({ bufferSizeInitialBytes: 64 });
          const whole = new FrameWriter({ bufferSizeInitialBytes: 64 });
          for (const [tag, sizes] of frames) {
            const parts = sizes.map((n, i) => new Uint8Array(n).fill(tag ^ i));
            expect(framePayloadLength(parts)).toBe(sizes.reduce((x, y) => x + y, 0));
            const bytes = framePayloadBytes(parts);
            expect(bytes.length).toBe(framePayloadLength(parts));
            parted.appendTagged(FrameType.CONTROL, tag, parts);
            whole.appendTagged(FrameType.CONTROL, tag, bytes);
          }
          expect(sameBytes(parted.take(), whole.take())).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
    // the size check counts every part: nothing is appended when the sum is too large
    const w = new FrameWriter({ frameSizeMaxBytes: 10 });
    expect(() =>
      w.appendTagged(FrameType.CONTROL, 1, [new Uint8Array(5), new Uint8Array(4)]),
    ).toThrow(FrameTooLargeError);
    expect(w.pendingBytes).toBe(0);
    w.appendTagged(FrameType.CONTROL, 1, [new Uint8Array(4), new Uint8Array(4)]);
    expect(w.pendingFrames).toBe(1);
  });
});
