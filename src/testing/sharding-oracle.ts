/**
 * The registry oracle of sharding tests: every shard and every entity incarnation
 * registers when it starts and unregisters when it stops (through the sharding
 * lifecycle listener, `ShardedEntityOptions.lifecycle`). A second live registration of
 * one entity, or a second live home of one shard, is a violation: in a simulation the
 * oracle sees every node at once, so it catches what no single node can.
 *
 * ```ts
 * const oracle = new ShardingOracle({ describe: () => world.describe() });
 * ClusterSharding.get(node).init({ typeKey, createBehavior, lifecycle: oracle });
 * // ... run the scenario; a crashed process runs nothing, so tell the oracle:
 * oracle.nodeCrashed("c");
 * oracle.assertNoViolations();
 * ```
 *
 * Nodes are identified by the unique address the shard reports
 * (`protocol://system@host:port#uid`); `label` (default: the host) names them in queries
 * and messages, and `nodeCrashed` accepts either form.
 */
import { ShardkitError } from "../base/errors.js";
import type { ShardingLifecycleListener } from "../cluster/sharding/sharding-lifecycle.js";

/** One live registration. */
interface Live {
  readonly node: string;
  readonly shardId: string;
  readonly sinceMs: number | undefined;
}

/** A double registration (or another inconsistency) the oracle saw. */
export interface ShardingViolation {
  readonly kind: "entity" | "shard" | "entity-outside-shard" | "stale-write";
  readonly typeName: string;
  /** Entity id or shard id. */
  readonly id: string;
  /** The node that registered second. */
  readonly node: string;
  /** The node where it was already live. */
  readonly liveOn: string;
  readonly atMs: number | undefined;
  readonly text: string;
}

export interface ShardingOracleOptions {
  /** Node label for queries and messages (default: the host of the unique address). */
  readonly label?: (node: string) => string;
  /** Current time (e.g. `() => world.now`), stamped on registrations and violations. */
  readonly now?: () => number;
  /** Run description for the error (e.g. `() => world.describe()`, which names the seed). */
  readonly describe?: () => string;
}

/** Thrown by `assertNoViolations`. */
export class ShardingOracleError extends ShardkitError {
  constructor(message: string, violations: readonly ShardingViolation[]) {
    super("SHARDING_ORACLE_VIOLATION", message, { violations });
  }
}

/** See the module comment. Pass it as `lifecycle` to every node's `init`/`start`. */
export class ShardingOracle implements ShardingLifecycleListener {
  private readonly entities = new Map<string, Live>();
  private readonly shards = new Map<string, Live>();
  private readonly found: ShardingViolation[] = [];
  private readonly labelOf: (node: string) => string;
  private readonly nowOf: () => number | undefined;
  /** Entity incarnations started so far (all types). */
  entitiesStarted = 0;
  /** Shard starts so far (all types). */
  shardsStarted = 0;
  /** Shard stops so far (all types; crashes not included). */
  shardsStopped = 0;
  /** Fenced writes the journal accepted so far (`fencedWrite`). */
  fencedWrites = 0;

  constructor(private readonly options: ShardingOracleOptions = {}) {
    this.labelOf = options.label ?? hostOf;
    const now = options.now;
    this.nowOf = now === undefined ? () => undefined : () => now();
  }

  // ---- the listener ------------------------------------------------------------------------

  shardStarted(typeName: string, shardId: string, node: string): void {
    this.shardsStarted++;
    const key = keyOf(typeName, shardId);
    const live = this.shards.get(key);
    if (live !== undefined) this.violation("shard", typeName, shardId, node, live);
    this.shards.set(key, { node, shardId, sinceMs: this.nowOf() });
  }

  shardStopped(typeName: string, shardId: string, node: string): void {
    this.shardsStopped++;
    const key = keyOf(typeName, shardId);
    if (this.shards.get(key)?.node === node) this.shards.delete(key);
  }

  entityStarted(typeName: string, entityId: string, node: string, shardId: string): void {
    this.entitiesStarted++;
    const key = keyOf(typeName, entityId);
    const live = this.entities.get(key);
    if (live !== undefined) this.violation("entity", typeName, entityId, node, live);
    const shard = this.shards.get(keyOf(typeName, shardId));
    if (shard?.node !== node)
      this.violation("entity-outside-shard", typeName, entityId, node, {
        node: shard?.node ?? "nowhere",
        shardId,
        sinceMs: shard?.sinceMs,
      });
    this.entities.set(key, { node, shardId, sinceMs: this.nowOf() });
  }

  entityStopped(typeName: string, entityId: string, node: string, _shardId: string): void {
    const key = keyOf(typeName, entityId);
    if (this.entities.get(key)?.node === node) this.entities.delete(key);
  }

  // ---- scenario facts ----------------------------------------------------------------------

  /**
   * The process of `node` (unique address or label) died without stopping anything:
   * forget its shards and entities. Call it when the scenario kills a node.
   */
  nodeCrashed(node: string): void {
    const on = (l: Live) => l.node === node || this.labelOf(l.node) === node;
    for (const [k, l] of [...this.entities]) if (on(l)) this.entities.delete(k);
    for (const [k, l] of [...this.shards]) if (on(l)) this.shards.delete(k);
  }

  /**
   * Shard leases: the journal accepted a write of `persistenceId` carrying `token` for
   * the fence key `fenceKey` (`<type>/<shardId>`) while the lease store's newest token
   * of that lease was `newestToken`. A write with an older token than the newest is a
   * violation ("no event written by a stale token"): its writer had lost the lease.
   */
  fencedWrite(fenceKey: string, token: number, newestToken: number, persistenceId: string): void {
    this.fencedWrites++;
    if (token >= newestToken) return;
    const atMs = this.nowOf();
    const at = atMs === undefined ? "" : ` at t=${atMs}`;
    this.found.push({
      kind: "stale-write",
      typeName: fenceKey.slice(0, fenceKey.lastIndexOf("/")),
      id: persistenceId,
      node: fenceKey,
      liveOn: fenceKey,
      atMs,
      text: `event of ${persistenceId} written${at} with token ${token} of ${fenceKey} while the newest token was ${newestToken}`,
    });
  }

  // ---- queries -----------------------------------------------------------------------------

  /** Label of the node where the entity is live, if it is. */
  entityHome(typeName: string, entityId: string): string | undefined {
    const l = this.entities.get(keyOf(typeName, entityId));
    return l === undefined ? undefined : this.labelOf(l.node);
  }

  /** Label of the node where the shard is live, if it is. */
  shardHome(typeName: string, shardId: string): string | undefined {
    const l = this.shards.get(keyOf(typeName, shardId));
    return l === undefined ? undefined : this.labelOf(l.node);
  }

  /** Live entities of `typeName`: entity id -> node label. */
  liveEntities(typeName: string): Map<string, string> {
    return this.liveOf(this.entities, typeName);
  }

  /** Live shards of `typeName`: shard id -> node label. */
  liveShards(typeName: string): Map<string, string> {
    return this.liveOf(this.shards, typeName);
  }

  /** Every violation seen so far, in order. */
  get violations(): readonly ShardingViolation[] {
    return this.found;
  }

  /** Throws a ShardingOracleError describing every violation (and the run) if there is one. */
  assertNoViolations(): void {
    if (this.found.length === 0) return;
    const run = this.options.describe?.();
    const shown = this.found.slice(0, VIOLATIONS_SHOWN_MAX).map((v) => `  - ${v.text}`);
    const more = this.found.length - shown.length;
    throw new ShardingOracleError(
      `${run === undefined ? "" : `[sim ${run}] `}sharding oracle: ${this.found.length} violation(s)\n` +
        shown.join("\n") +
        (more > 0 ? `\n  ... and ${more} more` : ""),
      this.found,
    );
  }

  private liveOf(map: Map<string, Live>, typeName: string): Map<string, string> {
    const out = new Map<string, string>();
    const prefix = `${typeName}\u0000`;
    for (const [k, l] of map)
      if (k.startsWith(prefix)) out.set(k.slice(prefix.length), this.labelOf(l.node));
    return out;
  }

  private violation(
    kind: ShardingViolation["kind"],
    typeName: string,
    id: string,
    node: string,
    live: Live,
  ): void {
    const atMs = this.nowOf();
    const at = atMs === undefined ? "" : ` at t=${atMs}`;
    const since = live.sinceMs === undefined ? "" : ` (since t=${live.sinceMs})`;
    const text =
      kind === "entity"
        ? `entity ${typeName}/${id} started on ${this.labelOf(node)}${at} while live on ${this.labelOf(live.node)}${since}`
        : kind === "shard"
          ? `shard ${typeName}/${id} started on ${this.labelOf(node)}${at} while live on ${this.labelOf(live.node)}${since}`
          : `entity ${typeName}/${id} started on ${this.labelOf(node)}${at} but its shard ${live.shardId} is live on ${live.node === "nowhere" ? "no node" : this.labelOf(live.node)}`;
    this.found.push({ kind, typeName, id, node, liveOn: live.node, atMs, text });
  }
}

/** Most violations listed in the error message. */
const VIOLATIONS_SHOWN_MAX = 20;

function keyOf(typeName: string, id: string): string {
  return `${typeName}\u0000${id}`;
}

/** `protocol://system@host:port#uid` -> host (the text itself when it is not that form). */
function hostOf(node: string): string {
  const m = /@([^:/#]+):\d+/.exec(node);
  return m?.[1] ?? node;
}
