/**
 * Decoder of USER payloads (layout in user-envelope.ts) for the receive hot path: one
 * reader per connection, reused for every message, so decoding allocates nothing in the
 * common case.
 *
 * - The payload is a range `[start, end)` of a source buffer (a network chunk), read with
 *   plain byte arithmetic: no view objects, no DataView.
 * - The last recipient string is remembered: a stream of messages to the same actor
 *   decodes its path once (a byte comparison instead of a UTF-8 decode, and the same
 *   string object every time, whose hash is then cached for map lookups).
 * - A reply to an ask (recipient `/temp/$ask<id>#<id>`, a new path every time) is read
 *   as its id (`recipientAskId`); its path string is built only if asked for.
 * - `read` never throws: it returns an error value, or undefined after filling in the
 *   fields. The fields describe the last successful read only, and the message is the
 *   range `[messageStart, messageEnd)` of `source` (same lifetime as the source).
 *   `release()` drops the reference to the source once the message is handled, so an
 *   idle connection does not pin its last network chunk.
 */
import { askIdOfPathBytes } from "./ask-path.js";
import { type PayloadDecodeError, PayloadErrorCode } from "./decode-result.js";
import { utf8Decode } from "./utf8.js";

const FLAG_SENDER = 0b1;
/** flags u8 + serializerId u32. */
const FIXED_BYTES = 5;
const EMPTY = new Uint8Array(0);

/** A decoded USER envelope whose message is a range of `source`. */
export interface UserEnvelopeView {
  /** Path of the recipient actor on this node. Non-empty. */
  readonly recipient: string;
  /** The ask id when `recipient` is an ask's reply target (src/protocol/ask-path.ts), else -1. */
  readonly recipientAskId: number;
  /** Full address + path of the sender, when present. */
  readonly sender: string | undefined;
  /** Id of the serializer that produced the message. */
  readonly serializerId: number;
  /** Buffer holding the message bytes. */
  readonly source: Uint8Array;
  /** Offset of the first message byte in `source`. */
  readonly messageStart: number;
  /** Offset after the last message byte in `source`. */
  readonly messageEnd: number;
}

function truncated(field: string, need: number, left: number, offset: number): PayloadDecodeError {
  return {
    code: PayloadErrorCode.TRUNCATED,
    detail: `${field}: needs ${need} bytes, ${Math.max(left, 0)} left`,
    offset,
  };
}

function invalid(detail: string, offset: number): PayloadDecodeError {
  return { code: PayloadErrorCode.INVALID_FIELD, detail, offset };
}

/** Reusable USER payload decoder; see the module comment. */
export class UserEnvelopeReader implements UserEnvelopeView {
  recipientAskId = -1;
  sender: string | undefined = undefined;
  serializerId = 0;
  source: Uint8Array = EMPTY;
  messageStart = 0;
  messageEnd = 0;
  /** The last ASCII recipient decoded ("" = none). */
  private cachedText = "";
  /** The recipient of the last read; undefined: an ask's, not built yet. */
  private recipientValue: string | undefined = "";

  get recipient(): string {
    if (this.recipientValue === undefined) {
      const id = this.recipientAskId;
      this.recipientValue = `/temp/$ask${id}#${id}`;
    }
    return this.recipientValue;
  }

  /** Decodes `source[start, end)`; undefined on success (fields set), else the error. */
  read(source: Uint8Array, start: number, end: number): PayloadDecodeError | undefined {
    if (end - start < 1) return truncated("flags", 1, end - start, 0);
    const flags = source[start] as number;
    if ((flags & ~FLAG_SENDER) !== 0) return invalid(`unknown flags ${flags}`, 0);
    if (end - start < FIXED_BYTES) return truncated("serializerId", 4, end - start - 1, 1);
    const serializerId =
      (((source[start + 1] as number) << 24) |
        ((source[start + 2] as number) << 16) |
        ((source[start + 3] as number) << 8) |
        (source[start + 4] as number)) >>>
      0;
    let pos = start + FIXED_BYTES;
    const recipientAt = pos;
    const recipientLength = str16Length(source, pos, end, "recipient", start);
    if (typeof recipientLength !== "number") return recipientLength;
    pos += 2;
    const askId = askIdOfPathBytes(source, pos, recipientLength);
    let recipient: string | undefined;
    if (askId < 0) {
      recipient = this.recipientText(source, pos, recipientLength);
      if (recipient === undefined) return invalid("recipient is not UTF-8", recipientAt - start);
      if (recipient.length === 0) return invalid("empty recipient", recipientAt - start);
    }
    pos += recipientLength;
    let sender: string | undefined;
    if (flags & FLAG_SENDER) {
      const senderAt = pos;
      const senderLength = str16Length(source, pos, end, "sender", start);
      if (typeof senderLength !== "number") return senderLength;
      pos += 2;
      sender = utf8Decode(source.subarray(pos, pos + senderLength));
      if (sender === undefined) return invalid("sender is not UTF-8", senderAt - start);
      pos += senderLength;
    }
    this.recipientValue = recipient;
    this.recipientAskId = askId;
    this.sender = sender;
    this.serializerId = serializerId;
    this.source = source;
    this.messageStart = pos;
    this.messageEnd = end;
    return undefined;
  }

  /** Forgets the source buffer of the last read (the other fields stay). */
  release(): void {
    this.source = EMPTY;
  }

  /**
   * The recipient string at `source[at, at + length)`, from the cache when unchanged.
   * Only ASCII paths (the norm) are cached; they are compared with the cached string's
   * char codes, so the cache costs no buffer.
   */
  private recipientText(source: Uint8Array, at: number, length: number): string | undefined {
    const cached = this.cachedText;
    if (length === cached.length && length > 0) {
      let i = 0;
      while (i < length && cached.charCodeAt(i) === source[at + i]) i++;
      if (i === length) return cached;
    }
    const text = utf8Decode(source.subarray(at, at + length));
    // text.length === length exactly when every byte is ASCII.
    if (text !== undefined && text.length === length) this.cachedText = text;
    return text;
  }
}

/** The length of the str16 at `pos` if its bytes fit before `end`, else the error. */
function str16Length(
  source: Uint8Array,
  pos: number,
  end: number,
  field: string,
  start: number,
): number | PayloadDecodeError {
  if (end - pos < 2) return truncated(field, 2, end - pos, pos - start);
  const length = ((source[pos] as number) << 8) | (source[pos + 1] as number);
  if (end - pos - 2 < length) return truncated(field, length, end - pos - 2, pos + 2 - start);
  return length;
}
