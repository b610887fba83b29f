/**
 * Shared UTF-8 codecs. The decoder is `fatal` so malformed bytes from a peer are
 * detected (and reported as a decode error by the caller) instead of being replaced
 * with U+FFFD, and `ignoreBOM` keeps a leading U+FEFF so strings round-trip exactly.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** UTF-8 bytes of `text`. Lone surrogates become U+FFFD (TextEncoder semantics). */
export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * Writes the UTF-8 bytes of `text` into `target` (which must hold
 * `utf8ByteLength(text)` bytes) without allocating; returns the number written.
 */
export function utf8EncodeInto(text: string, target: Uint8Array): number {
  return encoder.encodeInto(text, target).written;
}

/** Decodes UTF-8; returns undefined when the bytes are not valid UTF-8. */
export function utf8Decode(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Number of bytes `utf8Encode(text)` produces, without encoding: lets hot-path encoders
 * size their output once and write strings in place.
 */
export function utf8ByteLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (isHighSurrogate(c) && isLowSurrogate(text.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3; // BMP character, or a lone surrogate encoded as U+FFFD
  }
  return n;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/**
 * Writes the UTF-8 of `text` at `offset`; `byteLength` must be utf8ByteLength(text).
 * ASCII (byteLength === text.length) is copied directly, which beats TextEncoder on the
 * short strings of actor paths.
 */
export function utf8Write(text: string, target: Uint8Array, offset: number, byteLength: number) {
  if (byteLength === text.length) {
    for (let i = 0; i < byteLength; i++) target[offset + i] = text.charCodeAt(i);
  } else {
    encoder.encodeInto(text, target.subarray(offset, offset + byteLength));
  }
}
