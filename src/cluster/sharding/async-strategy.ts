/**
 * User allocation strategies may answer asynchronously (e.g. ask a placement service).
 * The coordinator machine is synchronous, so the driver wraps such a strategy in
 * `adaptAllocationStrategy`, which answers the machine from what the strategy already
 * decided:
 *
 * - allocateShard: a synchronous answer is passed through. A promise makes the adapter
 *   answer "not now" (undefined: the machine keeps the requests waiting) and remember the
 *   shard as pending; when the promise resolves, the answer is kept and `wake()` makes the
 *   driver ask the machine to retry waiting allocations, which then gets the kept answer
 *   (used once; ignored if that region is no longer a candidate, then asked again).
 * - rebalance: a synchronous answer is passed through. A promise is kept pending; its
 *   shards are proposed at the next rebalance tick (at most one call in flight).
 * - A rejected promise or a throw is reported through `onError` and treated as "not now".
 */
import type { RegionView } from "../../core/coordinator/allocation/region-view.js";
import type { CoordinatorAllocationStrategy } from "../../core/coordinator/coordinator-strategy.js";
import type { ShardId } from "../../core/sharding/shard-id.js";
import type { RegionId } from "../../protocol/sharding.js";

type Maybe<T> = T | PromiseLike<T>;

/** An allocation strategy whose answers may be promises (see the module comment). */
export interface ShardAllocationStrategy {
  allocateShard(
    requester: RegionId,
    shard: ShardId,
    regions: readonly RegionView[],
  ): Maybe<RegionId | undefined>;
  rebalance(
    ...args: Parameters<CoordinatorAllocationStrategy["rebalance"]>
  ): Maybe<Iterable<ShardId>>;
}

function isThenable<T>(v: Maybe<T>): v is PromiseLike<T> {
  return typeof (v as { then?: unknown } | null)?.then === "function";
}

type Pending =
  | { readonly state: "pending" }
  | { readonly state: "done"; readonly region?: RegionId };

/** The synchronous strategy the machine gets (see the module comment). */
export function adaptAllocationStrategy(
  strategy: ShardAllocationStrategy,
  wake: () => void,
  onError: (operation: "allocateShard" | "rebalance", error: unknown) => void,
): CoordinatorAllocationStrategy {
  const allocations = new Map<ShardId, Pending>();
  let rebalanceState: { pending: boolean; shards: readonly ShardId[] | undefined } = {
    pending: false,
    shards: undefined,
  };
  return {
    allocateShard(requester, shard, regions) {
      const known = allocations.get(shard);
      if (known?.state === "pending") return undefined;
      if (known?.state === "done") {
        allocations.delete(shard);
        if (known.region !== undefined && regions.some((r) => r.regionId === known.region))
          return known.region;
      }
      let answer: Maybe<RegionId | undefined>;
      try {
        answer = strategy.allocateShard(requester, shard, regions);
      } catch (e) {
        onError("allocateShard", e);
        return undefined;
      }
      if (!isThenable(answer)) return answer;
      allocations.set(shard, { state: "pending" });
      answer.then(
        (region) => {
          allocations.set(shard, { state: "done", region });
          wake();
        },
        (e: unknown) => {
          allocations.delete(shard);
          onError("allocateShard", e);
        },
      );
      return undefined;
    },
    rebalance(regions, inProgress, cluster) {
      if (rebalanceState.shards !== undefined) {
        const shards = rebalanceState.shards.filter((s) => !inProgress.has(s));
        rebalanceState = { pending: false, shards: undefined };
        return shards;
      }
      if (rebalanceState.pending) return [];
      let answer: Maybe<Iterable<ShardId>>;
      try {
        answer = strategy.rebalance(regions, inProgress, cluster);
      } catch (e) {
        onError("rebalance", e);
        return [];
      }
      if (!isThenable(answer)) return answer;
      rebalanceState = { pending: true, shards: undefined };
      answer.then(
        (shards) => {
          rebalanceState = { pending: false, shards: [...shards] };
        },
        (e: unknown) => {
          rebalanceState = { pending: false, shards: undefined };
          onError("rebalance", e);
        },
      );
      return [];
    },
  };
}
