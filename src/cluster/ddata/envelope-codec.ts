/**
 * Wire / disk form of the replicator's envelopes and messages. CRDT values go through the
 * node's SerializerRegistry (the ddata serializer, see core/ddata/ddata-codec.ts) and
 * travel as [serializer id, bytes]; the rest is plain data for the default serializer.
 */

import { DDataDecodeError } from "../../core/ddata/ddata-codec.js";
import { isReplicatedData, type ReplicatedData } from "../../core/ddata/index.js";
import {
  DELETED,
  type Envelope,
  type PruningMarker,
  type ReplicatorMessage,
} from "../../core/ddata/replicator-types.js";
import type { SerializerRegistry } from "../../protocol/serializer-registry.js";

type WireData = typeof DELETED | [number, Uint8Array];
type WireMarker = [string, "p"] | [string, string, string[]];
export type WireEnvelope = [WireData, WireMarker[]];

export type WireMessage =
  | { readonly t: "read"; readonly id: number; readonly key: string }
  | { readonly t: "read-result"; readonly id: number; readonly env?: WireEnvelope }
  | { readonly t: "write"; readonly id: number; readonly key: string; readonly env: WireEnvelope }
  | { readonly t: "write-ack"; readonly id: number }
  | { readonly t: "delta"; readonly entries: [string, WireData][] }
  | {
      readonly t: "status";
      readonly chunk: number;
      readonly totChunks: number;
      readonly digests: [string, string][];
    }
  | { readonly t: "gossip"; readonly entries: [string, WireEnvelope][]; readonly want: string[] };

export class EnvelopeCodec {
  constructor(private readonly registry: SerializerRegistry) {}

  encodeData(d: ReplicatedData | typeof DELETED): WireData {
    if (d === DELETED) return DELETED;
    const s = this.registry.serialize(d);
    return [s.serializerId, s.bytes];
  }

  decodeData(w: unknown): ReplicatedData | typeof DELETED {
    if (w === DELETED) return DELETED;
    if (
      !Array.isArray(w) ||
      w.length !== 2 ||
      typeof w[0] !== "number" ||
      !(w[1] instanceof Uint8Array)
    )
      throw new DDataDecodeError("expected [serializerId, bytes]");
    const v = this.registry.deserialize(w[0], w[1]);
    if (!isReplicatedData(v)) throw new DDataDecodeError("bytes do not hold a CRDT value");
    return v;
  }

  encodeEnvelope(env: Envelope): WireEnvelope {
    const markers: WireMarker[] = [...env.pruning].map(([n, m]) =>
      m.state === "performed" ? [n, "p"] : [n, m.owner, [...m.seen]],
    );
    return [this.encodeData(env.data), markers];
  }

  decodeEnvelope(w: unknown): Envelope {
    if (!Array.isArray(w) || w.length !== 2 || !Array.isArray(w[1]))
      throw new DDataDecodeError("expected [data, markers]");
    const pruning = new Map<string, PruningMarker>();
    for (const m of w[1] as unknown[]) {
      if (!Array.isArray(m) || typeof m[0] !== "string")
        throw new DDataDecodeError("bad pruning marker");
      if (m.length === 2 && m[1] === "p") pruning.set(m[0], { state: "performed" });
      else if (
        m.length === 3 &&
        typeof m[1] === "string" &&
        Array.isArray(m[2]) &&
        m[2].every((s) => typeof s === "string")
      )
        pruning.set(m[0], { state: "init", owner: m[1], seen: m[2] as string[] });
      else throw new DDataDecodeError("bad pruning marker");
    }
    return { data: this.decodeData(w[0]), pruning };
  }

  encodeMessage(m: ReplicatorMessage): WireMessage {
    switch (m.t) {
      case "read":
      case "write-ack":
      case "status":
        return m as WireMessage;
      case "read-result":
        return m.env === undefined
          ? { t: m.t, id: m.id }
          : { t: m.t, id: m.id, env: this.encodeEnvelope(m.env) };
      case "write":
        return { t: m.t, id: m.id, key: m.key, env: this.encodeEnvelope(m.env) };
      case "delta":
        return { t: m.t, entries: m.entries.map(([k, d]) => [k, this.encodeData(d)]) };
      case "gossip":
        return {
          t: m.t,
          entries: m.entries.map(([k, e]) => [k, this.encodeEnvelope(e)]),
          want: [...m.want],
        };
    }
  }

  /** @throws DDataDecodeError (or a serialization error) on a malformed message. */
  decodeMessage(w: unknown): ReplicatorMessage {
    const m = w as Record<string, unknown>;
    if (typeof m !== "object" || m === null) throw new DDataDecodeError("message is not an object");
    const id = m.id as number;
    switch (m.t) {
      case "read":
        return { t: "read", id, key: str(m.key) };
      case "write-ack":
        return { t: "write-ack", id };
      case "status":
        if (!Array.isArray(m.digests)) throw new DDataDecodeError("status without digests");
        return {
          t: "status",
          chunk: Number(m.chunk),
          totChunks: Number(m.totChunks),
          digests: (m.digests as unknown[]).map((d) => {
            if (!Array.isArray(d)) throw new DDataDecodeError("bad digest");
            return [str(d[0]), str(d[1])] as const;
          }),
        };
      case "read-result":
        return m.env === undefined
          ? { t: "read-result", id }
          : { t: "read-result", id, env: this.decodeEnvelope(m.env) };
      case "write":
        return { t: "write", id, key: str(m.key), env: this.decodeEnvelope(m.env) };
      case "delta":
        if (!Array.isArray(m.entries)) throw new DDataDecodeError("delta without entries");
        return {
          t: "delta",
          entries: (m.entries as unknown[]).map((e) => {
            if (!Array.isArray(e)) throw new DDataDecodeError("bad delta entry");
            const d = this.decodeData(e[1]);
            if (d === DELETED) throw new DDataDecodeError("a delta cannot delete");
            return [str(e[0]), d] as const;
          }),
        };
      case "gossip":
        if (!Array.isArray(m.entries) || !Array.isArray(m.want))
          throw new DDataDecodeError("bad gossip");
        return {
          t: "gossip",
          entries: (m.entries as unknown[]).map((e) => {
            if (!Array.isArray(e)) throw new DDataDecodeError("bad gossip entry");
            return [str(e[0]), this.decodeEnvelope(e[1])] as const;
          }),
          want: (m.want as unknown[]).map(str),
        };
      default:
        throw new DDataDecodeError(`unknown message type ${String(m.t)}`);
    }
  }
}

function str(v: unknown): string {
  if (typeof v !== "string") throw new DDataDecodeError("expected a string");
  return v;
}
