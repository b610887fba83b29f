/**
 * Wire and disk form of every CRDT: `[kind, data]` where data is the value's canonical
 * `toData()`, packed with msgpack. The serializer (internal id DDATA_SERIALIZER_ID) is
 * registered in a node's SerializerRegistry by the replicator, so CRDT values travel and are
 * stored through the registry like any message. Decoding checks every field and throws
 * DDataDecodeError (never a half-built value).
 */
import { ShardkitError } from "../../base/errors.js";
import { createMsgpackSerializer } from "../../protocol/msgpack-serializer.js";
import type { Serializer } from "../../protocol/serialization.js";
import { CausalContext, type Dot, type DotMap } from "./causal.js";
import { GCounter, PNCounter } from "./counters.js";
import { LWWMap, ORMap, ORMapCore, ORMultiMap, PNCounterMap } from "./ormap.js";
import { ORSet } from "./orset.js";
import {
  type DDataElement,
  type DDataKind,
  isDDataElement,
  ReplicatedData,
} from "./replicated-data.js";
import { Flag, GSet, LWWRegister } from "./simple.js";

/** Id of the Distributed Data serializer (shardkit's internal range). */
export const DDATA_SERIALIZER_ID = 20;

/** Bytes or data that do not decode to a CRDT. */
export class DDataDecodeError extends ShardkitError {
  constructor(reason: string) {
    super("DDATA_DECODE", `cannot decode replicated data: ${reason}`, { reason });
  }
}

/** `[kind, data]` of a value. */
export function encodeReplicatedData(v: ReplicatedData): [DDataKind, unknown] {
  return [v.kind, dataOf(v)];
}

function dataOf(v: ReplicatedData): unknown {
  if (
    v instanceof ORMap ||
    v instanceof LWWMap ||
    v instanceof PNCounterMap ||
    v instanceof ORMultiMap
  ) {
    const [entries, ctx] = v.core.toData();
    return [
      entries.map(([k, ds]) => [k, ds.map(([n, c, p]) => [n, c, encodeReplicatedData(p)])]),
      ctx,
    ];
  }
  return v.toData();
}

function fail(reason: string): never {
  throw new DDataDecodeError(reason);
}

const isArr = Array.isArray;
const isStr = (v: unknown): v is string => typeof v === "string";
const isCount = (v: unknown): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

function pairs(v: unknown, what: string): [string, number][] {
  if (!isArr(v)) fail(`${what}: expected an array`);
  return v.map((p) => {
    if (!isArr(p) || p.length !== 2 || !isStr(p[0]) || !isCount(p[1])) fail(`${what}: bad entry`);
    return [p[0], p[1]];
  });
}

function context(v: unknown): CausalContext {
  if (!isArr(v) || v.length !== 2) fail("context: expected [vv, cloud]");
  const vv = pairs(v[0], "context.vv");
  if (!isArr(v[1])) fail("context.cloud: expected an array");
  const cloud = v[1].map((e): [string, number[]] => {
    if (!isArr(e) || e.length !== 2 || !isStr(e[0]) || !isArr(e[1]) || !e[1].every(isCount))
      fail("context.cloud: bad entry");
    return [e[0], e[1] as number[]];
  });
  return CausalContext.of(vv, cloud);
}

function dotMap<P>(v: unknown, payload: (p: unknown) => P, width: number): DotMap<DDataElement, P> {
  if (!isArr(v) || v.length !== 2 || !isArr(v[0])) fail("expected [entries, context]");
  const entries = new Map<DDataElement, Map<string, Dot<P>>>();
  for (const e of v[0]) {
    if (!isArr(e) || e.length !== 2 || !isDDataElement(e[0]) || !isArr(e[1])) fail("bad entry");
    const dots = new Map<string, Dot<P>>();
    for (const d of e[1]) {
      if (!isArr(d) || d.length !== width || !isStr(d[0]) || !isCount(d[1])) fail("bad dot");
      dots.set(d[0], { counter: d[1], payload: payload(d[2]) });
    }
    if (dots.size > 0) entries.set(e[0], dots);
  }
  return { entries, context: context(v[1]) };
}

/** Decodes `[kind, data]`. @throws DDataDecodeError */
export function decodeReplicatedData(v: unknown): ReplicatedData {
  if (!isArr(v) || v.length !== 2 || !isStr(v[0])) fail("expected [kind, data]");
  const data: unknown = v[1];
  switch (v[0] as DDataKind) {
    case "gcounter":
      return GCounter.fromEntries(pairs(data, "gcounter"));
    case "pncounter":
      if (!isArr(data) || data.length !== 2) fail("pncounter: expected [inc, dec]");
      return PNCounter.of(
        GCounter.fromEntries(pairs(data[0], "pncounter.inc")),
        GCounter.fromEntries(pairs(data[1], "pncounter.dec")),
      );
    case "gset":
      if (!isArr(data) || !data.every(isDDataElement)) fail("gset: expected elements");
      return GSet.of(data);
    case "flag":
      if (typeof data !== "boolean") fail("flag: expected a boolean");
      return data ? Flag.on : Flag.off;
    case "lwwreg":
      if (!isArr(data) || data.length !== 3 || !Number.isSafeInteger(data[1]) || !isStr(data[2]))
        fail("lwwreg: expected [value, timestamp, node]");
      return LWWRegister.restore(data[0], data[1] as number, data[2]);
    case "orset":
      return ORSet.fromDots(dotMap(data, () => null, 2));
    case "ormap":
    case "lwwmap":
    case "pncmap":
    case "ormultimap": {
      const kind = v[0];
      const core = new ORMapCore(dotMap(data, decodeReplicatedData, 3), undefined);
      const expected =
        kind === "lwwmap"
          ? "lwwreg"
          : kind === "pncmap"
            ? "pncounter"
            : kind === "ormultimap"
              ? "orset"
              : undefined;
      if (expected !== undefined)
        for (const dots of core.dots.entries.values())
          for (const d of dots.values())
            if (d.payload.kind !== expected) fail(`${kind}: value of kind ${d.payload.kind}`);
      if (kind === "ormap") return new ORMap(core);
      if (kind === "lwwmap") return new LWWMap(core as never);
      if (kind === "pncmap") return new PNCounterMap(core as never);
      return new ORMultiMap(core as never);
    }
    default:
      return fail(`unknown kind ${String(v[0])}`);
  }
}

/** The registry serializer of every CRDT. */
export function createDDataSerializer(): Serializer<ReplicatedData> {
  const msgpack = createMsgpackSerializer();
  return {
    id: DDATA_SERIALIZER_ID,
    name: "ddata",
    toBinary: (v) => msgpack.toBinary(encodeReplicatedData(v)),
    fromBinary: (bytes) => decodeReplicatedData(msgpack.fromBinary(bytes)),
  };
}

/** True for CRDT values (the serializer's binding). */
export function isReplicatedData(v: unknown): v is ReplicatedData {
  return v instanceof ReplicatedData;
}
