/**
 * S22: the passivation race end to end. Few shards, many entities (loaded shards); every
 * member sends to them continuously while entities keep passivating: on `passivate` an
 * entity asks its shard to passivate it with a stop message on which it lingers a while
 * before stopping, so messages keep arriving for it during the passivation. The shard
 * must buffer those and deliver them to the next incarnation — started only once the
 * previous one has terminated.
 *
 * Checked: never two live incarnations (the registry oracle), every message delivered
 * exactly once and in order per sender, and the race really happened (messages sent
 * while their entity was passivating reached a later incarnation).
 *
 * The default run takes a few seeds; sweep more with
 *   npm run sim -- --scenario sharding-passivation --seeds 200
 */
import { describe, expect, it } from "vitest";
import { Behaviors } from "../../src/actor/index.js";
import { type ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { replayCommand, simSeeds } from "../support/sim-seeds.js";
import { simSharding, startCluster } from "./sim-sharding.js";

const FILE = "test/sharding/sharding-passivation.sim.test.ts";
const NAMES = ["a", "b", "c"] as const;
const ENTITIES = 16;
/** Few shards: each one is busy with many entities. */
const SHARDS = 3;
const TICK_MS = 5;
const TICKS = 200;
/** How long an entity lingers after its passivation stop message, ms. */
const LINGER_MS = 30;

type Msg =
  | { type: "seq"; from: string; n: number }
  | { type: "passivate" }
  | { type: "linger-stop" }
  | { type: "stop-now" };
const Key = EntityTypeKey<Msg>("Passivating");

const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

describe.each(simSeeds(SEEDS))("passivation race (seed %i)", (seed) => {
  it("S22: messages arriving while their entity passivates on a loaded shard reach the next incarnation, once and in order", async () => {
    const { world, network, oracle } = simSharding(seed);
    const rnd = world.random;
    const delivered = new Map<string, number>();
    const last = new Map<string, number>();
    const disorder: string[] = [];
    /** Entities passivating now (stop message received, not yet stopped). */
    const passivating = new Set<string>();
    /** Messages sent while their entity was passivating: key -> that incarnation. */
    const sentDuring = new Map<string, number>();
    const deliveredToLater = new Set<string>();
    const incarnationOf = new Map<string, number>();
    let passivations = 0;

    const nodes = await startCluster(world, network, oracle, NAMES, undefined, () => ({
      sharding: false,
    }));
    for (const [i, node] of nodes.entries())
      ClusterSharding.get(node).init({
        typeKey: Key,
        numberOfShards: SHARDS,
        lifecycle: oracle,
        createBehavior: ({ entityId, passivate }) =>
          Behaviors.setup<Msg>(() => {
            const inc = (incarnationOf.get(entityId) ?? 0) + 1;
            incarnationOf.set(entityId, inc);
            return Behaviors.receive<Msg>(
              (ctx, m) => {
                if (m.type === "seq") {
                  const key = `${m.from}:${m.n}`;
                  delivered.set(key, (delivered.get(key) ?? 0) + 1);
                  if ((sentDuring.get(key) ?? inc) < inc) deliveredToLater.add(key);
                  const pair = `${m.from}/${entityId}`;
                  const prev = last.get(pair) ?? -1;
                  if (prev > m.n) disorder.push(`${pair}: ${m.n} after ${prev} on ${NAMES[i]}`);
                  last.set(pair, Math.max(prev, m.n));
                } else if (m.type === "passivate") {
                  passivations++;
                  passivate({ type: "linger-stop" });
                } else if (m.type === "linger-stop") {
                  passivating.add(entityId);
                  ctx.timers.startSingleTimer("stop", { type: "stop-now" }, LINGER_MS);
                } else return Behaviors.stopped;
                return undefined;
              },
              (_c, signal) => {
                if (signal.type === "PostStop") passivating.delete(entityId);
                return undefined;
              },
            );
          }),
      });
    await world.advance(2_000);

    const counters = new Map<string, number>();
    const sent: { key: string; entity: string }[] = [];
    for (let t = 0; t < TICKS; t++) {
      for (const [i, node] of nodes.entries()) {
        const from = NAMES[i] as string;
        const n = counters.get(from) ?? 0;
        counters.set(from, n + 1);
        const entity = `p-${rnd.nextInt(ENTITIES)}`;
        const key = `${from}:${n}`;
        if (passivating.has(entity)) sentDuring.set(key, incarnationOf.get(entity) ?? 0);
        sent.push({ key, entity });
        ClusterSharding.get(node).entityRefFor(Key, entity).tell({ type: "seq", from, n });
      }
      if (rnd.nextInt(3) === 0) {
        const via = nodes[rnd.nextInt(nodes.length)] as ClusterNode;
        ClusterSharding.get(via)
          .entityRefFor(Key, `p-${rnd.nextInt(ENTITIES)}`)
          .tell({ type: "passivate" });
      }
      await world.advance(TICK_MS);
    }
    await world.advance(5_000);

    const where = `[sim ${world.describe()}] replay: ${replayCommand(seed, FILE)}`;
    const missing = sent.filter((s) => !delivered.has(s.key)).map((s) => s.key);
    const twice = [...delivered].filter(([, c]) => c > 1).map(([k]) => k);
    expect(missing.slice(0, 10), `${where}: ${missing.length} lost`).toEqual([]);
    expect(twice.slice(0, 10), `${where}: delivered twice`).toEqual([]);
    expect(disorder.slice(0, 10), `${where}: order per sender`).toEqual([]);
    try {
      oracle.assertNoViolations();
    } catch (e) {
      throw new Error(`${String(e)}\n${where}`);
    }
    // the race happened: passivations, restarts, and messages sent during a passivation
    // that a later incarnation received
    expect(passivations, where).toBeGreaterThan(30);
    expect(
      [...incarnationOf.values()].some((k) => k > 1),
      where,
    ).toBe(true);
    expect(deliveredToLater.size, `${where}: no message arrived during a passivation`).toBe(
      sentDuring.size,
    );
    expect(sentDuring.size, `${where}: no message arrived during a passivation`).toBeGreaterThan(5);
  }, 30_000);
});
