/**
 * Tracing through `@opentelemetry/api` (docs/observability.md, "Tracing"): the
 * implementation of the tracing port (ports/tracing.ts). The package is an optional peer
 * dependency, loaded only when a node enables tracing (`ClusterNodeOptions.tracing`); the
 * application registers its SDK (tracer provider, context manager) as usual, and spans
 * go wherever it exports them. The types below are the subset of the API that is used,
 * so the real module fits them and shardkit's types do not depend on the package.
 */
import { ConfigError } from "../base/errors.js";
import { importPeerModule } from "../persistence/peer-dependency.js";
import type {
  TraceAttributes,
  TraceContext,
  TraceSpan,
  TraceSpanKind,
  Tracing,
  W3CTraceContext,
} from "../ports/tracing.js";
import { formatTraceParent, isTraceState, parseTraceParent } from "../protocol/trace-context.js";

/** An OpenTelemetry Context (opaque here: only passed back to the API). */
export interface OtelContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): OtelContext;
  deleteValue(key: symbol): OtelContext;
}

/** An OpenTelemetry TraceState. */
export interface OtelTraceState {
  serialize(): string;
}

/** An OpenTelemetry SpanContext. */
export interface OtelSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: OtelTraceState;
}

/** The part of an OpenTelemetry Span that is used. */
export interface OtelSpan {
  spanContext(): OtelSpanContext;
  setAttribute(key: string, value: string | number | boolean): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}

/** The part of an OpenTelemetry Tracer that is used. */
export interface OtelTracer {
  startSpan(
    name: string,
    options: { kind: number; attributes?: TraceAttributes },
    context: OtelContext,
  ): OtelSpan;
}

/** The part of the `@opentelemetry/api` module that is used. */
export interface OtelTraceApi {
  readonly trace: {
    getTracer(name: string, version?: string): OtelTracer;
    getSpan(context: OtelContext): OtelSpan | undefined;
    setSpan(context: OtelContext, span: OtelSpan): OtelContext;
    setSpanContext(context: OtelContext, spanContext: OtelSpanContext): OtelContext;
    isSpanContextValid(spanContext: OtelSpanContext): boolean;
  };
  readonly context: {
    active(): OtelContext;
    with<R>(context: OtelContext, fn: () => R): R;
  };
  readonly ROOT_CONTEXT: OtelContext;
  createTraceState(raw?: string): OtelTraceState;
}

/** The `tracing` option of ClusterNode.start. */
export interface TracingOptions {
  /** Spans for entity messages and journal writes (default false: no tracing at all). */
  readonly enabled: boolean;
  /** Name of the OpenTelemetry tracer (default "shardkit"). */
  readonly tracerName?: string;
}

/** Default tracer name. */
export const TRACER_NAME_DEFAULT = "shardkit";

/** OpenTelemetry's SpanStatusCode.ERROR. */
const STATUS_ERROR = 2;

/** @throws ConfigError naming the bad key. */
export function validateTracingOptions(o: TracingOptions | undefined): void {
  if (o === undefined) return;
  if (typeof o !== "object" || o === null)
    throw new ConfigError("tracing", o, "an object { enabled: boolean }");
  if (typeof o.enabled !== "boolean")
    throw new ConfigError("tracing.enabled", o.enabled, "a boolean");
  if (o.tracerName !== undefined && (typeof o.tracerName !== "string" || o.tracerName === ""))
    throw new ConfigError("tracing.tracerName", o.tracerName, "a non-empty string");
}

/**
 * The node's Tracing: undefined when tracing is not enabled; else `@opentelemetry/api`
 * is loaded (MissingPeerDependencyError when it is not installed).
 */
export async function loadTracing(o: TracingOptions | undefined): Promise<Tracing | undefined> {
  if (o === undefined || !o.enabled) return undefined;
  const api = await importPeerModule<OtelTraceApi>("@opentelemetry/api", "tracing");
  return otelTracing(api, o.tracerName ?? TRACER_NAME_DEFAULT);
}

class OtelTraceSpan implements TraceSpan {
  constructor(
    private readonly span: OtelSpan,
    readonly context: TraceContext,
  ) {}

  setAttribute(key: string, value: string | number | boolean): void {
    this.span.setAttribute(key, value);
  }

  fail(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.span.recordException(error instanceof Error ? error : message);
    this.span.setStatus({ code: STATUS_ERROR, message });
  }

  end(): void {
    this.span.end();
  }
}

/** The tracing port over an `@opentelemetry/api` module (see the module comment). */
export function otelTracing(api: OtelTraceApi, tracerName = TRACER_NAME_DEFAULT): Tracing {
  const { trace, context, ROOT_CONTEXT } = api;
  // The global provider's tracer delegates to a provider registered later too.
  const tracer = trace.getTracer(tracerName);
  const asOtel = (c: TraceContext) => c as unknown as OtelContext;
  const asTrace = (c: OtelContext) => c as TraceContext;
  return {
    active() {
      const ctx = context.active();
      const span = trace.getSpan(ctx);
      if (span === undefined || !trace.isSpanContextValid(span.spanContext())) return undefined;
      return asTrace(ctx);
    },
    start(name: string, kind: TraceSpanKind, parent: TraceContext, attributes?: TraceAttributes) {
      const span = tracer.startSpan(
        name,
        attributes === undefined ? { kind } : { kind, attributes },
        asOtel(parent),
      );
      return new OtelTraceSpan(span, asTrace(trace.setSpan(asOtel(parent), span)));
    },
    with<T>(ctx: TraceContext, fn: () => T): T {
      return context.with(asOtel(ctx), fn);
    },
    inject(ctx: TraceContext): W3CTraceContext | undefined {
      const sc = trace.getSpan(asOtel(ctx))?.spanContext();
      if (sc === undefined) return undefined;
      const traceparent = formatTraceParent(sc);
      if (traceparent === undefined) return undefined;
      const tracestate = sc.traceState?.serialize();
      return tracestate === undefined || tracestate === "" || !isTraceState(tracestate)
        ? { traceparent }
        : { traceparent, tracestate };
    },
    extract(carrier: W3CTraceContext): TraceContext | undefined {
      const p = parseTraceParent(carrier.traceparent);
      if (p === undefined) return undefined;
      const sc: OtelSpanContext = {
        traceId: p.traceId,
        spanId: p.spanId,
        traceFlags: p.traceFlags & 0xff,
        isRemote: true,
      };
      if (carrier.tracestate !== undefined && isTraceState(carrier.tracestate))
        sc.traceState = api.createTraceState(carrier.tracestate);
      return asTrace(trace.setSpanContext(ROOT_CONTEXT, sc));
    },
  };
}
