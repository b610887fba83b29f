/**
 * The replicator's decisions, sans-IO (docs/distributed-data.md). One machine per member
 * holds an envelope per key and answers `handle(input, now) -> outputs`; the driver
 * (cluster/ddata/replicator.ts) performs the outputs: messages to the other replicators,
 * replies, subscriber notifications, durable writes and timers.
 *
 * - get / update / delete with a consistency level: the local replica answers at once for
 *   `local`; otherwise reads (writes) go to every reachable replica and the request
 *   completes when enough of them answered (acknowledged), or fails at its timeout.
 *   Updates apply locally first; a write carries the update's delta (or the full value).
 *   Replicas marked unreachable are asked too (unreachable means "by some observer").
 * - Deltas of local updates are accumulated per key and sent to every reachable replica
 *   each deltaPropagationIntervalMs. Merging a delta is a join, so lost, duplicated or
 *   reordered deltas are harmless; what a lost delta leaves out, anti-entropy brings.
 * - Anti-entropy: each gossipIntervalMs one random replica gets the digests of a chunk
 *   of the keys; it answers with the envelopes that differ and asks for the ones it lacks.
 *   Messages are split at messageBytesMax.
 * - Pruning: when a member is removed, a replica that saw the removal marks every key
 *   holding the removed member's data (`init`, owned by itself; of two concurrent marks the
 *   smaller owner id wins), waits until every replica has seen the mark, then moves the data
 *   into its own (`performed`). From then on every merge drops data of that member, so a
 *   stale copy cannot bring it back. A mark whose owner left is taken over by the replica
 *   with the smallest id.
 */

import type { ShardkitError } from "../../base/errors.js";
import { murmur3OfString } from "../../base/hash.js";
import { encodeReplicatedData } from "./ddata-codec.js";
import { DDataTypeMismatchError, type ReplicatedData } from "./replicated-data.js";
import {
  type Consistency,
  DataDeletedError,
  DELETED,
  type Envelope,
  GetFailureError,
  ModifyFailureError,
  type PruningMarker,
  type ReplicatorMessage,
  type ReplicatorSettings,
  requiredReplicas,
  resolveReplicatorSettings,
  TooManyKeysError,
  UpdateTimeoutError,
} from "./replicator-types.js";

/** Result of get (data: undefined when no replica has the key), update and delete. */
export type ReplicatorResult =
  | { readonly ok: true; readonly data?: ReplicatedData }
  | { readonly ok: false; readonly error: ShardkitError };

export type ReplicatorInput =
  | {
      readonly type: "get";
      readonly req: number;
      readonly key: string;
      readonly consistency: Consistency;
      readonly timeoutMs?: number;
    }
  | {
      readonly type: "update";
      readonly req: number;
      readonly key: string;
      readonly initial: ReplicatedData;
      readonly modify: (current: ReplicatedData) => ReplicatedData;
      readonly consistency: Consistency;
      readonly timeoutMs?: number;
    }
  | {
      readonly type: "delete";
      readonly req: number;
      readonly key: string;
      readonly consistency: Consistency;
      readonly timeoutMs?: number;
    }
  | { readonly type: "subscribe"; readonly key: string; readonly subscriber: number }
  | { readonly type: "unsubscribe"; readonly key: string; readonly subscriber: number }
  /** The replicas (members with the role, this one included) and which are unreachable. */
  | {
      readonly type: "members";
      readonly members: readonly string[];
      readonly unreachable: readonly string[];
    }
  | { readonly type: "member-removed"; readonly member: string }
  | { readonly type: "peer"; readonly from: string; readonly msg: ReplicatorMessage }
  | { readonly type: "timer"; readonly key: string };

export type ReplicatorOutput =
  | { readonly type: "send"; readonly to: string; readonly msg: ReplicatorMessage }
  | { readonly type: "reply"; readonly req: number; readonly result: ReplicatorResult }
  | {
      readonly type: "notify";
      readonly subscriber: number;
      readonly key: string;
      /** The new value; undefined when the key was deleted. */
      readonly data: ReplicatedData | undefined;
    }
  | { readonly type: "store"; readonly key: string; readonly env: Envelope }
  | { readonly type: "start-timer"; readonly key: string; readonly delayMs: number }
  | { readonly type: "cancel-timer"; readonly key: string };

export interface ReplicatorMachineOptions {
  /** This replica's id (the member's unique address). */
  readonly self: string;
  readonly settings?: Partial<ReplicatorSettings>;
  /** Keys kept on disk (the driver stores them on `store`). */
  readonly isDurable?: (key: string) => boolean;
  /** Envelopes loaded from disk before the replicator serves. */
  readonly initial?: Iterable<readonly [string, Envelope]>;
  /** Uniform integer in [0, max). */
  readonly randomInt: (maxExclusive: number) => number;
  /** Serialized size of a value in bytes (for messageBytesMax); default: an estimate. */
  readonly sizeOf?: (data: ReplicatedData | typeof DELETED) => number;
}

const NO_MARKERS: ReadonlyMap<string, PruningMarker> = new Map();
const T_GOSSIP = "gossip";
const T_DELTA = "delta";
const T_NOTIFY = "notify";
const T_PRUNE = "prune";

interface ReadOp {
  readonly key: string;
  readonly need: number;
  readonly timeoutMs: number;
  readonly from: Set<string>;
  acc: Envelope | undefined;
}

interface WriteOp {
  readonly key: string;
  readonly need: number;
  readonly timeoutMs: number;
  readonly from: Set<string>;
}

/** The replicator state machine of one member. */
export class ReplicatorMachine {
  readonly settings: Readonly<ReplicatorSettings>;
  readonly self: string;
  private readonly data = new Map<string, Envelope>();
  private readonly digests = new Map<string, string>();
  private others: string[] = [];
  private unreachable = new Set<string>();
  private readonly removed = new Set<string>();
  private readonly performedAt = new Map<string, number>();
  private readonly pendingDeltas = new Map<string, ReplicatedData>();
  private readonly changed = new Set<string>();
  private readonly subs = new Map<string, Set<number>>();
  private readonly reads = new Map<number, ReadOp>();
  private readonly writes = new Map<number, WriteOp>();
  private statusRound = 0;
  private readonly isLive = (node: string) => node === this.self || this.others.includes(node);
  private out: ReplicatorOutput[] = [];
  private readonly isDurable: (key: string) => boolean;
  private readonly randomInt: (max: number) => number;
  private readonly sizeOf: (data: ReplicatedData | typeof DELETED) => number;

  constructor(options: ReplicatorMachineOptions) {
    this.self = options.self;
    this.settings = resolveReplicatorSettings(options.settings);
    this.isDurable = options.isDurable ?? (() => false);
    this.randomInt = options.randomInt;
    this.sizeOf =
      options.sizeOf ??
      ((d) => (d === DELETED ? 8 : JSON.stringify(encodeReplicatedData(d)).length));
    for (const [k, env] of options.initial ?? []) this.data.set(k, env);
  }

  /** Keys held (deleted ones included). */
  get keys(): string[] {
    return [...this.data.keys()];
  }

  /** The local envelope of `key`. */
  envelope(key: string): Envelope | undefined {
    return this.data.get(key);
  }

  /** The periodic timers; call once, before the first input. */
  start(): ReplicatorOutput[] {
    const s = this.settings;
    return [
      { type: "start-timer", key: T_GOSSIP, delayMs: s.gossipIntervalMs },
      { type: "start-timer", key: T_DELTA, delayMs: s.deltaPropagationIntervalMs },
      { type: "start-timer", key: T_NOTIFY, delayMs: s.notifySubscribersIntervalMs },
      { type: "start-timer", key: T_PRUNE, delayMs: s.pruningIntervalMs },
    ];
  }

  handle(input: ReplicatorInput, now: number): ReplicatorOutput[] {
    this.out = [];
    switch (input.type) {
      case "get":
        this.onGet(input.req, input.key, input.consistency, input.timeoutMs);
        break;
      case "update":
        this.onUpdate(input);
        break;
      case "delete":
        this.onDelete(input.req, input.key, input.consistency, input.timeoutMs);
        break;
      case "subscribe": {
        let s = this.subs.get(input.key);
        if (s === undefined) {
          s = new Set();
          this.subs.set(input.key, s);
        }
        s.add(input.subscriber);
        const env = this.data.get(input.key);
        if (env !== undefined)
          this.emit({
            type: "notify",
            subscriber: input.subscriber,
            key: input.key,
            data: env.data === DELETED ? undefined : env.data,
          });
        break;
      }
      case "unsubscribe": {
        const s = this.subs.get(input.key);
        s?.delete(input.subscriber);
        if (s?.size === 0) this.subs.delete(input.key);
        break;
      }
      case "members":
        this.others = input.members.filter((m) => m !== this.self);
        this.unreachable = new Set(input.unreachable);
        break;
      case "member-removed":
        if (input.member !== this.self) {
          this.removed.add(input.member);
          this.others = this.others.filter((m) => m !== input.member);
          this.unreachable.delete(input.member);
        }
        break;
      case "peer":
        if (!this.removed.has(input.from)) this.onPeer(input.from, input.msg);
        break;
      case "timer":
        this.onTimer(input.key, now);
        break;
    }
    return this.out;
  }

  // ------------------------------------------------------------------ requests

  private replicas(): number {
    return this.others.length + 1;
  }

  private reachableOthers(): string[] {
    return this.others.filter((m) => !this.unreachable.has(m));
  }

  private onGet(req: number, key: string, c: Consistency, timeoutMs?: number): void {
    const need = requiredReplicas(c, this.replicas());
    if (need <= 1) {
      this.reply(req, this.readResult(key, this.data.get(key)));
      return;
    }
    const t = timeoutMs ?? this.settings.operationTimeoutMs;
    this.reads.set(req, { key, need, timeoutMs: t, from: new Set(), acc: this.data.get(key) });
    // Unreachable replicas are asked too: one observer's unreachability is not ours.
    for (const to of this.others) this.send(to, { t: "read", id: req, key });
    this.emit({ type: "start-timer", key: `op:${req}`, delayMs: t });
  }

  private readResult(key: string, env: Envelope | undefined): ReplicatorResult {
    if (env === undefined) return { ok: true };
    if (env.data === DELETED) return { ok: false, error: new DataDeletedError(key) };
    return { ok: true, data: env.data };
  }

  private onUpdate(input: Extract<ReplicatorInput, { type: "update" }>): void {
    const { req, key } = input;
    const env = this.data.get(key);
    if (env?.data === DELETED) {
      this.reply(req, { ok: false, error: new DataDeletedError(key) });
      return;
    }
    if (env === undefined && this.data.size >= this.settings.keysMax) {
      this.reply(req, { ok: false, error: new TooManyKeysError(key, this.settings.keysMax) });
      return;
    }
    const current = env?.data ?? input.initial;
    let next: ReplicatedData;
    try {
      next = input.modify(current);
      if (next?.kind !== current.kind)
        throw new DDataTypeMismatchError(current.kind, String(next?.kind));
    } catch (e) {
      this.reply(req, { ok: false, error: new ModifyFailureError(key, e) });
      return;
    }
    const delta = next.delta;
    const value = next.resetDelta();
    this.setLocal(key, { data: value, pruning: env?.pruning ?? NO_MARKERS });
    const propagate = value.supportsDeltas ? delta : value;
    if (this.settings.deltaCrdtEnabled && propagate !== undefined) {
      const prev = this.pendingDeltas.get(key);
      this.pendingDeltas.set(key, prev === undefined ? propagate : prev.merge(propagate));
    }
    const written = value.supportsDeltas && delta !== undefined ? delta : value;
    this.write(
      req,
      key,
      { data: written, pruning: NO_MARKERS },
      input.consistency,
      input.timeoutMs,
    );
  }

  private onDelete(req: number, key: string, c: Consistency, timeoutMs?: number): void {
    if (this.data.get(key)?.data === DELETED) {
      this.reply(req, { ok: false, error: new DataDeletedError(key) });
      return;
    }
    this.pendingDeltas.delete(key);
    const env: Envelope = { data: DELETED, pruning: NO_MARKERS };
    this.setLocal(key, env);
    this.write(req, key, env, c, timeoutMs);
  }

  private write(req: number, key: string, env: Envelope, c: Consistency, timeoutMs?: number): void {
    const need = requiredReplicas(c, this.replicas());
    if (need <= 1) {
      this.reply(req, { ok: true });
      return;
    }
    const t = timeoutMs ?? this.settings.operationTimeoutMs;
    this.writes.set(req, { key, need, timeoutMs: t, from: new Set() });
    for (const to of this.others) this.send(to, { t: "write", id: req, key, env });
    this.emit({ type: "start-timer", key: `op:${req}`, delayMs: t });
  }

  // ------------------------------------------------------------------ peers

  private onPeer(from: string, msg: ReplicatorMessage): void {
    switch (msg.t) {
      case "read":
        this.send(from, { t: "read-result", id: msg.id, ...this.envOpt(msg.key) });
        return;
      case "read-result": {
        const op = this.reads.get(msg.id);
        if (op === undefined || op.from.has(from)) return;
        op.from.add(from);
        if (msg.env !== undefined)
          op.acc = op.acc === undefined ? msg.env : (safeMerge(op.acc, msg.env) ?? op.acc);
        if (op.from.size + 1 >= op.need) {
          this.reads.delete(msg.id);
          this.emit({ type: "cancel-timer", key: `op:${msg.id}` });
          if (op.acc !== undefined) this.mergeInto(op.key, op.acc);
          this.reply(msg.id, this.readResult(op.key, this.data.get(op.key)));
        }
        return;
      }
      case "write":
        if (this.mergeInto(msg.key, msg.env)) this.send(from, { t: "write-ack", id: msg.id });
        return;
      case "write-ack": {
        const op = this.writes.get(msg.id);
        if (op === undefined) return;
        op.from.add(from);
        if (op.from.size + 1 >= op.need) {
          this.writes.delete(msg.id);
          this.emit({ type: "cancel-timer", key: `op:${msg.id}` });
          this.reply(msg.id, { ok: true });
        }
        return;
      }
      case "delta":
        for (const [key, d] of msg.entries) this.mergeInto(key, { data: d, pruning: NO_MARKERS });
        return;
      case "status":
        this.onStatus(from, msg.chunk, msg.totChunks, msg.digests);
        return;
      case "gossip": {
        for (const [key, env] of msg.entries) this.mergeInto(key, env);
        if (msg.want.length > 0) {
          const entries: [string, Envelope][] = [];
          for (const k of msg.want) {
            const env = this.data.get(k);
            if (env !== undefined) entries.push([k, env]);
          }
          this.sendGossip(from, entries, []);
        }
        return;
      }
    }
  }

  private envOpt(key: string): { env?: Envelope } {
    const env = this.data.get(key);
    return env === undefined ? {} : { env };
  }

  private onStatus(
    from: string,
    chunk: number,
    totChunks: number,
    digests: readonly (readonly [string, string])[],
  ): void {
    const theirs = new Map(digests);
    const entries: [string, Envelope][] = [];
    const want: string[] = [];
    for (const [k, d] of theirs) {
      const mine = this.data.get(k);
      if (mine === undefined) want.push(k);
      else if (this.digest(k) !== d) {
        entries.push([k, mine]);
        want.push(k);
      }
    }
    for (const [k, env] of this.data)
      if (!theirs.has(k) && chunkOf(k, totChunks) === chunk) entries.push([k, env]);
    if (entries.length > 0 || want.length > 0) this.sendGossip(from, entries, want);
  }

  /** Sends gossip split at messageBytesMax (the wanted keys go with the first part). */
  private sendGossip(to: string, entries: [string, Envelope][], want: string[]): void {
    let part: [string, Envelope][] = [];
    let bytes = 0;
    let first = true;
    const flush = () => {
      this.send(to, { t: "gossip", entries: part, want: first ? want : [] });
      first = false;
      part = [];
      bytes = 0;
    };
    for (const e of entries) {
      const size = this.sizeOf(e[1].data) + e[0].length;
      if (part.length > 0 && bytes + size > this.settings.messageBytesMax) flush();
      part.push(e);
      bytes += size;
    }
    if (part.length > 0 || want.length > 0) flush();
  }

  /** Merges `incoming` into the local envelope; false when it cannot (type mismatch). */
  private mergeInto(key: string, incoming: Envelope): boolean {
    const local = this.data.get(key);
    if (local === undefined && this.data.size >= this.settings.keysMax) return false;
    const merged =
      local === undefined
        ? normalize(incoming, this.self)
        : safeMerge(local, incoming, this.self, this.isLive);
    if (merged === undefined) return false;
    if (local === undefined || this.digest(key) !== digestOf(merged)) this.setLocal(key, merged);
    return true;
  }

  private setLocal(key: string, env: Envelope): void {
    this.data.set(key, env);
    this.digests.delete(key);
    this.changed.add(key);
    if (this.isDurable(key)) this.emit({ type: "store", key, env });
  }

  private digest(key: string): string {
    let d = this.digests.get(key);
    if (d === undefined) {
      const env = this.data.get(key);
      d = env === undefined ? "" : digestOf(env);
      this.digests.set(key, d);
    }
    return d;
  }

  // ------------------------------------------------------------------ timers

  private onTimer(key: string, now: number): void {
    const s = this.settings;
    switch (key) {
      case T_GOSSIP:
        this.gossipTick();
        this.emit({ type: "start-timer", key, delayMs: s.gossipIntervalMs });
        return;
      case T_DELTA:
        this.deltaTick();
        this.emit({ type: "start-timer", key, delayMs: s.deltaPropagationIntervalMs });
        return;
      case T_NOTIFY:
        this.notifyTick();
        this.emit({ type: "start-timer", key, delayMs: s.notifySubscribersIntervalMs });
        return;
      case T_PRUNE:
        this.pruneTick(now);
        this.emit({ type: "start-timer", key, delayMs: s.pruningIntervalMs });
        return;
    }
    if (!key.startsWith("op:")) return;
    const req = Number(key.slice(3));
    const r = this.reads.get(req);
    if (r !== undefined) {
      this.reads.delete(req);
      const error = new GetFailureError(r.key, r.timeoutMs, r.from.size + 1, r.need);
      this.reply(req, { ok: false, error });
      return;
    }
    const w = this.writes.get(req);
    if (w !== undefined) {
      this.writes.delete(req);
      const error = new UpdateTimeoutError(w.key, w.timeoutMs, w.from.size + 1, w.need);
      this.reply(req, { ok: false, error });
    }
  }

  private gossipTick(): void {
    const targets = this.reachableOthers();
    if (targets.length === 0) return;
    const to = targets[this.randomInt(targets.length)] as string;
    const keys = [...this.data.keys()];
    const tot = Math.max(1, Math.ceil(keys.length / this.settings.gossipDigestsPerMessageMax));
    const chunk = this.statusRound++ % tot;
    const digests: [string, string][] = [];
    for (const k of keys) if (chunkOf(k, tot) === chunk) digests.push([k, this.digest(k)]);
    this.send(to, { t: "status", chunk, totChunks: tot, digests });
  }

  private deltaTick(): void {
    if (this.pendingDeltas.size === 0) return;
    const targets = this.reachableOthers();
    const entries = [...this.pendingDeltas];
    this.pendingDeltas.clear();
    if (targets.length === 0) return;
    const parts: [string, ReplicatedData][][] = [[]];
    let bytes = 0;
    for (const e of entries) {
      const size = this.sizeOf(e[1]) + e[0].length;
      const last = parts[parts.length - 1] as [string, ReplicatedData][];
      if (last.length > 0 && bytes + size > this.settings.messageBytesMax) {
        parts.push([e]);
        bytes = size;
      } else {
        last.push(e);
        bytes += size;
      }
    }
    for (const to of targets) for (const p of parts) this.send(to, { t: "delta", entries: p });
  }

  private notifyTick(): void {
    for (const key of this.changed) {
      const subs = this.subs.get(key);
      const env = this.data.get(key);
      if (subs === undefined || env === undefined) continue;
      const data = env.data === DELETED ? undefined : env.data;
      for (const subscriber of subs) this.emit({ type: "notify", subscriber, key, data });
    }
    this.changed.clear();
  }

  private pruneTick(now: number): void {
    const ttl = this.settings.pruningMarkerTimeToLiveMs;
    const current = new Set([...this.others, this.self]);
    const leader = [...current].sort()[0] === this.self;
    for (const [key, env] of [...this.data]) {
      if (env.data === DELETED) continue;
      let data = env.data;
      const markers = new Map(env.pruning);
      let changed = false;
      for (const [removed, m] of env.pruning) {
        if (m.state === "performed") {
          const id = `${key}\u0000${removed}`;
          const since = this.performedAt.get(id);
          if (since === undefined) this.performedAt.set(id, now);
          else if (now - since >= ttl) {
            markers.delete(removed);
            this.performedAt.delete(id);
            changed = true;
          }
          continue;
        }
        if (!current.has(m.owner) && leader) {
          markers.set(removed, { state: "init", owner: this.self, seen: [this.self] });
          changed = true;
        } else if (m.owner === this.self && [...current].every((n) => m.seen.includes(n))) {
          data = data.prune(removed, this.self);
          markers.set(removed, { state: "performed" });
          this.performedAt.set(`${key}\u0000${removed}`, now);
          changed = true;
        }
      }
      // Every replica that saw the removal may start; of two owners, the smaller id wins.
      for (const removed of this.removed)
        if (!markers.has(removed) && data.modifiedByNodes().has(removed)) {
          markers.set(removed, { state: "init", owner: this.self, seen: [this.self] });
          changed = true;
        }
      if (changed) this.setLocal(key, { data, pruning: markers });
    }
  }

  // ------------------------------------------------------------------ outputs

  private send(to: string, msg: ReplicatorMessage): void {
    this.out.push({ type: "send", to, msg });
  }

  private reply(req: number, result: ReplicatorResult): void {
    this.out.push({ type: "reply", req, result });
  }

  private emit(o: ReplicatorOutput): void {
    this.out.push(o);
  }
}

function chunkOf(key: string, totChunks: number): number {
  return totChunks <= 1 ? 0 : (murmur3OfString(key) >>> 0) % totChunks;
}

/** A canonical digest of an envelope (data and pruning markers). */
export function digestOf(env: Envelope): string {
  const data = env.data === DELETED ? DELETED : encodeReplicatedData(env.data);
  const markers = [...env.pruning]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([n, m]) => (m.state === "performed" ? [n, "p"] : [n, m.owner, [...m.seen].sort()]));
  const text = JSON.stringify([data, markers]);
  return `${text.length}:${murmur3OfString(text) >>> 0}:${murmur3OfString(text, 0x9747b28c) >>> 0}`;
}

/**
 * Merges pruning markers: performed wins; two inits of one owner unite their seen sets;
 * of two owners, a current replica wins over one that left (`isLive`), then the smaller id.
 */
function mergeMarkers(
  a: ReadonlyMap<string, PruningMarker>,
  b: ReadonlyMap<string, PruningMarker>,
  isLive: (node: string) => boolean,
): Map<string, PruningMarker> {
  const out = new Map(a);
  for (const [n, mb] of b) {
    const ma = out.get(n);
    if (ma === undefined || ma.state === "performed") {
      if (ma === undefined) out.set(n, mb);
      continue;
    }
    if (mb.state === "performed") out.set(n, mb);
    else if (mb.owner === ma.owner)
      out.set(n, {
        state: "init",
        owner: ma.owner,
        seen: [...new Set([...ma.seen, ...mb.seen])].sort(),
      });
    else {
      const la = isLive(ma.owner);
      const lb = isLive(mb.owner);
      if ((lb && !la) || (lb === la && mb.owner < ma.owner)) out.set(n, mb);
    }
  }
  return out;
}

/** Applies the markers: drops data of pruned members; records `self` in pending ones. */
function normalize(env: Envelope, self?: string): Envelope {
  if (env.data === DELETED) return { data: DELETED, pruning: NO_MARKERS };
  let data = env.data;
  let markers: Map<string, PruningMarker> | undefined;
  for (const [n, m] of env.pruning) {
    if (m.state === "performed") data = data.pruningCleanup(n);
    else if (self !== undefined && !m.seen.includes(self)) {
      markers ??= new Map(env.pruning);
      markers.set(n, { ...m, seen: [...m.seen, self].sort() });
    }
  }
  return { data, pruning: markers ?? env.pruning };
}

/** Merges two envelopes of one key. @throws DDataTypeMismatchError when their types differ. */
export function mergeEnvelopes(
  a: Envelope,
  b: Envelope,
  self?: string,
  isLive: (node: string) => boolean = () => true,
): Envelope {
  if (a.data === DELETED || b.data === DELETED) return { data: DELETED, pruning: NO_MARKERS };
  const pruning = mergeMarkers(a.pruning, b.pruning, isLive);
  return normalize({ data: a.data.merge(b.data), pruning }, self);
}

function safeMerge(
  a: Envelope,
  b: Envelope,
  self?: string,
  isLive?: (node: string) => boolean,
): Envelope | undefined {
  try {
    return mergeEnvelopes(a, b, self, isLive);
  } catch {
    return undefined;
  }
}
