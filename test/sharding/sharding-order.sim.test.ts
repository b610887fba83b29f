/**
 * S21: delivery order checked from every side. Every member sends — including members
 * that are neither the coordinator's nor the old or new home of the shard being moved —
 * while shards move: a member joins (rebalance moves shards to it) and a member leaves
 * gracefully (its shards are handed off), in one variant the coordinator's own member
 * (the coordinator moves too). Links have jitter, so a message a third member forwarded
 * to the old home can be slower than that member's BeginHandOffAck travelling to the
 * coordinator and the coordinator's HandOff to the old home: only the ack's relay through
 * the old home (docs/sharding-region.md) keeps such a message ahead of the hand-off.
 *
 * Checked for every sender: each message delivered exactly once, and per (sender,
 * entity) in send order; the registry oracle stays clean. The run also proves it
 * covered the case: some entity moved while a member that was neither its homes nor the
 * coordinator's sent to it.
 *
 * More seeds: `npm run sim -- --scenario sharding-order --seeds 50`.
 */
import { describe, expect, it } from "vitest";
import { Behaviors } from "../../src/actor/index.js";
import { type ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { replayCommand, simSeeds } from "../support/sim-seeds.js";
import { allUp, newOracle, startNode } from "./sim-sharding.js";

const FILE = "test/sharding/sharding-order.sim.test.ts";
const ENTITIES = 24;
/** Every TICK_MS each live sender sends one message: something is always in flight. */
const TICK_MS = 20;
/**
 * Links between members are slow (`SLOW_MS`), links to and from the coordinator's member
 * fast (`FAST_MS`), all with a little jitter: a message a third member forwarded to the
 * old home is slower than that member's ack to the coordinator plus the coordinator's
 * HandOff, unless the ack travels behind it.
 */
const SLOW_MS = 25;
const FAST_MS = 1;
const JITTER_MS = 5;
/**
 * S21c: jitter far above the latency, so that two members' forwards to the new home of a
 * moved shard arrive in any order. Before the old home kept feeding its running shard
 * until HandOff (it buffered what other members had forwarded before their acks, and
 * forwarded that to the new home in a race with their later messages), every seed of
 * 1-6 broke the order here.
 */
const HEAVY_JITTER_MS = 200;

type Seq = { type: "seq"; from: string; n: number };
const SeqKey = EntityTypeKey<Seq>("Seq");

/** What the entities saw, kept outside them (entities move and restart). */
class Ledger {
  readonly sent = new Map<string, { entity: string }>();
  readonly delivered = new Map<string, number>();
  /** Last n delivered per `sender/entity`. */
  private readonly last = new Map<string, number>();
  readonly disorder: string[] = [];
  /** Hosts each entity ran on. */
  readonly hosts = new Map<string, Set<string>>();
  /** Senders of each entity. */
  readonly senders = new Map<string, Set<string>>();

  onSend(from: string, n: number, entity: string): void {
    this.sent.set(`${from}:${n}`, { entity });
    const s = this.senders.get(entity) ?? new Set<string>();
    s.add(from);
    this.senders.set(entity, s);
  }

  onDeliver(host: string, entity: string, m: Seq): void {
    const key = `${m.from}:${m.n}`;
    this.delivered.set(key, (this.delivered.get(key) ?? 0) + 1);
    const pair = `${m.from}/${entity}`;
    const prev = this.last.get(pair) ?? -1;
    if (prev > m.n) this.disorder.push(`${pair}: ${m.n} after ${prev} on ${host}`);
    this.last.set(pair, Math.max(prev, m.n));
    const h = this.hosts.get(entity) ?? new Set<string>();
    h.add(host);
    this.hosts.set(entity, h);
  }
}

async function run(
  seed: number,
  names: readonly string[],
  joiner: string,
  leaver: string,
  jitterMs = JITTER_MS,
) {
  const world = new SimWorld({ seed });
  const network = new SimNetwork(world, { link: { latencyMs: SLOW_MS, jitterMs } });
  const coordinatorMember = names[0] as string;
  for (const n of names)
    if (n !== coordinatorMember) {
      network.configureLink(n, coordinatorMember, { latencyMs: FAST_MS });
      network.configureLink(coordinatorMember, n, { latencyMs: FAST_MS });
    }
  const oracle = newOracle(world);
  const ledger = new Ledger();
  const nodes = new Map<string, ClusterNode>();
  const seeds = names.filter((n) => n !== joiner).map((n) => `${n}:2552`);
  const start = async (name: string) => {
    const node = await startNode(world, network, name, seeds, oracle, { sharding: false });
    ClusterSharding.get(node).init({
      typeKey: SeqKey,
      numberOfShards: 12,
      lifecycle: oracle,
      settings: { coordinator: { rebalanceIntervalMs: 1_000 } },
      createBehavior: ({ entityId }) =>
        Behaviors.receiveMessage<Seq>((m) => {
          ledger.onDeliver(name, entityId, m);
        }),
    });
    nodes.set(name, node);
  };
  const where = () => `[sim ${world.describe()}] replay: ${replayCommand(seed, FILE)}`;

  for (const n of names) if (n !== joiner) await start(n);
  const formed = await world.runUntil(
    () => [...nodes.values()].every((n) => allUp(n, names.length - 1)),
    30_000,
  );
  expect(formed, `${where()}: cluster did not form`).toBe(true);
  await world.advance(3_000);

  const senders = new Set<string>(nodes.keys());
  const counters = new Map<string, number>();
  const tick = async () => {
    for (const from of senders) {
      const node = nodes.get(from) as ClusterNode;
      const n = counters.get(from) ?? 0;
      counters.set(from, n + 1);
      const entity = `e-${(n * 7 + from.charCodeAt(0)) % ENTITIES}`;
      ledger.onSend(from, n, entity);
      ClusterSharding.get(node).entityRefFor(SeqKey, entity).tell({ type: "seq", from, n });
    }
    await world.advance(TICK_MS);
  };

  for (let t = 0; t < 150; t++) await tick();
  // a member joins: rebalances move shards to it while everybody sends
  await start(joiner);
  senders.add(joiner);
  for (let t = 0; t < 400; t++) await tick();
  // a member leaves gracefully: its shards are handed off while everybody else sends
  senders.delete(leaver);
  let left = false;
  void (nodes.get(leaver) as ClusterNode).shutdown("user").then(() => {
    left = true;
  });
  for (let t = 0; t < 400; t++) await tick();
  expect(left, `${where()}: ${leaver} did not leave`).toBe(true);
  await world.advance(10_000);

  const missing = [...ledger.sent.keys()].filter((k) => !ledger.delivered.has(k));
  const duplicated = [...ledger.delivered].filter(([, c]) => c > 1).map(([k]) => k);
  expect(missing.slice(0, 10), `${where()}: ${missing.length} message(s) lost`).toEqual([]);
  expect(duplicated.slice(0, 10), `${where()}: delivered twice`).toEqual([]);
  expect(ledger.disorder.slice(0, 10), `${where()}: order per sender broken`).toEqual([]);
  oracle.assertNoViolations();

  // Coverage: some entity moved while a third member (neither one of its homes nor the
  // coordinator's member at the start, `names[0]`) sent to it.
  const thirdParty = [...ledger.hosts].filter(([entity, hosts]) => {
    if (hosts.size < 2) return false;
    const from = ledger.senders.get(entity) ?? new Set<string>();
    return [...from].some((s) => !hosts.has(s) && s !== names[0]);
  });
  expect(thirdParty.length, `${where()}: no moved entity had a third-party sender`).toBeGreaterThan(
    0,
  );
  return { sent: ledger.sent.size, moved: thirdParty.length };
}

describe.each(simSeeds([1, 2]))("order per sender from every member (seed %i)", (seed) => {
  it("S21: senders on every member while a member joins and another leaves: exactly once, in order per sender", async () => {
    const r = await run(seed, ["a", "b", "c", "d"], "d", "c");
    expect(r.sent).toBeGreaterThan(1_000);
  }, 60_000);

  it("S21b: the coordinator's member leaves (the coordinator moves) while the others send: exactly once, in order per sender", async () => {
    const r = await run(seed, ["a", "b", "c", "d"], "d", "a");
    expect(r.sent).toBeGreaterThan(1_000);
  }, 60_000);

  it("S21c: S21 with link jitter of 200 ms: exactly once, in order per sender", async () => {
    const r = await run(seed, ["a", "b", "c", "d"], "d", "c", HEAVY_JITTER_MS);
    expect(r.sent).toBeGreaterThan(1_000);
  }, 60_000);
});
