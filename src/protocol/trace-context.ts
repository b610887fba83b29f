/**
 * W3C trace context (https://www.w3.org/TR/trace-context/) as carried in a traced
 * forward (protocol/sharding.ts, EntityEnvelopeWire): `traceparent` and `tracestate`
 * checked as the recommendation says, so that a malformed value from a peer is dropped
 * (the message still travels, untraced) instead of reaching the tracer. Never throws.
 *
 * traceparent: `version "-" trace-id "-" parent-id "-" trace-flags`, lowercase hex of
 * 2, 32, 16 and 2 digits; version ff is invalid, an all-zero trace or parent id is
 * invalid; a version above 00 may append fields after a "-" (ignored).
 */

/** Length of a version-00 traceparent. */
export const TRACEPARENT_LENGTH = 55;
/** Longest tracestate accepted (the recommendation's limit for propagating it). */
export const TRACESTATE_LENGTH_MAX = 512;

/**
 * The W3C trace context of a span as it travels (the same shape as the tracing port's,
 * ports/tracing.ts).
 */
export interface W3CTraceContext {
  readonly traceparent: string;
  /** Present only when the span's trace state is not empty. */
  readonly tracestate?: string;
}

/** The fields of a valid traceparent. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  /** The trace flags byte (bit 0: sampled). */
  readonly traceFlags: number;
}

const HEX = /^[0-9a-f]+$/;
const ZERO = /^0+$/;

function isHex(s: string, length: number): boolean {
  return s.length === length && HEX.test(s) && !ZERO.test(s);
}

/** Formats a version-00 traceparent; undefined when an id or the flags are not valid. */
export function formatTraceParent(p: TraceParent): string | undefined {
  if (!isHex(p.traceId, 32) || !isHex(p.spanId, 16)) return undefined;
  if (!Number.isInteger(p.traceFlags) || p.traceFlags < 0 || p.traceFlags > 0xff) return undefined;
  return `00-${p.traceId}-${p.spanId}-${p.traceFlags.toString(16).padStart(2, "0")}`;
}

/** Parses a traceparent; undefined when it is not valid (see the module comment). */
export function parseTraceParent(value: unknown): TraceParent | undefined {
  if (typeof value !== "string" || value.length < TRACEPARENT_LENGTH) return undefined;
  const version = value.slice(0, 2);
  if (!HEX.test(version) || version === "ff") return undefined;
  if (version === "00" && value.length !== TRACEPARENT_LENGTH) return undefined;
  if (value.length > TRACEPARENT_LENGTH && value[TRACEPARENT_LENGTH] !== "-") return undefined;
  if (value[2] !== "-" || value[35] !== "-" || value[52] !== "-") return undefined;
  const traceId = value.slice(3, 35);
  const spanId = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (!isHex(traceId, 32) || !isHex(spanId, 16) || !/^[0-9a-f]{2}$/.test(flags)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

/** True for a tracestate worth passing on: a string of printable ASCII within the limit. */
export function isTraceState(value: unknown): value is string {
  return (
    typeof value === "string" &&
    value.length > 0 &&
    value.length <= TRACESTATE_LENGTH_MAX &&
    /^[\x20-\x7e]*$/.test(value)
  );
}
