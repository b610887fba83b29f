/**
 * Actor ids of the sharding actors (regions, the coordinator) and their refs. The
 * messages themselves are declared in protocol/sharding.ts.
 *
 * Region and coordinator ids are `<system>@<host>:<port><wire path>` strings
 * (e.g. `shop@10.0.0.5:2552/system/sharding-Cart#12`): unique per actor incarnation and
 * resolvable to a ref on any node.
 */
import type { ActorRef } from "../../actor/actor-ref.js";
import type { ShardingMsg } from "../../protocol/sharding.js";
import type { Remoting } from "../remoting/remoting.js";

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
 * so regions and the coordinator do not rebuild one per message. A local id is resolved
 * anew each time (a map lookup) and never cached: it may name an actor that does not
 * exist yet. An id carries no process incarnation, so a message of the previous process
 * at this address can name this process's coordinator before it starts; a cached miss
 * then made the region watch a dead ref, see its coordinator "gone" at once, ask again and
 * loop for ever at one instant (simulator S20wL seed 210).
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
    if (p.node === this.remoting.address) return ref;
    if (this.refs.size >= ACTOR_ID_REFS_MAX) this.refs.clear();
    this.refs.set(id, ref);
    return ref;
  }
}
