/**
 * Messages between the sharding actors (regions, shards, the coordinator). The `sk` tag
 * keeps them apart from user messages; they travel through remoting as plain data.
 *
 * Region and coordinator ids are `<system>@<host>:<port><wire path>` strings
 * (e.g. `shop@10.0.0.5:2552/system/sharding-Cart#12`): unique per actor incarnation and
 * resolvable to a ref on any node.
 */
import type { ActorRef } from "../../actor/actor-ref.js";
import type { CoordinatorCommand, RegionCommand } from "../../protocol/sharding.js";
import type { Remoting } from "../remoting/remoting.js";

export type ShardingMsg =
  /** Region -> coordinator. */
  | { readonly sk: "sharding"; readonly t: "to-coordinator"; readonly cmd: CoordinatorCommand }
  /** Coordinator -> region. */
  | {
      readonly sk: "sharding";
      readonly t: "from-coordinator";
      readonly from: string;
      readonly cmd: RegionCommand;
    }
  /** Region -> coordinator (through the singleton proxy): who are you? */
  | {
      readonly sk: "sharding";
      readonly t: "identify-coordinator";
      readonly replyTo: ActorRef<ShardingMsg>;
    }
  | { readonly sk: "sharding"; readonly t: "coordinator-is"; readonly id: string }
  /** Anyone -> coordinator: the registered regions. */
  | {
      readonly sk: "sharding";
      readonly t: "get-regions";
      readonly replyTo: ActorRef<readonly string[]>;
    }
  /** Region -> region -> coordinator: a command relayed by the receiver (hand-off barrier). */
  | {
      readonly sk: "sharding";
      readonly t: "relay-to-coordinator";
      readonly coordinator: string;
      readonly cmd: CoordinatorCommand;
    }
  /** Region -> region: a message for an entity of a shard the receiver hosts. */
  | {
      readonly sk: "sharding";
      readonly t: "forwarded";
      readonly shard: string;
      readonly entityId: string;
      readonly message: unknown;
    };

/**
 * A message for an entity whose shard id is already known: what an EntityRef of a type
 * started with `init` tells its local region (the shard id computed once per ref, not per
 * message). It also has the shape of the shard's `deliver` command, so a region that
 * routes it to a local shard passes the same object on. Local only: never serialized.
 */
export class EntityDelivery {
  constructor(
    readonly entityId: string,
    readonly shardId: string,
    readonly message: unknown,
  ) {}
  get sk(): "shard" {
    return "shard";
  }
  get t(): "deliver" {
    return "deliver";
  }
}

/** First element of a {@link ForwardedTuple}. */
export const FORWARDED_TAG = "shardkit.fwd";

/**
 * What a region sends a region for an entity of a shard the receiver hosts: the wire
 * form of the bulk of remote sharding traffic, a 4-tuple rather than a 5-key object — a
 * third of the bytes, and less to pack and unpack. (A region still accepts the object
 * form, `t: "forwarded"`.)
 */
export type ForwardedTuple = readonly [
  tag: typeof FORWARDED_TAG,
  shard: string,
  entityId: string,
  message: unknown,
];

export function isForwardedTuple(m: unknown): m is ForwardedTuple {
  return (
    Array.isArray(m) &&
    m.length === 4 &&
    m[0] === FORWARDED_TAG &&
    typeof m[1] === "string" &&
    typeof m[2] === "string"
  );
}

export function isShardingMsg(m: unknown): m is ShardingMsg {
  return typeof m === "object" && m !== null && (m as { sk?: unknown }).sk === "sharding";
}

/** The id of a local actor: this node's `system@host:port` + the actor's wire path. */
export function actorIdOf(remoting: Remoting, ref: ActorRef<never>): string {
  const p = ref.path;
  return `${remoting.address}/${p.elements.join("/")}#${p.uid}`;
}

/** Splits an actor id into its node address and wire path. */
export function splitActorId(id: string): { node: string; path: string } | undefined {
  const slash = id.indexOf("/");
  if (slash <= 0) return undefined;
  return { node: id.slice(0, slash), path: id.slice(slash) };
}

/** Bound of an ActorIdRefs table (in practice one entry per region of the type). */
const ACTOR_ID_REFS_MAX = 10_000;

/**
 * Resolves actor ids to refs, reusing them: a remote ref caches its encoded wire path,
 * so regions and the coordinator do not rebuild one per message.
 */
export class ActorIdRefs {
  private readonly refs = new Map<string, ActorRef<ShardingMsg>>();

  constructor(private readonly remoting: Remoting) {}

  refOf(id: string): ActorRef<ShardingMsg> | undefined {
    const cached = this.refs.get(id);
    if (cached !== undefined) return cached;
    const p = splitActorId(id);
    if (p === undefined) return undefined;
    const ref = this.remoting.actorRefFor<ShardingMsg>(p.node, p.path);
    if (this.refs.size >= ACTOR_ID_REFS_MAX) this.refs.clear();
    this.refs.set(id, ref);
    return ref;
  }
}
