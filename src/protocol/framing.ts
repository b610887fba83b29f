/**
 * Length-prefixed framing of the remoting stream.
 *
 * Wire format of one frame: a 4-byte big-endian unsigned length N, then N bytes of
 * body; the body is 1 byte of frame type followed by N-1 bytes of type-specific
 * payload. Invariants: 1 <= N <= frameSizeMaxBytes (the bound covers the body, not the
 * 4-byte prefix), and the type byte is one of {@link FrameType}.
 *
 * Why a writer that appends: many frames coalesced into one socket write amortise the
 * syscall and the per-write overhead; the writer fills one buffer and hands out
 * non-overlapping views of it, so a batch costs one copy per payload and no allocation
 * until the buffer is full.
 */

import { fail } from "../base/assert.js";
import { BytePool } from "../base/bytes.js";
import { ConfigError } from "../base/errors.js";
import { FrameTooLargeError } from "./errors.js";

/** Frame type tags (the first body byte). 0 is never valid. */
export const FrameType = {
  /** Association request: the connecting node introduces itself (handshake.ts). */
  HANDSHAKE_REQ: 1,
  /** The accepting node introduces itself and answers the challenge (handshake.ts). */
  HANDSHAKE_ACK: 2,
  /** The accepting node refuses, with a reason code (handshake.ts). */
  HANDSHAKE_REJECT: 3,
  /** An ordinary actor message (user-envelope.ts). Best effort, ordered per association. */
  USER: 4,
  /** A reliable system message with a sequence number (system-message.ts). */
  SYSTEM: 5,
  /** Cumulative acknowledgement of SYSTEM frames (system-message.ts). */
  SYSTEM_ACK: 6,
  /** Unreliable control lane: heartbeats, gossip. Payload defined by those protocols. */
  CONTROL: 7,
  /** The connecting node answers the accepting node's challenge (handshake.ts, v2). */
  HANDSHAKE_CONFIRM: 8,
} as const;

/** One of the {@link FrameType} values. */
export type FrameType = (typeof FrameType)[keyof typeof FrameType];

const FRAME_TYPE_NAMES: Readonly<Record<FrameType, string>> = {
  [FrameType.HANDSHAKE_REQ]: "HANDSHAKE_REQ",
  [FrameType.HANDSHAKE_ACK]: "HANDSHAKE_ACK",
  [FrameType.HANDSHAKE_REJECT]: "HANDSHAKE_REJECT",
  [FrameType.USER]: "USER",
  [FrameType.SYSTEM]: "SYSTEM",
  [FrameType.SYSTEM_ACK]: "SYSTEM_ACK",
  [FrameType.CONTROL]: "CONTROL",
  [FrameType.HANDSHAKE_CONFIRM]: "HANDSHAKE_CONFIRM",
};

/** 1 at the index of each known type byte: a per-frame check without hashing. */
const KNOWN_TYPES = new Uint8Array(256);
for (const type of Object.values(FrameType)) KNOWN_TYPES[type] = 1;

/** True when `value` is a known frame type tag. */
export function isFrameType(value: number): value is FrameType {
  return KNOWN_TYPES[value] === 1;
}

/** Printable name of a frame type, for logs. */
export function frameTypeName(type: FrameType): string {
  return FRAME_TYPE_NAMES[type];
}

/** Bytes of the length prefix. */
export const FRAME_LENGTH_PREFIX_BYTES = 4;
/** Bytes of the frame type tag. */
export const FRAME_TYPE_BYTES = 1;
/**
 * Upper bound of the frameSizeMaxBytes setting: 64 MiB. The prefix could say 4 GiB, but
 * a decoder allocates a spanning frame's body up front, and messages that large belong
 * in a stream of chunks, not in one frame.
 */
export const FRAME_SIZE_MAX_LIMIT_BYTES = 64 * 1024 * 1024;

/** Settings of the framing layer. */
export interface FramingSettings {
  /**
   * Largest frame body (type byte + payload) accepted or produced, in bytes. Larger
   * outgoing payloads fail with FrameTooLargeError; a larger incoming length prefix
   * poisons the stream (the association must be dropped). Default 256 KiB.
   */
  readonly frameSizeMaxBytes: number;
}

/** Defaults of {@link FramingSettings}. */
export const DEFAULT_FRAMING_SETTINGS: FramingSettings = { frameSizeMaxBytes: 262_144 };

/** Fills in defaults and validates; throws ConfigError on a bad value. */
export function framingSettings(partial: Partial<FramingSettings> = {}): FramingSettings {
  const frameSizeMaxBytes = partial.frameSizeMaxBytes ?? DEFAULT_FRAMING_SETTINGS.frameSizeMaxBytes;
  if (
    !Number.isInteger(frameSizeMaxBytes) ||
    frameSizeMaxBytes < 1 ||
    frameSizeMaxBytes > FRAME_SIZE_MAX_LIMIT_BYTES
  )
    throw new ConfigError(
      "frameSizeMaxBytes",
      frameSizeMaxBytes,
      `an integer between 1 and ${FRAME_SIZE_MAX_LIMIT_BYTES}`,
    );
  return { frameSizeMaxBytes };
}

/**
 * A frame payload: bytes, or bytes in parts that make the payload one after the other
 * (a large part, such as an encoded gossip shared by many messages, then goes into the
 * frame without first being copied into a message of its own).
 */
export type FramePayload = Uint8Array | readonly Uint8Array[];

/** The length of a payload in bytes. */
export function framePayloadLength(payload: FramePayload): number {
  if (payload instanceof Uint8Array) return payload.length;
  let n = 0;
  for (const part of payload) n += part.length;
  return n;
}

/** A payload as one array of bytes (the parts copied after one another). */
export function framePayloadBytes(payload: FramePayload): Uint8Array {
  if (payload instanceof Uint8Array) return payload;
  const out = new Uint8Array(framePayloadLength(payload));
  let p = 0;
  for (const part of payload) {
    out.set(part, p);
    p += part.length;
  }
  return out;
}

/** Throws FrameTooLargeError if a payload of `payloadBytes` does not fit in a frame. */
export function checkFrameSize(payloadBytes: number, frameSizeMaxBytes: number): void {
  const body = FRAME_TYPE_BYTES + payloadBytes;
  if (body > frameSizeMaxBytes) throw new FrameTooLargeError(body, frameSizeMaxBytes);
}

/** Writes prefix + type + payload at `offset` of `target` (which must have room). */
function writeFrameAt(target: Uint8Array, offset: number, type: FrameType, payload: Uint8Array) {
  const body = FRAME_TYPE_BYTES + payload.length;
  target[offset] = body >>> 24;
  target[offset + 1] = (body >>> 16) & 0xff;
  target[offset + 2] = (body >>> 8) & 0xff;
  target[offset + 3] = body & 0xff;
  target[offset + 4] = type;
  target.set(payload, offset + FRAME_LENGTH_PREFIX_BYTES + FRAME_TYPE_BYTES);
}

/**
 * Encodes one frame into a new buffer.
 * @throws FrameTooLargeError when 1 + payload.length > frameSizeMaxBytes.
 */
export function encodeFrame(
  type: FrameType,
  payload: Uint8Array,
  frameSizeMaxBytes = DEFAULT_FRAMING_SETTINGS.frameSizeMaxBytes,
): Uint8Array {
  if (!isFrameType(type)) fail(`unknown frame type ${type}`);
  checkFrameSize(payload.length, frameSizeMaxBytes);
  const out = new Uint8Array(FRAME_LENGTH_PREFIX_BYTES + FRAME_TYPE_BYTES + payload.length);
  writeFrameAt(out, 0, type, payload);
  return out;
}

/** Options of {@link FrameWriter}. */
export interface FrameWriterOptions extends Partial<FramingSettings> {
  /** Size of the first buffer and of each fresh buffer, in bytes. Default 64 KiB. */
  readonly bufferSizeInitialBytes?: number;
}

const DEFAULT_BUFFER_SIZE_INITIAL_BYTES = 65_536;
const EMPTY_BUFFER = new Uint8Array(0);
/**
 * The batches of every writer in the process (base/bytes.ts, BytePool): a batch lives
 * from its `take` until its socket write completes.
 */
const batchPool = new BytePool();

/**
 * Coalesces many frames into one contiguous byte range for a single socket write.
 *
 * `append` copies the frame into the current buffer; `take` returns the frames
 * appended since the last `take` as one view. A region handed out by `take` is never
 * written again, so the view may be given to an asynchronous socket write as is.
 *
 * The writer itself is unbounded: the owner bounds a batch by calling `take` when
 * `pendingBytes` crosses its own limit. Buffers are regions of the process's batch pool
 * (base/bytes.ts, BytePool): a batch's buffer is carved with room for at least twice the
 * last batch (or `bufferSizeInitialBytes`), grows by doubling (and copying) when a batch
 * outgrows it, and at `take` its unused rest goes back to the pool, where the next
 * batch usually starts. So a batch costs no allocation of its own and no copying, and
 * a writer between batches holds no buffer at all.
 */
export class FrameWriter {
  private readonly frameSizeMaxBytes: number;
  private readonly bufferSizeInitialBytes: number;
  private buf: Uint8Array;
  private start = 0;
  private end = 0;
  private frames = 0;
  /** Size of the last batch taken (one-frame batches only lower it): sizes the next buffer. */
  private lastBatchBytes = 0;

  constructor(options: FrameWriterOptions = {}) {
    this.frameSizeMaxBytes = framingSettings(options).frameSizeMaxBytes;
    const initial = options.bufferSizeInitialBytes ?? DEFAULT_BUFFER_SIZE_INITIAL_BYTES;
    if (!Number.isInteger(initial) || initial < 1)
      throw new ConfigError("bufferSizeInitialBytes", initial, "a positive integer");
    this.bufferSizeInitialBytes = initial;
    // Allocated on first append: an idle association must not hold buffers.
    this.buf = EMPTY_BUFFER;
  }

  /** Bytes appended since the last `take`. */
  get pendingBytes(): number {
    return this.end - this.start;
  }

  /** Bytes of the buffer held for the current batch (0 between batches). */
  get bufferBytes(): number {
    return this.buf.length;
  }

  /** Frames appended since the last `take`. */
  get pendingFrames(): number {
    return this.frames;
  }

  /**
   * Appends one frame to the current batch.
   * @throws FrameTooLargeError when 1 + payload.length > frameSizeMaxBytes; nothing is
   *   appended then.
   */
  append(type: FrameType, payload: Uint8Array): void {
    // Checked without building the assertion's message on every call (hot path).
    if (!isFrameType(type)) fail(`unknown frame type ${type}`);
    checkFrameSize(payload.length, this.frameSizeMaxBytes);
    const size = FRAME_LENGTH_PREFIX_BYTES + FRAME_TYPE_BYTES + payload.length;
    if (this.end + size > this.buf.length) this.ensureRoom(size);
    writeFrameAt(this.buf, this.end, type, payload);
    this.end += size;
    this.frames += 1;
  }

  /** The batch appended since the last `take` (empty when none); starts a new batch. */
  take(): Uint8Array {
    const batch = this.buf.subarray(this.start, this.end);
    const bytes = this.end - this.start;
    this.start = this.end;
    // A batch of one frame (a lone large message such as a full gossip between small
    // control frames) never raises the size of the next buffer: sizing it from such a
    // batch carved twice the gossip's size for the next heartbeat.
    this.lastBatchBytes = this.frames > 1 ? bytes : Math.min(bytes, this.lastBatchBytes);
    this.frames = 0;
    // The rest of the buffer goes back to the pool (the batch keeps its chunk alive while
    // it is being written); the next batch is carved anew, usually right after this one.
    batchPool.shrinkLast(this.buf, this.end);
    this.buf = EMPTY_BUFFER;
    this.start = 0;
    this.end = 0;
    return batch;
  }

  /**
   * Appends one frame whose payload is the byte `tag` followed by `payload` (a control
   * frame's kind and body), without building that payload first. A payload in parts is
   * written part after part (FramePayload).
   * @throws FrameTooLargeError when 2 + the payload's length > frameSizeMaxBytes; nothing
   *   is appended then.
   */
  appendTagged(type: FrameType, tag: number, payload: FramePayload): void {
    if (!isFrameType(type)) fail(`unknown frame type ${type}`);
    const length = framePayloadLength(payload);
    checkFrameSize(length + 1, this.frameSizeMaxBytes);
    const size = FRAME_LENGTH_PREFIX_BYTES + FRAME_TYPE_BYTES + 1 + length;
    if (this.end + size > this.buf.length) this.ensureRoom(size);
    const buf = this.buf;
    const at = this.end;
    const body = FRAME_TYPE_BYTES + 1 + length;
    buf[at] = body >>> 24;
    buf[at + 1] = (body >>> 16) & 0xff;
    buf[at + 2] = (body >>> 8) & 0xff;
    buf[at + 3] = body & 0xff;
    buf[at + 4] = type;
    buf[at + 5] = tag;
    let p = at + FRAME_LENGTH_PREFIX_BYTES + FRAME_TYPE_BYTES + 1;
    if (payload instanceof Uint8Array) buf.set(payload, p);
    else
      for (const part of payload) {
        buf.set(part, p);
        p += part.length;
      }
    this.end += size;
    this.frames += 1;
  }

  private ensureRoom(size: number): void {
    if (this.end + size <= this.buf.length) return;
    const pending = this.end - this.start;
    // At least twice the last batch: a bulk sender's batches (up to its flush budget)
    // then fit without doubling and copying; small batches keep small buffers.
    const need = Math.max(pending + size, 2 * this.lastBatchBytes);
    let cap = this.bufferSizeInitialBytes;
    while (cap < need) cap *= 2;
    // A frame larger than a fresh buffer into an empty batch: exactly its size (it is
    // taken alone, and the buffer is dropped at take: no room left).
    if (pending === 0 && size > this.bufferSizeInitialBytes && need === size) cap = size;
    // Unspecified contents: a batch is a view of written bytes only (base/bytes.ts).
    const next = batchPool.alloc(cap);
    next.set(this.buf.subarray(this.start, this.end));
    this.buf = next;
    this.start = 0;
    this.end = pending;
  }
}
