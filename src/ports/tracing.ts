/**
 * Tracing port (docs/observability.md, "Tracing"): what shardkit needs from a tracer to
 * follow an entity message from `tell`/`ask` through regions, the remote hop, the shard
 * and the entity handler, and a journal write. The OpenTelemetry implementation is
 * api/otel-tracing.ts; a node without tracing has no Tracing at all (undefined), so the
 * untraced paths pay nothing.
 *
 * Spans are only ever children: shardkit never starts a trace of its own. `active()` is
 * the cheap gate that every traced path calls first; it answers undefined unless the
 * caller runs inside a span.
 */

/** An opaque trace context (in OpenTelemetry: a Context holding a valid span). */
export type TraceContext = object;

/** Span kinds, numbered as in OpenTelemetry. */
export const TraceSpanKind = {
  INTERNAL: 0,
  SERVER: 1,
  CLIENT: 2,
  PRODUCER: 3,
  CONSUMER: 4,
} as const;

/** One of the {@link TraceSpanKind} values. */
export type TraceSpanKind = (typeof TraceSpanKind)[keyof typeof TraceSpanKind];

/** Span attribute values shardkit sets. */
export type TraceAttributes = Readonly<Record<string, string | number | boolean>>;

/** A started span. */
export interface TraceSpan {
  /** The parent context with this span set: the parent of what happens inside it. */
  readonly context: TraceContext;
  setAttribute(key: string, value: string | number | boolean): void;
  /** Marks the span failed with `error` (status ERROR and an exception event). */
  fail(error: unknown): void;
  end(): void;
}

/** The W3C trace context (https://www.w3.org/TR/trace-context/) of a span. */
export interface W3CTraceContext {
  readonly traceparent: string;
  /** Present only when the span's trace state is not empty. */
  readonly tracestate?: string;
}

/** What shardkit's traced paths call; see the module comment. */
export interface Tracing {
  /** The caller's active context when it holds a valid span, else undefined. */
  active(): TraceContext | undefined;
  /** Starts a span, child of the span in `parent`. */
  start(
    name: string,
    kind: TraceSpanKind,
    parent: TraceContext,
    attributes?: TraceAttributes,
  ): TraceSpan;
  /** Runs `fn` with `context` as the active context (nested sends become its children). */
  with<T>(context: TraceContext, fn: () => T): T;
  /** The W3C form of the span in `context` (undefined: no valid span). */
  inject(context: TraceContext): W3CTraceContext | undefined;
  /** A context whose (remote) parent span is `carrier`; undefined when it is malformed. */
  extract(carrier: W3CTraceContext): TraceContext | undefined;
}
