/**
 * W3C trace context on the wire (protocol/trace-context.ts, EntityEnvelopeWire in
 * protocol/sharding.ts, api/otel-tracing.ts): traceparent parsing as the recommendation
 * says; the untraced forward is byte for byte the 4-tuple older members send; a traced
 * forward decodes with and without its context, and an older member's routing (the
 * ShardingEnvelope shape) still delivers it to the same shard.
 */
import * as otel from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { otelTracing } from "../../src/api/otel-tracing.js";
import { hashRouting } from "../../src/cluster/sharding/sharding-type.js";
import { createMsgpackSerializer } from "../../src/protocol/msgpack-serializer.js";
import { EntityEnvelope, EntityEnvelopeWire } from "../../src/protocol/sharding.js";
import {
  formatTraceParent,
  isTraceState,
  parseTraceParent,
  TRACESTATE_LENGTH_MAX,
} from "../../src/protocol/trace-context.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("traceparent", () => {
  it("parses and formats a valid one", () => {
    expect(parseTraceParent(TRACEPARENT)).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: 1,
    });
    expect(formatTraceParent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 0 })).toBe(
      `00-${TRACE_ID}-${SPAN_ID}-00`,
    );
    // a future version may append fields
    expect(parseTraceParent(`01-${TRACE_ID}-${SPAN_ID}-01-abc`)?.spanId).toBe(SPAN_ID);
  });

  it.each([
    ["not a string", 42],
    ["version ff", `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ["version 00 with more fields", `${TRACEPARENT}-00`],
    ["upper-case hex", TRACEPARENT.toUpperCase()],
    ["zero trace id", `00-${"0".repeat(32)}-${SPAN_ID}-01`],
    ["zero parent id", `00-${TRACE_ID}-${"0".repeat(16)}-01`],
    ["short trace id", `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ["bad separator", `00_${TRACE_ID}-${SPAN_ID}-01`],
    ["bad flags", `00-${TRACE_ID}-${SPAN_ID}-0g`],
    ["empty", ""],
  ])("refuses %s", (_what, value) => {
    expect(parseTraceParent(value)).toBeUndefined();
  });

  it("formats nothing for invalid ids or flags", () => {
    expect(formatTraceParent({ traceId: "0".repeat(32), spanId: SPAN_ID, traceFlags: 1 })).toBe(
      undefined,
    );
    expect(formatTraceParent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 256 })).toBe(
      undefined,
    );
  });

  it("accepts a printable tracestate within the limit only", () => {
    expect(isTraceState("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")).toBe(true);
    expect(isTraceState("")).toBe(false);
    expect(isTraceState("a=\n")).toBe(false);
    expect(isTraceState("a".repeat(TRACESTATE_LENGTH_MAX + 1))).toBe(false);
  });
});

describe("forward wire form", () => {
  const serializer = createMsgpackSerializer();
  const envelope = new EntityEnvelope("3", "cart-1", { type: "add", sku: "tea" });
  const roundTrip = (value: unknown) => serializer.fromBinary(serializer.toBinary(value));

  it("untraced: exactly the 4-tuple bytes older members send (no trace bytes)", () => {
    expect(hex(serializer.toBinary(EntityEnvelopeWire.encode(envelope)))).toBe(
      // fixarray(4) "shardkit.fwd" "3" "cart-1" {type: "add", sku: "tea"}
      "94ac73686172646b69742e667764a133a6636172742d31de0002a474797065a3616464a3736b75a3746561",
    );
    const decoded = EntityEnvelopeWire.decode(roundTrip(EntityEnvelopeWire.encode(envelope)));
    expect(decoded).toEqual(envelope);
    expect(EntityEnvelopeWire.decodeTraced(EntityEnvelopeWire.encode(envelope))).toBeUndefined();
  });

  it("traced: decodes with its trace context (and tracestate when present)", () => {
    const wire = roundTrip(EntityEnvelopeWire.encodeTraced(envelope, { traceparent: TRACEPARENT }));
    expect(EntityEnvelopeWire.decode(wire)).toBeUndefined();
    expect(EntityEnvelopeWire.decodeTraced(wire)).toEqual({
      envelope,
      trace: { traceparent: TRACEPARENT },
    });
    const withState = roundTrip(
      EntityEnvelopeWire.encodeTraced(envelope, { traceparent: TRACEPARENT, tracestate: "k=v" }),
    );
    expect(EntityEnvelopeWire.decodeTraced(withState)?.trace).toEqual({
      traceparent: TRACEPARENT,
      tracestate: "k=v",
    });
  });

  it("traced with a malformed context: the message still travels, untraced", () => {
    const wire = roundTrip({
      entityId: "cart-1",
      message: envelope.message,
      "shardkit.fwd": ["3", "00-nonsense", 17],
    });
    expect(EntityEnvelopeWire.decodeTraced(wire)).toEqual({ envelope, trace: undefined });
    const badState = roundTrip({
      entityId: "cart-1",
      message: 1,
      "shardkit.fwd": ["3", TRACEPARENT, "a\u0001"],
    });
    expect(EntityEnvelopeWire.decodeTraced(badState)?.trace).toEqual({ traceparent: TRACEPARENT });
    for (const notOne of [
      null,
      [],
      { entityId: "x", message: 1 },
      { entityId: 1, message: 1, "shardkit.fwd": ["3", TRACEPARENT] },
      { entityId: "x", message: 1, "shardkit.fwd": [3, TRACEPARENT] },
      { entityId: "x", message: 1, "shardkit.fwd": ["3"] },
    ])
      expect(EntityEnvelopeWire.decodeTraced(notOne)).toBeUndefined();
  });

  it("an older member (hash routing, no traced form) delivers it to the same shard", () => {
    const routing = hashRouting(100);
    const shard = routing.shardOf("cart-1");
    const sent = new EntityEnvelope(shard, "cart-1", envelope.message);
    const wire = roundTrip(EntityEnvelopeWire.encodeTraced(sent, { traceparent: TRACEPARENT }));
    // what a region without the traced form does with it: not a forward, so `route`
    expect(EntityEnvelopeWire.decode(wire)).toBeUndefined();
    expect(routing.route(wire)).toEqual(sent);
  });
});

describe("otelTracing inject / extract", () => {
  const tracing = otelTracing(otel);

  it("extracts a remote parent and injects it back unchanged", () => {
    const ctx = tracing.extract({ traceparent: TRACEPARENT, tracestate: "k=v,l=w" });
    expect(ctx).toBeDefined();
    const sc = otel.trace.getSpanContext(ctx as otel.Context);
    expect(sc).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, isRemote: true });
    expect(tracing.inject(ctx as otel.Context)).toEqual({
      traceparent: TRACEPARENT,
      tracestate: "k=v,l=w",
    });
    expect(tracing.inject(tracing.extract({ traceparent: TRACEPARENT }) as otel.Context)).toEqual({
      traceparent: TRACEPARENT,
    });
  });

  it("refuses a malformed carrier; nothing is active outside a span", () => {
    expect(tracing.extract({ traceparent: "00-x" })).toBeUndefined();
    expect(tracing.inject(otel.ROOT_CONTEXT)).toBeUndefined();
    expect(tracing.active()).toBeUndefined();
  });
});
