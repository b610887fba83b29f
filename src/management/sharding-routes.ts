/**
 * Sharding and singleton routes:
 * - `GET /cluster/shards/{type}`: the regions of an entity type with their shards and
 *   entity counts (regions that did not answer in time under `failed`);
 * - `GET /cluster/shards/{type}/entities/{id}`: where an entity lives;
 * - `GET /cluster/singletons`: the singleton managers on this node and whether the
 *   instance runs here (shard coordinators are singletons too).
 * The type must be started on the node that answers (404 SHARDING_TYPE_NOT_STARTED).
 */
import { ActorCell } from "../actor/actor-cell.js";
import type { ClusterNode } from "../api/cluster-node.js";
import { ClusterSharding, EntityTypeKey } from "../api/cluster-sharding.js";
import type { Router } from "./router.js";

const SINGLETON_MANAGER_PREFIX = "singletonManager-";

/** The node part (`system@host:port`) of a region id. */
function regionNode(region: string): string {
  const slash = region.indexOf("/");
  return slash < 0 ? region : region.slice(0, slash);
}

export function registerShardingRoutes(
  router: Router,
  node: ClusterNode,
  queryTimeoutMs: () => number,
): void {
  const sharding = () => ClusterSharding.get(node);
  router.register("GET", "/cluster/shards", () => ({
    status: 200,
    body: { types: sharding().typeNames() },
  }));
  router.register("GET", "/cluster/shards/{type}", async (req) => {
    const type = req.params.type as string;
    const key = EntityTypeKey<unknown>(type);
    const [stats, handOffs] = await Promise.all([
      sharding().getClusterShardingStats(key, { timeoutMs: queryTimeoutMs() }),
      sharding().getShardHandOffs(key, { timeoutMs: queryTimeoutMs() }),
    ]);
    const regions = stats.regions.map((r) => {
      const shards = Object.entries(r.shards)
        .map(([shardId, entities]) => ({ shardId, entities }))
        .sort((a, b) => a.shardId.localeCompare(b.shardId, "en", { numeric: true }));
      return {
        region: r.region,
        node: regionNode(r.region),
        shardCount: shards.length,
        entityCount: shards.reduce((n, s) => n + s.entities, 0),
        shards,
      };
    });
    return {
      status: 200,
      body: {
        type,
        regions,
        shardCount: regions.reduce((n, r) => n + r.shardCount, 0),
        entityCount: regions.reduce((n, r) => n + r.entityCount, 0),
        failed: stats.failed,
        handOffs: handOffs.map((h) => ({ ...h, fromNode: regionNode(h.fromRegion) })),
      },
    };
  });
  router.register("GET", "/cluster/shards/{type}/entities/{id}", async (req) => {
    const type = req.params.type as string;
    const loc = await sharding().getEntityLocation(
      EntityTypeKey<unknown>(type),
      req.params.id as string,
      { timeoutMs: queryTimeoutMs() },
    );
    return {
      status: 200,
      body: {
        type,
        entityId: loc.entityId,
        shardId: loc.shardId,
        region: loc.region ?? null,
        node: loc.region === undefined ? null : regionNode(loc.region),
        alive: loc.alive,
      },
    };
  });
  router.register("GET", "/cluster/singletons", () => {
    const singletons = node.system.core.systemGuardian.children
      .filter((ref): ref is ActorCell<unknown> => ref instanceof ActorCell)
      .filter((cell) => (cell.path.elements.at(-1) ?? "").startsWith(SINGLETON_MANAGER_PREFIX))
      .map((cell) => ({
        name: (cell.path.elements.at(-1) as string).slice(SINGLETON_MANAGER_PREFIX.length),
        runningHere: cell.child("singleton") !== undefined,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
    return { status: 200, body: { node: node.address, singletons } };
  });
}
