/**
 * The Distributed Data replicator of one member (docs/distributed-data.md).
 *
 * An actor (`/system/<name>`, default `ddataReplicator`) receives the other replicators'
 * messages; the decisions are the sans-IO ReplicatorMachine's (core/ddata), and this driver
 * performs its outputs: messages through remoting, promise replies, subscriber callbacks,
 * durable writes (before acknowledging), timers on the runtime's scheduler. The replicas
 * are the members with the role (all members without one) that are up, leaving or
 * preparing for shutdown. Durable keys are loaded from the store before `start` returns;
 * a store that cannot be read fails `start` with a DurableStoreError naming the file.
 */
import type { ActorRef } from "../../actor/actor-ref.js";
import type { ActorSystem } from "../../actor/actor-system.js";
import { type Behavior, Behaviors } from "../../actor/behavior.js";
import type { Disposable } from "../../base/disposable.js";
import { ConfigError, ShardkitError } from "../../base/errors.js";
import {
  createDDataSerializer,
  DDATA_SERIALIZER_ID,
  isReplicatedData,
  type ReplicatedData,
} from "../../core/ddata/index.js";
import {
  type ReplicatorInput,
  ReplicatorMachine,
  type ReplicatorOutput,
} from "../../core/ddata/replicator-machine.js";
import {
  type Consistency,
  DELETED,
  type Envelope,
  LOCAL,
  type ReplicatorSettings,
} from "../../core/ddata/replicator-types.js";
import type { MemberStatus } from "../../core/membership/member-status.js";
import { parseUniqueAddress, uniqueAddressToString } from "../../core/membership/unique-address.js";
import { type DDataDurableStore, DurableStoreError } from "../../ports/ddata-durable-store.js";
import type { Cluster } from "../membership/cluster.js";
import type { Remoting } from "../remoting/remoting.js";
import { EnvelopeCodec, type WireMessage } from "./envelope-codec.js";

/** A typed key: the id of a replicated value and (statically) its CRDT type. */
export interface Key<T extends ReplicatedData> {
  readonly id: string;
  /** Type marker only (never set). */
  readonly __type?: T;
}

/** A key for a value of type `T`. */
export function ddataKey<T extends ReplicatedData>(id: string): Key<T> {
  if (typeof id !== "string" || id.length === 0)
    throw new ConfigError("ddataKey(id)", id, "a non-empty string");
  return { id };
}

/** The replicator stopped (its node is shutting down) before answering. */
export class ReplicatorStoppedError extends ShardkitError {
  constructor() {
    super("DDATA_STOPPED", "the replicator stopped");
  }
}

/** What a replicator needs from its node (a ClusterNode has all of it). */
export interface ReplicatorHost {
  readonly system: ActorSystem;
  readonly remoting: Remoting;
  readonly cluster: Cluster;
}

export interface ReplicatorOptions {
  /** Actor name under /system (one replicator per name per node). */
  readonly name?: string;
  /** Replicate among members with this role only. */
  readonly role?: string;
  readonly settings?: Partial<ReplicatorSettings>;
  /** Keys kept on disk: exact ids, or prefixes ending with `*`. Needs `durableStore`. */
  readonly durableKeys?: readonly string[];
  /** Where durable keys live (e.g. `new SqliteDDataStore({ path })` from `shardkit/sqlite`). */
  readonly durableStore?: DDataDurableStore;
}

/** Options of one get / update / delete. */
export interface OperationOptions {
  /** Overrides the replicator's operationTimeoutMs. */
  readonly timeoutMs?: number;
}

/** Member statuses whose replicas take part in replication. */
const REPLICA_STATUSES: ReadonlySet<MemberStatus> = new Set([
  "up",
  "leaving",
  "preparing-for-shutdown",
  "ready-for-shutdown",
]);

type ActorMsg = { readonly sk: "ddata"; readonly from: string; readonly m: unknown };

interface Pending {
  readonly resolve: (v: ReplicatedData | undefined) => void;
  readonly reject: (e: Error) => void;
}

/** A member's replicator. */
export class Replicator {
  /** This member's node id: pass it to the CRDT operations in `modify`. */
  readonly selfNode: string;
  readonly settings: Readonly<ReplicatorSettings>;
  private readonly machine: ReplicatorMachine;
  private readonly codec: EnvelopeCodec;
  private readonly pending = new Map<number, Pending>();
  /** The request being fed right now (see `request`). */
  private inFlight: (Pending & { readonly req: number }) | undefined;
  private readonly subs = new Map<number, (d: ReplicatedData | undefined) => void>();
  private readonly timers = new Map<string, Disposable>();
  private readonly refs = new Map<string, ActorRef<ActorMsg>>();
  private readonly path: string;
  private nextReq = 1;
  private nextSub = 1;
  private stopped = false;
  private readonly clusterSub: Disposable;

  private constructor(
    private readonly host: ReplicatorHost,
    private readonly options: ReplicatorOptions,
  ) {
    const { remoting, cluster, system } = host;
    const registry = remoting.registry;
    if (registry.serializerById(DDATA_SERIALIZER_ID) === undefined)
      registry.registerInternal(createDDataSerializer(), { match: isReplicatedData });
    this.codec = new EnvelopeCodec(registry);
    this.selfNode = uniqueAddressToString(cluster.self);
    const name = options.name ?? "ddataReplicator";
    this.path = `/system/${name}`;
    const patterns = options.durableKeys ?? [];
    if (patterns.length > 0 && options.durableStore === undefined)
      throw new ConfigError(
        "ddata.durableStore",
        undefined,
        "a durable store (e.g. SqliteDDataStore) when ddata.durableKeys is set",
      );
    const isDurable = (key: string) =>
      patterns.some((p) => (p.endsWith("*") ? key.startsWith(p.slice(0, -1)) : key === p));
    const initial =
      options.durableStore === undefined ? [] : this.loadDurable(options.durableStore, isDurable);
    this.machine = new ReplicatorMachine({
      self: this.selfNode,
      settings: options.settings,
      isDurable,
      initial,
      randomInt: (n) => system.runtime.random.nextInt(n),
      sizeOf: (d) => (d === DELETED ? 8 : registry.serialize(d).bytes.length),
    });
    this.settings = this.machine.settings;
    const log = system.log.child({ component: "ddata" });
    const guardian = system.core.systemGuardian;
    guardian.spawnChild(this.behavior(log), name, undefined);
    this.perform(this.machine.start());
    this.clusterSub = cluster.subscribe(
      (e) => {
        if (e.type === "member-removed")
          this.feed({
            type: "member-removed",
            member: uniqueAddressToString(e.member.uniqueAddress),
          });
        this.feedMembers();
      },
      { initialState: true },
    );
    this.feedMembers();
    system.whenTerminated.then(() => this.stop());
  }

  /**
   * Starts the replicator on this node (every node that replicates must start one with
   * the same name and role). Loads the durable keys first.
   * @throws DurableStoreError when the durable store cannot be read (names the file).
   */
  static start(host: ReplicatorHost, options: ReplicatorOptions = {}): Replicator {
    return new Replicator(host, options);
  }

  /**
   * Reads `key`: undefined when no replica asked has it.
   * Rejects with GetFailureError (not enough answers in time) or DataDeletedError.
   */
  get<T extends ReplicatedData>(
    key: Key<T>,
    consistency: Consistency = LOCAL,
    options: OperationOptions = {},
  ): Promise<T | undefined> {
    return this.request((req) => ({
      type: "get",
      req,
      key: key.id,
      consistency,
      ...timeout(options),
    })) as Promise<T | undefined>;
  }

  /**
   * Sets `key` to `modify(current value, or initial)`, applied locally at once, then
   * written to `consistency` replicas. Rejects with UpdateTimeoutError (the update stays
   * applied locally and spreads later), DataDeletedError or ModifyFailureError.
   */
  update<T extends ReplicatedData>(
    key: Key<T>,
    initial: T,
    modify: (current: T) => T,
    consistency: Consistency = LOCAL,
    options: OperationOptions = {},
  ): Promise<void> {
    // An update's reply carries no data: the request's promise resolves with undefined.
    return this.request((req) => ({
      type: "update",
      req,
      key: key.id,
      initial,
      modify: modify as unknown as (c: ReplicatedData) => ReplicatedData,
      consistency,
      ...timeout(options),
    })) as Promise<unknown> as Promise<void>;
  }

  /** Deletes `key` for good (it can never be used again). */
  async delete<T extends ReplicatedData>(
    key: Key<T>,
    consistency: Consistency = LOCAL,
    options: OperationOptions = {},
  ): Promise<void> {
    await this.request((req) => ({
      type: "delete",
      req,
      key: key.id,
      consistency,
      ...timeout(options),
    }));
  }

  /**
   * Calls `handler` with the value of `key` now (if any) and after it changes (batched
   * every notifySubscribersIntervalMs); with undefined once the key is deleted.
   */
  subscribe<T extends ReplicatedData>(
    key: Key<T>,
    handler: (value: T | undefined) => void,
  ): Disposable {
    const subscriber = this.nextSub++;
    this.subs.set(subscriber, handler as (d: ReplicatedData | undefined) => void);
    this.feed({ type: "subscribe", key: key.id, subscriber });
    return {
      dispose: () => {
        if (this.subs.delete(subscriber))
          this.feed({ type: "unsubscribe", key: key.id, subscriber });
      },
    };
  }

  /** Keys held locally (deleted ones included). */
  get keys(): string[] {
    return this.machine.keys;
  }

  /** Stops timers and the actor; pending requests are rejected. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.clusterSub.dispose();
    for (const t of this.timers.values()) t.dispose();
    this.timers.clear();
    const err = new ReplicatorStoppedError();
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    const guardian = this.host.system.core.systemGuardian;
    const ref = guardian.child(this.path.slice("/system/".length));
    try {
      if (ref !== undefined) guardian.stop(ref as ActorRef<never>);
    } catch {
      // the system is terminating: the actor stops with it
    }
  }

  // ------------------------------------------------------------------ driver

  /**
   * Feeds `input` (its `req` replaced by a fresh request number) and resolves with the
   * machine's reply. A reply given while the input is handled (local consistency) is
   * settled at once, without going through the pending table (the hot path of local
   * updates).
   */
  private request(make: (req: number) => ReplicatorInput): Promise<ReplicatedData | undefined> {
    if (this.stopped) return Promise.reject(new ReplicatorStoppedError());
    return new Promise((resolve, reject) => {
      const req = this.nextReq++;
      // A subscriber called while this input is performed may issue a request of its own:
      // the outer one is restored after it.
      const outer = this.inFlight;
      this.inFlight = { req, resolve, reject };
      try {
        this.feed(make(req));
      } finally {
        const answered = this.inFlight?.req !== req;
        this.inFlight = outer;
        if (!answered) this.pending.set(req, { resolve, reject });
      }
    });
  }

  private feed(input: ReplicatorInput): void {
    if (this.stopped) return;
    this.perform(this.machine.handle(input, this.host.system.runtime.clock.now()));
  }

  private feedMembers(): void {
    const { cluster } = this.host;
    const role = this.options.role;
    const state = cluster.state;
    const members = state.members
      .filter(
        (m) => REPLICA_STATUSES.has(m.status) && (role === undefined || m.roles.includes(role)),
      )
      .map((m) => uniqueAddressToString(m.uniqueAddress));
    const unreachable = state.unreachable.map((m) => uniqueAddressToString(m.uniqueAddress));
    this.feed({ type: "members", members, unreachable });
  }

  private perform(outputs: readonly ReplicatorOutput[]): void {
    for (const o of outputs) {
      switch (o.type) {
        case "send":
          this.refFor(o.to)?.tell({
            sk: "ddata",
            from: this.selfNode,
            m: this.codec.encodeMessage(o.msg),
          });
          break;
        case "reply": {
          let p: Pending | undefined;
          if (this.inFlight?.req === o.req) {
            p = this.inFlight;
            this.inFlight = undefined;
          } else {
            p = this.pending.get(o.req);
            if (p === undefined) break;
            this.pending.delete(o.req);
          }
          if (o.result.ok) p.resolve(o.result.data);
          else p.reject(o.result.error);
          break;
        }
        case "notify":
          this.subs.get(o.subscriber)?.(o.data);
          break;
        case "store":
          this.store(o.key, o.env);
          break;
        case "start-timer": {
          this.timers.get(o.key)?.dispose();
          const key = o.key;
          this.timers.set(
            key,
            this.host.system.runtime.scheduler.schedule(o.delayMs, () => {
              this.timers.delete(key);
              this.feed({ type: "timer", key });
            }),
          );
          break;
        }
        case "cancel-timer":
          this.timers.get(o.key)?.dispose();
          this.timers.delete(o.key);
          break;
      }
    }
  }

  private refFor(to: string): ActorRef<ActorMsg> | undefined {
    let ref = this.refs.get(to);
    if (ref === undefined) {
      try {
        const a = parseUniqueAddress(to).address;
        ref = this.host.remoting.actorRefFor<ActorMsg>(
          `${a.system}@${a.host}:${a.port}`,
          this.path,
        );
      } catch {
        return undefined;
      }
      if (this.refs.size > 1_000) this.refs.clear();
      this.refs.set(to, ref);
    }
    return ref;
  }

  private store(key: string, env: Envelope): void {
    const s = this.options.durableStore;
    if (s === undefined) return;
    const { serializerId, bytes } = this.host.remoting.registry.serialize(
      this.codec.encodeEnvelope(env),
    );
    s.store(key, { serializerId, bytes });
  }

  /** The stored keys of this replicator's durable patterns (a store may hold others' too). */
  private loadDurable(
    store: DDataDurableStore,
    isDurable: (key: string) => boolean,
  ): [string, Envelope][] {
    const out: [string, Envelope][] = [];
    const registry = this.host.remoting.registry;
    for (const [key, e] of store.loadAll()) {
      if (!isDurable(key)) continue;
      try {
        out.push([key, this.codec.decodeEnvelope(registry.deserialize(e.serializerId, e.bytes))]);
      } catch (err) {
        throw new DurableStoreError(
          store.location,
          `corrupt entry: ${(err as Error).message}`,
          key,
        );
      }
    }
    return out;
  }

  private behavior(log: ActorSystem["log"]): Behavior<ActorMsg> {
    return Behaviors.receiveMessage<ActorMsg>((m) => {
      if (typeof m !== "object" || m === null || m.sk !== "ddata" || typeof m.from !== "string")
        return;
      let msg: ReturnType<EnvelopeCodec["decodeMessage"]>;
      try {
        msg = this.codec.decodeMessage(m.m as WireMessage);
      } catch (e) {
        log.warn("dropping a malformed replicator message", { from: m.from, error: String(e) });
        return;
      }
      this.feed({ type: "peer", from: m.from, msg });
    });
  }
}

function timeout(o: OperationOptions): { timeoutMs?: number } {
  return o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs };
}
