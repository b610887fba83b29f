/**
 * Issue 13, 6b: after a partition, the entities of the downed minority answer again one
 * removal margin after the survivors removed the minority, with no further wait. Five
 * members, the coordinator on the oldest (a); the partition {a, b} | {c, d, e} downs a
 * and b, and heals later. The new coordinator (regions mode) starts on d once the
 * singleton's margin has passed; before the fix its regions found it only at their
 * proxies' next identification tick (up to singletonIdentificationIntervalMs later), and
 * its recovery waited for them. Checked: the entity that ran on a answers on the
 * majority no earlier than the margin after the removal (the minority may run it until
 * then; the oracle sees no second incarnation) and less than 500 ms after the margin.
 */
import { describe, expect, it } from "vitest";
import type { ActorRef } from "../../src/actor/index.js";
import { ClusterSharding } from "../../src/api/index.js";
import { simSeeds } from "../support/sim-seeds.js";
import { CounterKey, simSharding, startCluster, totalOf } from "./sim-sharding.js";

/** stableAfterMs 2 000 + the down-all-when-unstable floor 4 000 (shardRemovalMarginOf). */
const MARGIN_MS = 6_000;

describe.each(simSeeds([1, 2, 3]))("partition heal (seed %i)", (seed) => {
  it("entities of the downed minority answer one margin after its removal, without a regions-recovery wait", async () => {
    const { world, network, oracle } = simSharding(seed);
    const names = ["a", "b", "c", "d", "e"];
    const nodes = await startCluster(world, network, oracle, names);
    const c = nodes[2];
    if (c === undefined) throw new Error("no node c");
    let target: string | undefined;
    for (let i = 0; i < 40 && target === undefined; i++)
      if ((await totalOf(world, c, `e${i}`)).node === "a") target = `e${i}`;
    expect(target, `[sim ${world.describe()}] an entity on a`).toBeDefined();
    const id = target as string;

    let removedAt: number | undefined;
    c.cluster.subscribe((e) => {
      if (e.type === "member-removed" && e.member.uniqueAddress.address.host === "a")
        removedAt ??= world.now;
    });
    const cut = world.now;
    network.partition(["a", "b"], ["c", "d", "e"]);
    let answeredAt: number | undefined;
    let healed = false;
    for (let i = 0; i < 200 && answeredAt === undefined; i++) {
      if (!healed && world.now - cut > 6_000) {
        network.heal();
        healed = true;
      }
      let got: { node: string } | null | undefined;
      ClusterSharding.get(c)
        .entityRefFor(CounterKey, id)
        .ask((replyTo: ActorRef<{ node: string; total: number }>) => ({ type: "get", replyTo }), {
          timeoutMs: 100,
        })
        .then(
          (a: { node: string; total: number }) => {
            got = a;
          },
          () => {
            got = null;
          },
        );
      await world.runUntil(() => got !== undefined, 1_000);
      if (got) {
        expect(got.node).not.toBe("a");
        answeredAt = world.now;
      }
    }
    expect(removedAt, `[sim ${world.describe()}] a removed`).toBeDefined();
    expect(answeredAt, `[sim ${world.describe()}] ${id} answers again`).toBeDefined();
    const afterRemoval = (answeredAt as number) - (removedAt as number);
    expect(afterRemoval, `[sim ${world.describe()}] not before the margin`).toBeGreaterThanOrEqual(
      MARGIN_MS - 200,
    );
    expect(afterRemoval, `[sim ${world.describe()}] no wait after the margin`).toBeLessThan(
      MARGIN_MS + 500,
    );
    expect(oracle.violations).toEqual([]);
  }, 60_000);
});
