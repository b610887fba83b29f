/**
 * A small in-memory OpenTelemetry tracer for tests, implementing the `@opentelemetry/api`
 * interfaces (TracerProvider, Tracer, Span, ContextManager) the way the SDK's
 * BasicTracerProvider + InMemorySpanExporter + AsyncLocalStorageContextManager do for
 * what shardkit uses: parent from the context given to startSpan, ids from node:crypto,
 * every span sampled, finished spans kept in order. (`@opentelemetry/sdk-trace-base`
 * 2.x declares a peer range of `@opentelemetry/api` below the 1.10 this repository
 * uses, so it cannot be installed without forcing npm.)
 *
 * `installMemoryTracing()` registers the provider and the context manager globally and
 * returns the exporter; `uninstall()` restores the no-op globals.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import {
  type Attributes,
  type AttributeValue,
  type Context,
  type ContextManager,
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  type TimeInput,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";

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

/** Keeps finished spans (the in-memory exporter). */
export class MemorySpanExporter {
  readonly spans: FinishedSpan[] = [];
  reset(): void {
    this.spans.length = 0;
  }
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

class MemorySpan implements Span {
  private readonly attributes: Record<string, AttributeValue | undefined> = {};
  private status: SpanStatus = { code: 0 };
  private readonly events: string[] = [];
  private ended = false;

  constructor(
    private readonly sc: SpanContext,
    private name: string,
    private readonly kind: SpanKind,
    private readonly parent: SpanContext | undefined,
    private readonly tracerName: string,
    private readonly exporter: MemorySpanExporter,
    attributes: Attributes | undefined,
  ) {
    if (attributes !== undefined) this.setAttributes(attributes);
  }

  spanContext(): SpanContext {
    return this.sc;
  }
  setAttribute(key: string, value: AttributeValue): this {
    if (!this.ended) this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    for (const [k, v] of Object.entries(attributes)) this.setAttribute(k, v as AttributeValue);
    return this;
  }
  addEvent(name: string, _a?: unknown, _t?: TimeInput): this {
    this.events.push(name);
    return this;
  }
  addLink(_link: Link): this {
    return this;
  }
  addLinks(_links: Link[]): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.status = status;
    return this;
  }
  updateName(name: string): this {
    this.name = name;
    return this;
  }
  end(_endTime?: TimeInput): void {
    if (this.ended) return;
    this.ended = true;
    this.exporter.spans.push({
      name: this.name,
      kind: this.kind,
      traceId: this.sc.traceId,
      spanId: this.sc.spanId,
      parentSpanId: this.parent?.spanId,
      parentIsRemote: this.parent?.isRemote === true,
      attributes: { ...this.attributes },
      status: this.status,
      events: [...this.events],
      tracerName: this.tracerName,
    });
  }
  isRecording(): boolean {
    return !this.ended;
  }
  recordException(exception: unknown, _t?: TimeInput): void {
    this.events.push(
      `exception: ${exception instanceof Error ? exception.message : String(exception)}`,
    );
  }
}

class MemoryTracer implements Tracer {
  constructor(
    private readonly name: string,
    private readonly exporter: MemorySpanExporter,
  ) {}

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = context.active()): Span {
    const parent = options.root === true ? undefined : trace.getSpanContext(ctx);
    const valid = parent !== undefined && trace.isSpanContextValid(parent);
    const sc: SpanContext = {
      traceId: valid ? parent.traceId : hex(16),
      spanId: hex(8),
      traceFlags: TraceFlags.SAMPLED,
      ...(valid && parent.traceState !== undefined ? { traceState: parent.traceState } : {}),
    };
    return new MemorySpan(
      sc,
      name,
      options.kind ?? SpanKind.INTERNAL,
      valid ? parent : undefined,
      this.name,
      this.exporter,
      options.attributes,
    );
  }

  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    ...rest: unknown[]
  ): ReturnType<F> {
    const fn = rest[rest.length - 1] as (span: Span) => ReturnType<F>;
    const options = (rest.length >= 2 ? rest[0] : {}) as SpanOptions;
    const ctx = (rest.length >= 3 ? rest[1] : context.active()) as Context;
    const span = this.startSpan(name, options, ctx);
    return context.with(trace.setSpan(ctx, span), fn, undefined, span);
  }
}

class MemoryTracerProvider implements TracerProvider {
  constructor(private readonly exporter: MemorySpanExporter) {}
  getTracer(name: string): Tracer {
    return new MemoryTracer(name, this.exporter);
  }
}

/** The active context kept in an AsyncLocalStorage (what context-async-hooks does). */
class AlsContextManager implements ContextManager {
  private readonly als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.als.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    const run = (...args: unknown[]) =>
      this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.als.disable();
    return this;
  }
}

/** Registers the in-memory tracer provider and an AsyncLocalStorage context manager. */
export function installMemoryTracing(): {
  readonly exporter: MemorySpanExporter;
  readonly uninstall: () => void;
} {
  const exporter = new MemorySpanExporter();
  trace.disable();
  context.disable();
  if (!trace.setGlobalTracerProvider(new MemoryTracerProvider(exporter)))
    throw new Error("could not register the in-memory tracer provider");
  if (!context.setGlobalContextManager(new AlsContextManager().enable()))
    throw new Error("could not register the context manager");
  return {
    exporter,
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
