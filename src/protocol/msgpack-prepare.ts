/**
 * Pre-pass of the msgpackr serializer over an outgoing message. It does two jobs in one
 * walk:
 *
 * 1. Strictness. msgpackr would silently turn a class instance into a plain object (the
 *    receiver gets data without its prototype), drop functions and symbols, rename a
 *    `__proto__` key and recurse until the stack overflows on a cycle. The walk rejects
 *    all of these, and nesting deeper than MESSAGE_DEPTH_MAX, with
 *    a SerializationError that names the offending path (`$.items[2]`), at send time,
 *    where the mistake is made.
 * 2. Tagging. Values msgpackr cannot carry as we need them are replaced by `Tagged`
 *    placeholders that shardkit's msgpackr extension writes: actor refs the RefCodec
 *    recognises become `[TAG_REF, address, path]`, and a Map becomes
 *    `[TAG_MAP, k1, v1, k2, v2, ...]` (plain MessagePack maps decode as objects, so a
 *    Map needs its own tag to arrive as a Map).
 *
 * Copy-on-write: the message is returned as is unless something was tagged, in which
 * case only the containers on the way to it are copied; the caller's value is never
 * mutated. Accepted: primitives except symbol, null, plain objects (prototype
 * Object.prototype or null), arrays, Map, Set, Date, the standard typed arrays (not
 * DataView) and Uint8Array subclasses such as Buffer (sent as plain Uint8Array).
 *
 * A first, allocation-free pass (`passesAsIs`) recognises values the walk would return
 * unchanged (no ref, Map or Buffer, nothing rejected); only the others pay for the walk
 * with its path tracking.
 */
import { SerializationError } from "./errors.js";
import type { RefCodec, WireRefData } from "./serialization.js";

/** Typed arrays msgpackr tags with moreTypes (its list); exact prototypes only. */
const TYPED_ARRAY_PROTOTYPES: ReadonlySet<unknown> = new Set([
  Int8Array.prototype,
  Uint8Array.prototype,
  Uint8ClampedArray.prototype,
  Int16Array.prototype,
  Uint16Array.prototype,
  Int32Array.prototype,
  Uint32Array.prototype,
  Float32Array.prototype,
  Float64Array.prototype,
  BigInt64Array.prototype,
  BigUint64Array.prototype,
]);

/** msgpackr extension type of shardkit's tagged values. Reserved process-wide. */
export const SHARDKIT_EXTENSION_TYPE = 0x53;

/** Tag of an actor ref inside a `Tagged` value. */
export const TAG_REF = 0;
/** Tag of a Map inside a `Tagged` value. */
export const TAG_MAP = 1;

/** A placeholder written by shardkit's msgpackr extension as the array `items`. */
export class Tagged {
  /** `items[0]` is TAG_REF or TAG_MAP; the rest is the tagged value's data. */
  constructor(readonly items: unknown[]) {}
}

/** One step of the path to the current value; objects only for Map/Set entries. */
type Segment = string | number | { readonly entry: number; readonly of: "Map" | "Set" };

/**
 * Deepest container nesting accepted. It bounds the recursion of this walk and of
 * msgpackr on both ends, and it is how cycles are found without hashing every container
 * of every message: only when the bound is hit are the open containers searched for a
 * repeat, to tell "cycle" from "too deep".
 */
export const MESSAGE_DEPTH_MAX = 1000;

interface Walk {
  readonly refCodec: RefCodec | undefined;
  readonly serializerId: number;
  readonly path: Segment[];
  /** Containers currently being walked, outermost first. */
  readonly open: object[];
}

/**
 * Validates `value` for msgpackr and replaces refs and Maps by Tagged placeholders.
 * @throws SerializationError naming the path of the first unsupported part.
 */
export function prepareForPack(
  value: unknown,
  refCodec: RefCodec | undefined,
  serializerId: number,
): unknown {
  if (passesAsIs(value, refCodec, 0)) return value;
  return prepare(value, { refCodec, serializerId, path: [], open: [] });
}

/**
 * Fast pre-check: true only when the full walk would accept `value` and return it
 * unchanged (no ref, Map, Buffer or anything it rejects, nesting below the bound). It
 * keeps no path and allocates nothing, which is what most messages (flat plain data)
 * need. Any doubt returns false, and the full walk decides and names the path.
 *
 * Keys are visited with `for...in`, a superset of the own enumerable keys the full walk
 * visits (it adds inherited enumerable ones), so a true here is never wrong.
 */
function passesAsIs(value: unknown, refCodec: RefCodec | undefined, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
    case "bigint":
    case "undefined":
      return true;
    case "object":
      return value === null || objectPassesAsIs(value, refCodec, depth);
    default:
      return false;
  }
}

function objectPassesAsIs(obj: object, refCodec: RefCodec | undefined, depth: number): boolean {
  if (depth >= MESSAGE_DEPTH_MAX || refCodec?.isRef(obj)) return false;
  const proto: unknown = Object.getPrototypeOf(obj);
  if (proto === Object.prototype || proto === null || proto === Array.prototype) {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++)
        if (!passesAsIs(obj[i], refCodec, depth + 1)) return false;
      return true;
    }
    const record = obj as Record<string, unknown>;
    for (const key in record)
      if (key === "__proto__" || !passesAsIs(record[key], refCodec, depth + 1)) return false;
    return true;
  }
  return proto === Date.prototype || TYPED_ARRAY_PROTOTYPES.has(proto);
}

function prepare(value: unknown, w: Walk): unknown {
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
    case "bigint":
    case "undefined":
      return value;
    case "symbol":
      return fail(w, "a symbol cannot be serialized");
    case "function":
      return fail(w, "a function cannot be serialized");
    case "object":
      return value === null ? value : prepareObject(value, w);
  }
}

function prepareObject(obj: object, w: Walk): unknown {
  if (w.refCodec?.isRef(obj)) return toWireRef(obj, w.refCodec, w);
  const proto: unknown = Object.getPrototypeOf(obj);
  if (proto === Object.prototype || proto === null || proto === Array.prototype) {
    enter(obj, w);
    const out = Array.isArray(obj)
      ? prepareArray(obj, w)
      : preparePlain(obj as Record<string, unknown>, w);
    w.open.pop();
    return out;
  }
  if (proto === Map.prototype || proto === Set.prototype) {
    enter(obj, w);
    const out =
      proto === Map.prototype
        ? prepareMap(obj as Map<unknown, unknown>, w)
        : prepareSet(obj as Set<unknown>, w);
    w.open.pop();
    return out;
  }
  if (proto === Date.prototype || TYPED_ARRAY_PROTOTYPES.has(proto)) return obj;
  // A Buffer (or other Uint8Array subclass) is sent as a plain Uint8Array view, so it
  // always arrives as a Uint8Array whatever kind of buffer the receiver decodes from.
  if (obj instanceof Uint8Array) return new Uint8Array(obj.buffer, obj.byteOffset, obj.length);
  return fail(
    w,
    `an instance of ${className(obj)} cannot be serialized by msgpackr; register a serializer for its class or send plain data`,
  );
}

function enter(obj: object, w: Walk): void {
  if (w.open.length === MESSAGE_DEPTH_MAX) failTooDeep(obj, w);
  w.open.push(obj);
}

/** At the depth bound: report the shortest path that closes a cycle, if there is one. */
function failTooDeep(obj: object, w: Walk): never {
  const seen = new Set<object>();
  const chain = [...w.open, obj];
  // chain[i] was reached through path[0..i): the path has one segment per open container.
  const repeat = chain.findIndex((o) => {
    if (seen.has(o)) return true;
    seen.add(o);
    return false;
  });
  if (repeat >= 0)
    throw new SerializationError("the message contains a cycle", {
      path: formatPath(w.path.slice(0, repeat)),
      serializerId: w.serializerId,
    });
  return fail(w, `the message nests deeper than ${MESSAGE_DEPTH_MAX} containers`);
}

function prepareArray(arr: readonly unknown[], w: Walk): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    w.path.push(i);
    const p = prepare(v, w);
    w.path.pop();
    if (p !== v && out === undefined) out = arr.slice(0, i);
    out?.push(p);
  }
  return out ?? (arr as unknown[]);
}

function preparePlain(obj: Record<string, unknown>, w: Walk): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    w.path.push(key);
    if (key === "__proto__") fail(w, "the key __proto__ cannot be serialized");
    const v = obj[key];
    const p = prepare(v, w);
    w.path.pop();
    // A null-prototype copy, so that assigning any key defines an own property.
    if (p !== v && out === undefined)
      out = Object.assign(Object.create(null) as Record<string, unknown>, obj);
    if (out !== undefined) out[key] = p;
  }
  return out ?? obj;
}

function prepareMap(map: Map<unknown, unknown>, w: Walk): Tagged {
  const items: unknown[] = [TAG_MAP];
  let index = 0;
  for (const [k, v] of map) {
    w.path.push({ entry: index, of: "Map" });
    items.push(prepare(k, w), prepare(v, w));
    w.path.pop();
    index++;
  }
  return new Tagged(items);
}

function prepareSet(set: Set<unknown>, w: Walk): Set<unknown> {
  let out: Set<unknown> | undefined;
  let index = 0;
  for (const v of set) {
    w.path.push({ entry: index, of: "Set" });
    const p = prepare(v, w);
    w.path.pop();
    if (p !== v && out === undefined) out = new Set(firstEntries(set, index));
    out?.add(p);
    index++;
  }
  return out ?? set;
}

function* firstEntries<T>(iterable: Iterable<T>, count: number): Generator<T> {
  if (count === 0) return;
  let i = 0;
  for (const item of iterable) {
    yield item;
    if (++i === count) return;
  }
}

function toWireRef(ref: object, codec: RefCodec, w: Walk): Tagged {
  const data: unknown = codec.encode(ref);
  if (
    typeof data !== "object" ||
    data === null ||
    typeof (data as WireRefData).address !== "string" ||
    typeof (data as WireRefData).path !== "string"
  )
    return fail(w, "RefCodec.encode must return { address: string, path: string }");
  return new Tagged([TAG_REF, (data as WireRefData).address, (data as WireRefData).path]);
}

function className(obj: object): string {
  const ctor: unknown = (obj as { constructor?: unknown }).constructor;
  return typeof ctor === "function" && ctor.name !== "" ? ctor.name : "an anonymous class";
}

function fail(w: Walk, reason: string): never {
  throw new SerializationError(reason, { path: formatPath(w.path), serializerId: w.serializerId });
}

/** `$`, `$.a[0]`, `$["odd key"]`, `$.m<Map entry 2>`. */
export function formatPath(path: readonly Segment[]): string {
  let out = "$";
  for (const s of path) {
    if (typeof s === "number") out += `[${s}]`;
    else if (typeof s === "string")
      out += /^[A-Za-z_$][\w$]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
    else out += `<${s.of} entry ${s.entry}>`;
  }
  return out;
}
