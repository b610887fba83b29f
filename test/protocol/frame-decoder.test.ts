import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type DecodedFrame,
  describeFrameDecodeError,
  encodeFrame,
  type FrameDecodeResult,
  FrameDecoder,
  FrameType,
  FrameWriter,
} from "../../src/protocol/index.js";
import { concat } from "./helpers.js";

const ALL_TYPES = Object.values(FrameType);

/** A stream with one frame of every type, payloads of varied sizes (incl. empty). */
function sampleFrames(): DecodedFrame[] {
  return ALL_TYPES.map((type, i) => ({
    type,
    payload: Uint8Array.from({ length: i * 3 }, (_, j) => (i * 31 + j) & 0xff),
  }));
}

function encodeAll(frames: readonly DecodedFrame[]): Uint8Array {
  const w = new FrameWriter();
  for (const f of frames) w.append(f.type, f.payload);
  return w.take();
}

/** Pushes `chunks` and collects every frame and the last error. */
function decodeChunks(chunks: readonly Uint8Array[], decoder = new FrameDecoder()) {
  const frames: DecodedFrame[] = [];
  let last: FrameDecodeResult | undefined;
  for (const c of chunks) {
    last = decoder.push(c);
    frames.push(...last.frames);
  }
  return { frames: plain(frames), error: last?.error, decoder };
}

/** Frames with payloads copied into fresh arrays, for structural comparison. */
function plain(frames: readonly DecodedFrame[]) {
  return frames.map((f) => ({ type: f.type, payload: Uint8Array.from(f.payload) }));
}

function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [0, ...[...cuts].sort((a, b) => a - b), bytes.length];
  return points.slice(1).map((end, i) => bytes.slice(points[i], end));
}

describe("FrameDecoder", () => {
  it("decodes one frame of every type from a single chunk", () => {
    const frames = sampleFrames();
    const { frames: out, error } = decodeChunks([encodeAll(frames)]);
    expect(error).toBeUndefined();
    expect(out).toEqual(plain(frames));
  });

  it("decodes the same frames when the stream is split at every single byte boundary", () => {
    const frames = sampleFrames();
    const stream = encodeAll(frames);
    for (let cut = 0; cut <= stream.length; cut++) {
      const { frames: out, error, decoder } = decodeChunks(splitAt(stream, [cut]));
      expect(error).toBeUndefined();
      expect(out, `cut at ${cut}`).toEqual(plain(frames));
      expect(decoder.bufferedBytes).toBe(0);
    }
  });

  it("decodes the same frames when the stream is split at every pair of boundaries", () => {
    const frames = sampleFrames();
    const stream = encodeAll(frames);
    for (let a = 0; a <= stream.length; a++) {
      for (let b = a; b <= stream.length; b++) {
        expect(decodeChunks(splitAt(stream, [a, b])).frames).toEqual(plain(frames));
      }
    }
  });

  it("decodes a stream fed one byte at a time, tracking the partial frame", () => {
    const stream = encodeFrame(FrameType.USER, Uint8Array.of(1, 2, 3));
    const decoder = new FrameDecoder();
    for (let i = 0; i < stream.length - 1; i++) {
      expect(decoder.push(stream.subarray(i, i + 1)).frames).toEqual([]);
      expect(decoder.bufferedBytes).toBe(i + 1);
    }
    const last = decoder.push(stream.subarray(stream.length - 1));
    expect(plain(last.frames)).toEqual([{ type: FrameType.USER, payload: Uint8Array.of(1, 2, 3) }]);
  });

  it("returns payloads of whole-chunk frames as views of the pushed chunk (no copy)", () => {
    const chunk = encodeFrame(FrameType.CONTROL, Uint8Array.of(5, 6));
    const [frame] = new FrameDecoder().push(chunk).frames;
    expect(frame?.payload.buffer).toBe(chunk.buffer);
    expect(frame?.payload.byteOffset).toBe(5);
  });

  it("keeps a payload assembled across chunks valid after later pushes", () => {
    const stream = concat(
      encodeFrame(FrameType.USER, Uint8Array.of(1, 2, 3, 4)),
      encodeFrame(FrameType.USER, Uint8Array.of(9, 9, 9, 9)),
    );
    const decoder = new FrameDecoder();
    decoder.push(stream.subarray(0, 6));
    const [first] = decoder.push(stream.subarray(6, 12)).frames;
    decoder.push(stream.subarray(12));
    expect(first?.payload).toEqual(Uint8Array.of(1, 2, 3, 4));
  });

  it("rejects a length prefix above frameSizeMaxBytes before the body arrives", () => {
    const decoder = new FrameDecoder({ frameSizeMaxBytes: 16 });
    const ok = encodeFrame(FrameType.USER, new Uint8Array(15), 16);
    const r = decoder.push(concat(ok, Uint8Array.of(0, 0, 0, 17)));
    expect(r.frames).toHaveLength(1);
    expect(r.error).toEqual({
      code: "FRAME_TOO_LARGE",
      streamOffset: ok.length,
      sizeBytes: 17,
      frameSizeMaxBytes: 16,
    });
    expect(describeFrameDecodeError(r.error!)).toContain("frameSizeMaxBytes=16");
  });

  it("rejects the default 256 KiB bound + 1 announced by a split prefix", () => {
    const decoder = new FrameDecoder();
    expect(decoder.push(Uint8Array.of(0, 4)).error).toBeUndefined();
    expect(decoder.push(Uint8Array.of(0, 1)).error).toMatchObject({
      code: "FRAME_TOO_LARGE",
      sizeBytes: 262_145,
      streamOffset: 0,
    });
  });

  it("rejects a zero length prefix", () => {
    const r = new FrameDecoder().push(Uint8Array.of(0, 0, 0, 0, 4));
    expect(r).toEqual({ frames: [], error: { code: "FRAME_EMPTY", streamOffset: 0 } });
  });

  it.each([0, 9, 255])(
    "rejects unknown frame type %i, also when it arrives in a later chunk",
    (t) => {
      expect(new FrameDecoder().push(Uint8Array.of(0, 0, 0, 2, t, 1)).error).toEqual({
        code: "FRAME_TYPE_UNKNOWN",
        streamOffset: 0,
        frameType: t,
      });
      const d = new FrameDecoder();
      expect(d.push(Uint8Array.of(0, 0, 0, 2)).error).toBeUndefined();
      expect(d.push(Uint8Array.of(t)).error).toMatchObject({ code: "FRAME_TYPE_UNKNOWN" });
    },
  );

  it("returns the frames before a bad one, then stays poisoned with the same error", () => {
    const good = encodeFrame(FrameType.USER, Uint8Array.of(1));
    const decoder = new FrameDecoder();
    const r = decoder.push(concat(good, Uint8Array.of(0, 0, 0, 0), good));
    expect(r.frames).toHaveLength(1);
    expect(r.error?.code).toBe("FRAME_EMPTY");
    const again = decoder.push(good);
    expect(again.frames).toEqual([]);
    expect(again.error).toBe(r.error);
    expect(decoder.error).toBe(r.error);
  });

  it("treats an empty chunk as a no-op", () => {
    expect(new FrameDecoder().push(new Uint8Array(0))).toEqual({ frames: [], error: undefined });
  });
});

describe("FrameDecoder properties (fast-check)", () => {
  const frameArb = fc.record({
    type: fc.constantFrom(...ALL_TYPES),
    payload: fc.uint8Array({ maxLength: 64 }),
  });

  it("never throws for arbitrary bytes in arbitrary chunkings", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 512 }),
        fc.array(fc.nat(512), { maxLength: 20 }),
        fc.integer({ min: 1, max: 300 }),
        (bytes, cuts, max) => {
          const decoder = new FrameDecoder({ frameSizeMaxBytes: max });
          for (const chunk of splitAt(
            bytes,
            cuts.map((c) => c % (bytes.length + 1)),
          )) {
            const r = decoder.push(chunk);
            for (const f of r.frames) expect(f.payload.length).toBeLessThan(max);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("decodes valid frame sequences identically under any re-chunking", () => {
    fc.assert(
      fc.property(
        fc.array(frameArb, { maxLength: 12 }),
        fc.array(fc.nat(2000), { maxLength: 30 }),
        (frames, cuts) => {
          const stream = encodeAll(frames);
          const chunks = splitAt(
            stream,
            cuts.map((c) => c % (stream.length + 1)),
          );
          const { frames: out, error, decoder } = decodeChunks(chunks);
          expect(error).toBeUndefined();
          expect(out).toEqual(plain(frames));
          expect(decoder.bufferedBytes).toBe(0);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reports the same error whatever the chunking of a corrupted stream", () => {
    fc.assert(
      fc.property(
        fc.array(frameArb, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.array(fc.nat(1000), { maxLength: 10 }),
        (frames, at, xor, cuts) => {
          const stream = encodeAll(frames).slice();
          stream[at % stream.length]! ^= xor;
          const whole = decodeChunks([stream], new FrameDecoder({ frameSizeMaxBytes: 128 }));
          const chunks = splitAt(
            stream,
            cuts.map((c) => c % (stream.length + 1)),
          );
          const split = decodeChunks(chunks, new FrameDecoder({ frameSizeMaxBytes: 128 }));
          expect(split.frames).toEqual(whole.frames);
          expect(split.error).toEqual(whole.error);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("FrameDecoder.pushTo (frames as ranges, no allocation per frame)", () => {
  it("hands whole-chunk frames over as ranges of the chunk and spanning ones in their own buffer", () => {
    const frames = sampleFrames();
    const stream = encodeAll(frames);
    const cut = 9; // inside the second frame
    const chunks = [stream.slice(0, cut), stream.slice(cut)];
    const decoder = new FrameDecoder();
    const seen: { type: number; source: Uint8Array; start: number; end: number }[] = [];
    const sink = {
      onFrame: (type: FrameType, source: Uint8Array, start: number, end: number) => {
        seen.push({ type, source, start, end });
      },
    };
    for (const c of chunks) expect(decoder.pushTo(c, sink)).toBeUndefined();
    expect(seen.map((f) => ({ type: f.type, payload: f.source.slice(f.start, f.end) }))).toEqual(
      plain(frames),
    );
    expect(seen[0]?.source).toBe(chunks[0]);
    expect(seen[1]?.source).not.toBe(chunks[0]);
    expect(seen[1]?.source).not.toBe(chunks[1]);
    expect(seen.slice(2).every((f) => f.source === chunks[1])).toBe(true);
  });

  it("delivers the frames before a bad one, then returns the error and stays poisoned", () => {
    const good = encodeFrame(FrameType.USER, Uint8Array.of(1, 2));
    const bad = Uint8Array.of(0, 0, 0, 1, 99);
    const decoder = new FrameDecoder();
    const types: number[] = [];
    const sink = { onFrame: (type: FrameType) => void types.push(type) };
    const error = decoder.pushTo(concat(good, bad, good), sink);
    expect(error).toMatchObject({ code: "FRAME_TYPE_UNKNOWN", streamOffset: good.length });
    expect(types).toEqual([FrameType.USER]);
    expect(decoder.pushTo(good, sink)).toBe(error);
    expect(types).toEqual([FrameType.USER]);
  });
});

describe("FrameDecoder.setFrameSizeMax (handshake bound, then the full one)", () => {
  it("applies from the next frame on, so a connection starts small and grows once authenticated", () => {
    const d = new FrameDecoder({ frameSizeMaxBytes: 16 });
    const big = encodeFrame(FrameType.USER, new Uint8Array(40), 1024);
    const small = encodeFrame(FrameType.HANDSHAKE_REQ, new Uint8Array(8), 1024);
    expect(d.push(small).frames.length).toBe(1);
    d.setFrameSizeMax(1024);
    expect(d.push(big)).toMatchObject({ frames: [{ type: FrameType.USER }], error: undefined });
    const strict = new FrameDecoder({ frameSizeMaxBytes: 16 });
    expect(strict.push(big.subarray(0, 4)).error).toMatchObject({
      code: "FRAME_TOO_LARGE",
      sizeBytes: 41,
      frameSizeMaxBytes: 16,
    });
  });
});
