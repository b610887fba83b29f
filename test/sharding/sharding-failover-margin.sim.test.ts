/**
 * Fail-over timing in the simulator (issue 13, 6a): the removal margin is counted once,
 * from the removal. The member that runs the coordinator (the oldest) and some entities
 * is killed; the coordinator singleton moves only after the removal margin, and the new
 * coordinator (persistent mode: it knows the dead region from the journal) must not wait
 * a second margin for that region's shards. Checked on a survivor: an entity of the dead
 * member answers again no earlier than one margin after the survivor saw the removal
 * (the downed side may run it until then) and well before two.
 */
import { describe, expect, it } from "vitest";
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { MemorySnapshotStore } from "../../src/persistence/memory/memory-snapshot-store.js";
import type { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import type { ShardingOracle } from "../../src/testing/index.js";
import { FAST } from "../cluster/sim-cluster.js";
import { simSeeds } from "../support/sim-seeds.js";
import { allUp, crashNode, simSharding } from "./sim-sharding.js";

type Where = { type: "where"; replyTo: ActorRef<string> };
const Key = EntityTypeKey<Where>("Where");
/** stableAfterMs 2 000 + the down-all-when-unstable floor 4 000 (shardRemovalMarginOf). */
const MARGIN_MS = 6_000;

async function start(
  world: SimWorld,
  network: SimNetwork,
  oracle: ShardingOracle,
  name: string,
  seeds: string[],
  journal: MemoryJournal,
  snapshots: MemorySnapshotStore,
): Promise<ClusterNode> {
  let node: ClusterNode | undefined;
  ClusterNode.start({
    systemName: "shop",
    host: name,
    port: 2552,
    seedNodes: seeds,
    settings: FAST,
    failureDetector: { acceptableHeartbeatPauseMs: 1_000, firstHeartbeatEstimateMs: 200 },
    downing: { stableAfterMs: 2_000 },
    runtime: world.createRuntime(name),
    transport: network.transportFor(name),
  }).then((n) => {
    node = n;
  });
  await world.runUntil(() => node !== undefined, 5_000);
  const n = node as ClusterNode;
  ClusterSharding.get(n).init({
    typeKey: Key,
    numberOfShards: 10,
    lifecycle: oracle,
    persistence: { journal, snapshots },
    createBehavior: () => Behaviors.receiveMessage<Where>((m) => void m.replyTo.tell(name)),
  });
  return n;
}

/** Asks `id` where it runs; undefined without an answer within `timeoutMs`. */
async function where(world: SimWorld, node: ClusterNode, id: string, timeoutMs = 1_000) {
  let answer: string | undefined;
  let failed = false;
  ClusterSharding.get(node)
    .entityRefFor(Key, id)
    .ask((replyTo: ActorRef<string>) => ({ type: "where", replyTo }), { timeoutMs })
    .then(
      (a) => {
        answer = a;
      },
      () => {
        failed = true;
      },
    );
  await world.runUntil(() => answer !== undefined || failed, timeoutMs + 1_000);
  return answer;
}

describe.each(simSeeds([1, 2, 3]))("removal margin counted once (seed %i)", (seed) => {
  it("the coordinator's member is killed: its entities answer one margin after its removal, not two", async () => {
    const { world, network, oracle } = simSharding(seed);
    const journal = new MemoryJournal();
    const snapshots = new MemorySnapshotStore();
    const names = ["a", "b", "c"];
    const seeds = names.map((n) => `${n}:2552`);
    const nodes: ClusterNode[] = [];
    for (const n of names)
      nodes.push(await start(world, network, oracle, n, seeds, journal, snapshots));
    expect(await world.runUntil(() => nodes.every((n) => allUp(n, 3)), 30_000)).toBe(true);
    await world.advance(3_000);
    const b = nodes[1] as ClusterNode;
    // Entities on every member; find one that runs on a (the oldest: the coordinator's).
    const onA: string[] = [];
    for (let i = 0; i < 30 && onA.length === 0; i++) {
      const id = `e${i}`;
      if ((await where(world, b, id, 5_000)) === "a") onA.push(id);
    }
    expect(onA.length, `[sim ${world.describe()}] an entity on a`).toBe(1);
    const id = onA[0] as string;

    let removedAt: number | undefined;
    b.cluster.subscribe((e) => {
      if (e.type === "member-removed" && e.member.uniqueAddress.address.host === "a")
        removedAt ??= world.now;
    });
    await crashNode(world, network, oracle, "a");
    expect(await world.runUntil(() => removedAt !== undefined, 30_000)).toBe(true);
    let answeredAt: number | undefined;
    for (let i = 0; i < 40 && answeredAt === undefined; i++) {
      const at = await where(world, b, id, 500);
      if (at !== undefined) {
        expect(at).not.toBe("a");
        answeredAt = world.now;
      }
    }
    expect(answeredAt, `[sim ${world.describe()}] ${id} answers again`).toBeDefined();
    const afterRemoval = (answeredAt as number) - (removedAt as number);
    expect(afterRemoval, `[sim ${world.describe()}] not before one margin`).toBeGreaterThanOrEqual(
      MARGIN_MS - 200,
    );
    expect(afterRemoval, `[sim ${world.describe()}] one margin, not two`).toBeLessThan(
      MARGIN_MS + 2_500,
    );
    expect(oracle.violations).toEqual([]);
  }, 60_000);
});
