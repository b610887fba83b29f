/**
 * A traced entity message (docs/observability.md, "Tracing"): the user message with the
 * trace context it travels in, made by an EntityRef whose caller runs inside a span, or
 * by a region receiving a traced forward. Regions and shards pass it on as the envelope's
 * message (their buffers keep it as it is), each adding its span as the new parent; the
 * entity's cell runs the handler inside the `shardkit.entity.handle` span (a
 * ScopedMessage, actor/internal.ts), so what the handler sends or writes is a child of
 * it. Untraced messages are never wrapped.
 */
import { ScopedMessage } from "../../actor/internal.js";
import {
  type TraceAttributes,
  type TraceContext,
  type TraceSpan,
  TraceSpanKind,
  type Tracing,
} from "../../ports/tracing.js";

/** Span names (docs/observability.md lists them with their attributes). */
export const SpanNames = {
  TELL: "shardkit.entity.tell",
  ASK: "shardkit.entity.ask",
  REGION: "shardkit.region.route",
  FORWARD: "shardkit.region.forward",
  SHARD: "shardkit.shard.deliver",
  HANDLE: "shardkit.entity.handle",
  JOURNAL_APPEND: "shardkit.journal.append",
} as const;

/** Attribute keys. */
export const SpanAttributes = {
  TYPE: "shardkit.entity.type",
  ENTITY: "shardkit.entity.id",
  SHARD: "shardkit.shard.id",
  /** Where a region sent the message: "local", "forward" or "buffer". */
  ROUTE: "shardkit.region.route",
  /** The region a forward went to (its actor id). */
  TARGET_REGION: "shardkit.region.target",
  /** Where a shard put the message: "active" (to a live entity) or "start" (buffered). */
  DELIVERY: "shardkit.shard.delivery",
  /** Member that sent / received the message. */
  MEMBER: "shardkit.member",
} as const;

/** The attributes every span of one entity message carries. */
export function entityAttributes(
  typeName: string,
  shardId: string,
  entityId: string,
): TraceAttributes {
  return {
    [SpanAttributes.TYPE]: typeName,
    [SpanAttributes.SHARD]: shardId,
    [SpanAttributes.ENTITY]: entityId,
  };
}

export class TracedMessage extends ScopedMessage {
  constructor(
    readonly message: unknown,
    /** The parent of the next span: updated by each stage. */
    public context: TraceContext,
    readonly tracing: Tracing,
    readonly attributes: TraceAttributes,
    /** Came from another member: the next region span is the consumer of the forward. */
    public received = false,
  ) {
    super();
  }

  /** Starts a child span of the current context and makes it the parent of what follows. */
  enter(name: string, kind: TraceSpanKind = TraceSpanKind.INTERNAL): TraceSpan {
    const span = this.tracing.start(name, kind, this.context, this.attributes);
    this.context = span.context;
    return span;
  }

  run(deliver: () => void): void {
    const span = this.tracing.start(
      SpanNames.HANDLE,
      TraceSpanKind.CONSUMER,
      this.context,
      this.attributes,
    );
    try {
      this.tracing.with(span.context, deliver);
    } finally {
      span.end();
    }
  }
}
