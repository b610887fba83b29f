/**
 * Streaming decoder of the framing in framing.ts: bytes arrive in chunks of any size,
 * complete frames come out.
 *
 * Invariants: `push` never throws, whatever the bytes. A bad stream (length prefix of
 * zero or above frameSizeMaxBytes, unknown type byte) yields an error value and poisons
 * the decoder: every later `push` returns the same error and no frames, because after a
 * framing error the byte stream cannot be resynchronised and the connection must be
 * dropped. Frames decoded before the bad one in the same chunk are still returned.
 *
 * Lifetimes (no copy where avoidable): a frame that lies entirely inside one pushed
 * chunk is returned as a view of that chunk; a frame spanning chunks is assembled in a
 * buffer allocated for that frame alone and handed over. The decoder never reuses
 * memory it has handed out, so a payload view stays valid as long as the caller does
 * not mutate the chunk it pushed. A view pins the whole chunk in memory: copy
 * (base/bytes.ts `copyBytes`) anything kept for long.
 *
 * Memory bound: at most one partial frame is buffered, so at most
 * 4 + frameSizeMaxBytes bytes per decoder (the bound in force when the frame began).
 *
 * Two ways out: `push` returns the frames as objects with payload views (simple, for
 * tests and cold paths); `pushTo` hands each frame to a {@link FrameSink} as a range
 * of a buffer, which allocates nothing per frame (the receive hot path).
 */
import {
  FRAME_LENGTH_PREFIX_BYTES,
  type FrameType,
  type FramingSettings,
  framingSettings,
  isFrameType,
} from "./framing.js";

/** A complete frame. `payload` excludes the type byte; see the module comment on lifetime. */
export interface DecodedFrame {
  readonly type: FrameType;
  readonly payload: Uint8Array;
}

/** Stable codes of stream errors. */
export const FrameDecodeErrorCode = {
  /** The length prefix exceeds frameSizeMaxBytes. */
  FRAME_TOO_LARGE: "FRAME_TOO_LARGE",
  /** The length prefix is zero (a body needs at least the type byte). */
  FRAME_EMPTY: "FRAME_EMPTY",
  /** The type byte is not a known FrameType. */
  FRAME_TYPE_UNKNOWN: "FRAME_TYPE_UNKNOWN",
} as const;

/** Why the stream is bad. `streamOffset` is where the offending frame starts. */
export type FrameDecodeError =
  | {
      readonly code: typeof FrameDecodeErrorCode.FRAME_TOO_LARGE;
      readonly streamOffset: number;
      readonly sizeBytes: number;
      readonly frameSizeMaxBytes: number;
    }
  | { readonly code: typeof FrameDecodeErrorCode.FRAME_EMPTY; readonly streamOffset: number }
  | {
      readonly code: typeof FrameDecodeErrorCode.FRAME_TYPE_UNKNOWN;
      readonly streamOffset: number;
      readonly frameType: number;
    };

/**
 * Receives decoded frames as ranges: the payload (type byte excluded) is
 * `source[start, end)`, where `source` is the pushed chunk, or for a frame that spanned
 * chunks a buffer of its own. Same lifetime rules as {@link DecodedFrame.payload}.
 */
export interface FrameSink {
  onFrame(type: FrameType, source: Uint8Array, start: number, end: number): void;
}

/** What one `push` produced. `error` is set once the stream is bad, and stays set. */
export interface FrameDecodeResult {
  readonly frames: readonly DecodedFrame[];
  readonly error: FrameDecodeError | undefined;
}

/** One-line description of a stream error, for logs. */
export function describeFrameDecodeError(error: FrameDecodeError): string {
  switch (error.code) {
    case FrameDecodeErrorCode.FRAME_TOO_LARGE:
      return `frame at stream offset ${error.streamOffset} announces ${error.sizeBytes} bytes, above frameSizeMaxBytes=${error.frameSizeMaxBytes}`;
    case FrameDecodeErrorCode.FRAME_EMPTY:
      return `frame at stream offset ${error.streamOffset} has a zero length prefix`;
    case FrameDecodeErrorCode.FRAME_TYPE_UNKNOWN:
      return `frame at stream offset ${error.streamOffset} has unknown type ${error.frameType}`;
  }
}

const NO_FRAMES: readonly DecodedFrame[] = Object.freeze([]);

/** Incremental frame decoder; one per inbound connection. */
export class FrameDecoder {
  private frameSizeMaxBytes: number;
  /** Stream offset of the first byte of the chunk being pushed. */
  private chunkBase = 0;
  /** Stream offset where the current (partial) frame starts. */
  private frameStart = 0;
  private readonly prefix = new Uint8Array(FRAME_LENGTH_PREFIX_BYTES);
  private prefixFilled = 0;
  /** Body of a frame spanning chunks, allocated once its length is known. */
  private body: Uint8Array | undefined;
  private bodyFilled = 0;
  private failure: FrameDecodeError | undefined;

  constructor(settings: Partial<FramingSettings> = {}) {
    this.frameSizeMaxBytes = framingSettings(settings).frameSizeMaxBytes;
  }

  /**
   * Changes the largest frame body accepted from the next frame on (remoting starts a
   * connection at the small handshake bound and raises it once the peer is
   * authenticated). A frame already being assembled keeps the bound it was checked with.
   */
  setFrameSizeMax(frameSizeMaxBytes: number): void {
    this.frameSizeMaxBytes = framingSettings({ frameSizeMaxBytes }).frameSizeMaxBytes;
  }

  /** Bytes of an incomplete frame received so far (prefix included). */
  get bufferedBytes(): number {
    return this.body ? FRAME_LENGTH_PREFIX_BYTES + this.bodyFilled : this.prefixFilled;
  }

  /** The error that poisoned the decoder, if any. */
  get error(): FrameDecodeError | undefined {
    return this.failure;
  }

  /** Feeds the next chunk of the stream; returns the frames it completed. Never throws. */
  push(chunk: Uint8Array): FrameDecodeResult {
    if (this.failure) return { frames: NO_FRAMES, error: this.failure };
    const collector = new FrameCollector();
    const error = this.pushTo(chunk, collector);
    return { frames: collector.frames, error };
  }

  /**
   * Feeds the next chunk of the stream and hands each completed frame to `sink`, in
   * order, as it is decoded. Returns the stream error, if any (frames before the bad one
   * have been delivered). Never throws unless `sink` does. The sink must not push into
   * this decoder; after a sink throws, the decoder must not be used again.
   */
  pushTo(chunk: Uint8Array, sink: FrameSink): FrameDecodeError | undefined {
    if (this.failure) return this.failure;
    let pos = 0;
    while (pos < chunk.length && this.failure === undefined) {
      pos = this.body ? this.continueBody(chunk, pos, sink) : this.readFrame(chunk, pos, sink);
    }
    this.chunkBase += chunk.length;
    return this.failure;
  }

  /** At a frame boundary or inside the prefix: reads the prefix, then the body if whole. */
  private readFrame(chunk: Uint8Array, pos: number, sink: FrameSink): number {
    if (this.prefixFilled === 0) this.frameStart = this.chunkBase + pos;
    const take = Math.min(FRAME_LENGTH_PREFIX_BYTES - this.prefixFilled, chunk.length - pos);
    const prefix = this.prefixFilled === 0 && take === FRAME_LENGTH_PREFIX_BYTES ? chunk : null;
    if (prefix === null) {
      this.prefix.set(chunk.subarray(pos, pos + take), this.prefixFilled);
      this.prefixFilled += take;
      if (this.prefixFilled < FRAME_LENGTH_PREFIX_BYTES) return pos + take;
    }
    const length = prefix ? readU32(prefix, pos) : readU32(this.prefix, 0);
    this.prefixFilled = 0;
    const bodyStart = pos + take;
    if (!this.checkLength(length)) return bodyStart;
    const available = chunk.length - bodyStart;
    if (available > 0 && !this.checkType(chunk[bodyStart] as number)) return bodyStart;
    if (available >= length) {
      sink.onFrame(chunk[bodyStart] as FrameType, chunk, bodyStart + 1, bodyStart + length);
      return bodyStart + length;
    }
    this.body = new Uint8Array(length);
    this.body.set(chunk.subarray(bodyStart));
    this.bodyFilled = available;
    return chunk.length;
  }

  /** Inside a body that spans chunks: copies what this chunk holds of it. */
  private continueBody(chunk: Uint8Array, pos: number, sink: FrameSink): number {
    const body = this.body as Uint8Array;
    if (this.bodyFilled === 0 && !this.checkType(chunk[pos] as number)) return pos;
    const take = Math.min(body.length - this.bodyFilled, chunk.length - pos);
    body.set(chunk.subarray(pos, pos + take), this.bodyFilled);
    this.bodyFilled += take;
    if (this.bodyFilled === body.length) {
      this.body = undefined;
      this.bodyFilled = 0;
      sink.onFrame(body[0] as FrameType, body, 1, body.length);
    }
    return pos + take;
  }

  private checkLength(length: number): boolean {
    if (length === 0) {
      this.failure = { code: FrameDecodeErrorCode.FRAME_EMPTY, streamOffset: this.frameStart };
    } else if (length > this.frameSizeMaxBytes) {
      this.failure = {
        code: FrameDecodeErrorCode.FRAME_TOO_LARGE,
        streamOffset: this.frameStart,
        sizeBytes: length,
        frameSizeMaxBytes: this.frameSizeMaxBytes,
      };
    }
    return this.failure === undefined;
  }

  private checkType(type: number): boolean {
    if (!isFrameType(type)) {
      this.failure = {
        code: FrameDecodeErrorCode.FRAME_TYPE_UNKNOWN,
        streamOffset: this.frameStart,
        frameType: type,
      };
      this.body = undefined;
      this.bodyFilled = 0;
    }
    return this.failure === undefined;
  }
}

function readU32(bytes: Uint8Array, at: number): number {
  return (
    (((bytes[at] as number) << 24) |
      ((bytes[at + 1] as number) << 16) |
      ((bytes[at + 2] as number) << 8) |
      (bytes[at + 3] as number)) >>>
    0
  );
}

/** Collects frames as objects with payload views, for `push`. */
class FrameCollector implements FrameSink {
  readonly frames: DecodedFrame[] = [];
  onFrame(type: FrameType, source: Uint8Array, start: number, end: number): void {
    this.frames.push({ type, payload: source.subarray(start, end) });
  }
}
