/**
 * Bounds-checked big-endian reader over a payload from a peer. Every read checks the
 * remaining length first, so no input can read out of range. A failed read throws the
 * private `DecodeFailure`, which only `decodeWith` catches and turns into a
 * `DecodeResult` error value: decoders stay straight-line code, and the public decode
 * functions never throw (any other exception would be a bug and is not swallowed).
 *
 * `bytes()` and `rest()` return views (no copy) into the input.
 */
import {
  type DecodeResult,
  decoded,
  decodeFailed,
  type PayloadDecodeError,
  PayloadErrorCode,
} from "./decode-result.js";
import { utf8Decode } from "./utf8.js";

class DecodeFailure {
  constructor(readonly error: PayloadDecodeError) {}
}

/** Sequential reader; see the module comment for the failure protocol. */
export class ByteReader {
  private pos = 0;
  private readonly view: DataView;

  constructor(private readonly input: Uint8Array) {
    this.view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  }

  /** Current offset into the input. */
  get offset(): number {
    return this.pos;
  }

  /** Bytes not yet read. */
  get remaining(): number {
    return this.input.length - this.pos;
  }

  u8(field: string): number {
    this.need(1, field);
    const v = this.view.getUint8(this.pos);
    this.pos += 1;
    return v;
  }

  u16(field: string): number {
    this.need(2, field);
    const v = this.view.getUint16(this.pos);
    this.pos += 2;
    return v;
  }

  u32(field: string): number {
    this.need(4, field);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  u64(field: string): bigint {
    this.need(8, field);
    const v = this.view.getBigUint64(this.pos);
    this.pos += 8;
    return v;
  }

  i64(field: string): bigint {
    this.need(8, field);
    const v = this.view.getBigInt64(this.pos);
    this.pos += 8;
    return v;
  }

  /** A view of the next `length` bytes. */
  bytes(length: number, field: string): Uint8Array {
    this.need(length, field);
    const v = this.input.subarray(this.pos, this.pos + length);
    this.pos += length;
    return v;
  }

  /** A UTF-8 string prefixed by its u16 byte length. */
  str16(field: string): string {
    const start = this.pos;
    const text = utf8Decode(this.bytes(this.u16(field), field));
    if (text === undefined)
      this.fail(PayloadErrorCode.INVALID_FIELD, `${field} is not UTF-8`, start);
    return text;
  }

  /** A view of everything not yet read. */
  rest(): Uint8Array {
    const v = this.input.subarray(this.pos);
    this.pos = this.input.length;
    return v;
  }

  /** Fails unless every byte has been read. */
  end(): void {
    if (this.remaining !== 0)
      this.fail(PayloadErrorCode.TRAILING_BYTES, `${this.remaining} unexpected trailing bytes`);
  }

  /** Aborts decoding with an error value (caught by `decodeWith`). */
  fail(
    code: Exclude<PayloadErrorCode, typeof PayloadErrorCode.VERSION_UNSUPPORTED>,
    detail: string,
    offset = this.pos,
  ): never {
    throw new DecodeFailure({ code, detail, offset });
  }

  /** Aborts decoding with a ready-made error value. */
  failWith(error: PayloadDecodeError): never {
    throw new DecodeFailure(error);
  }

  private need(length: number, field: string): void {
    if (this.remaining < length)
      this.fail(
        PayloadErrorCode.TRUNCATED,
        `${field}: needs ${length} bytes, ${this.remaining} left`,
      );
  }
}

/** Runs `decode` over a reader of `input`, converting a `DecodeFailure` into a value. */
export function decodeWith<T>(input: Uint8Array, decode: (r: ByteReader) => T): DecodeResult<T> {
  const reader = new ByteReader(input);
  try {
    return decoded(decode(reader));
  } catch (e) {
    if (e instanceof DecodeFailure) return decodeFailed(e.error);
    throw e;
  }
}
