/**
 * In-memory tracing for tests with the OpenTelemetry SDK: a BasicTracerProvider whose
 * SimpleSpanProcessor hands every finished span to the SDK's InMemorySpanExporter, and the
 * AsyncLocalStorage context manager (`@opentelemetry/context-async-hooks`), registered as
 * the global provider and context manager, which is how an application sets up tracing.
 *
 * `installMemoryTracing()` returns the exporter (finished spans as plain data, so a child
 * process can send them over its JSON-lines channel) and `uninstall()`, which restores
 * the no-op globals.
 */
import {
  type AttributeValue,
  context,
  type SpanKind,
  type SpanStatus,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/** A finished span as exported (plain data: can be sent over IPC as JSON). */
export interface FinishedSpan {
  readonly name: string;
  readonly kind: SpanKind;
  readonly traceId: string;
  readonly spanId: string;
  /** Undefined for a root span. */
  readonly parentSpanId: string | undefined;
  /** The parent came from another process (a remote span context). */
  readonly parentIsRemote: boolean;
  readonly attributes: Readonly<Record<string, AttributeValue | undefined>>;
  readonly status: SpanStatus;
  readonly events: readonly string[];
  readonly tracerName: string;
}

function finished(s: ReadableSpan): FinishedSpan {
  const sc = s.spanContext();
  const parent = s.parentSpanContext;
  return {
    name: s.name,
    kind: s.kind,
    traceId: sc.traceId,
    spanId: sc.spanId,
    parentSpanId: parent?.spanId,
    parentIsRemote: parent?.isRemote === true,
    attributes: { ...s.attributes },
    status: s.status,
    events: s.events.map((e) => e.name),
    tracerName: s.instrumentationScope.name,
  };
}

/** The finished spans of the SDK's in-memory exporter, in the order they ended. */
export class MemorySpanExporter {
  constructor(private readonly inner: InMemorySpanExporter) {}
  get spans(): FinishedSpan[] {
    return this.inner.getFinishedSpans().map(finished);
  }
  reset(): void {
    this.inner.reset();
  }
}

/** Registers the SDK's tracer provider (in-memory exporter) and context manager. */
export function installMemoryTracing(): {
  readonly exporter: MemorySpanExporter;
  readonly uninstall: () => void;
} {
  const inner = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(inner)] });
  trace.disable();
  context.disable();
  if (!trace.setGlobalTracerProvider(provider))
    throw new Error("could not register the OpenTelemetry tracer provider");
  if (!context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()))
    throw new Error("could not register the context manager");
  return {
    exporter: new MemorySpanExporter(inner),
    uninstall: () => {
      trace.disable();
      context.disable();
    },
  };
}

/**
 * Checks that `spans` form one trace: one trace id, exactly one span whose parent is
 * not among them (the root), every other span's parent among them. Returns a message
 * naming the first violation, or undefined.
 */
export function connectedTraceProblem(spans: readonly FinishedSpan[]): string | undefined {
  if (spans.length === 0) return "no spans";
  const traceIds = new Set(spans.map((s) => s.traceId));
  if (traceIds.size !== 1) return `${traceIds.size} trace ids: ${[...traceIds].join(", ")}`;
  const ids = new Set(spans.map((s) => s.spanId));
  const roots = spans.filter((s) => s.parentSpanId === undefined || !ids.has(s.parentSpanId));
  if (roots.length !== 1)
    return `${roots.length} spans without a parent among the spans: ${roots.map((s) => s.name).join(", ")}`;
  return undefined;
}
