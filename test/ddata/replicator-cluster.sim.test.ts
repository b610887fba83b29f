/**
 * The replicator on full simulated cluster nodes (remoting, membership, SBR), N = 3, 5, 9:
 * random updates on every member under partitions, connection loss and crash/restart
 * (with and without durable keys) converge once healed; a majority write followed by a
 * majority read always sees it. A failure prints its replay command.
 */
import { describe, expect, it } from "vitest";
import { ddataKey } from "../../src/cluster/ddata/index.js";
import { ORSet, PNCounter } from "../../src/core/ddata/index.js";
import {
  GetFailureError,
  MAJORITY,
  UpdateTimeoutError,
} from "../../src/core/ddata/replicator-types.js";
import { replayCommand, simSeeds } from "../support/sim-seeds.js";
import { DDataSim } from "./ddata-sim.js";

const FILE = "test/ddata/replicator-cluster.sim.test.ts";
const SET = ddataKey<ORSet<string>>("set");
const COUNTER = ddataKey<PNCounter>("counter");

function replay(seed: number, sim: DDataSim): string {
  return `[sim ${sim.describe()}] replay: ${replayCommand(seed, FILE)}`;
}

/**
 * Every live replica holds the same set and the same counter *state*: each node's
 * increments and decrements, not only the same sum (two replicas that each miss a
 * different node's latest increment can show equal sums while not converged).
 */
function converged(sim: DDataSim, names: readonly string[]): boolean {
  const perNode = (m: ReadonlyMap<string, number> | undefined) =>
    [...(m ?? new Map<string, number>())].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  const views = names.map((n) => {
    const s = sim.rep(n);
    const c = peek(s, COUNTER.id) as PNCounter | undefined;
    return JSON.stringify([
      [...((peek(s, SET.id) as ORSet<string> | undefined)?.elements ?? [])].sort(),
      perNode(c?.increments.state),
      perNode(c?.decrements.state),
    ]);
  });
  return views.every((v) => v === views[0]);
}

function peek(r: ReturnType<DDataSim["rep"]>, key: string): unknown {
  const env = (
    r as unknown as { machine: { envelope(k: string): { data: unknown } | undefined } }
  ).machine.envelope(key);
  return env?.data;
}

async function randomUpdates(
  sim: DDataSim,
  names: readonly string[],
  count: number,
  totals: Map<string, number>,
): Promise<Set<string>> {
  const rnd = sim.h.world.random;
  const added = new Set<string>();
  for (let i = 0; i < count; i++) {
    const n = names[rnd.nextInt(names.length)] as string;
    const r = sim.rep(n);
    const e = `e${sim.seed}-${i}`;
    const k = 1 + rnd.nextInt(5);
    void r.update(SET, ORSet.empty<string>(), (s) => s.add(r.selfNode, e));
    void r.update(COUNTER, PNCounter.empty, (c) => c.increment(r.selfNode, k));
    added.add(e);
    totals.set(n, (totals.get(n) ?? 0) + k);
    await sim.h.world.advance(rnd.nextInt(40));
  }
  return added;
}

const sum = (m: Map<string, number>, names?: readonly string[]) =>
  [...m].filter(([n]) => names === undefined || names.includes(n)).reduce((a, [, v]) => a + v, 0);

describe.each(simSeeds([1, 2, 3, 7]))(
  "ddata replicator in the cluster simulator (seed %i)",
  (seed) => {
    it.each([3, 5, 9])(
      "N=%i: updates everywhere under partitions and connection loss converge after heal",
      async (n) => {
        const sim = new DDataSim(seed, n, { stableAfterMs: 600_000 });
        await sim.start();
        const rnd = sim.h.world.random;
        const totals = new Map<string, number>();
        const cut = sim.names.filter(() => rnd.next() < 0.4);
        sim.h.network.partition(
          cut,
          sim.names.filter((x) => !cut.includes(x)),
        );
        const added = await randomUpdates(sim, sim.names, 40, totals);
        sim.h.network.heal();
        const a = sim.names[0] as string;
        const b = sim.names[1] as string;
        sim.h.network.configureLink(a, b, { lossProbability: 0.05 });
        sim.h.network.configureLink(b, a, { lossProbability: 0.05 });
        for (const e of await randomUpdates(sim, sim.names, 40, totals)) added.add(e);
        sim.h.network.configureLink(a, b, { lossProbability: 0 });
        sim.h.network.configureLink(b, a, { lossProbability: 0 });
        await sim.h
          .until(() => converged(sim, sim.names), 60_000)
          .catch((e) => {
            throw new Error(`${String(e)} ${replay(seed, sim)}`);
          });
        const set = peek(sim.rep(a), SET.id) as ORSet<string>;
        expect([...set.elements].sort(), replay(seed, sim)).toEqual([...added].sort());
        expect((peek(sim.rep(a), COUNTER.id) as PNCounter).value, replay(seed, sim)).toBe(
          sum(totals),
        );
      },
      120_000,
    );

    it("N=5: a majority write followed by a majority read always sees it, under partitions", async () => {
      const sim = new DDataSim(seed, 5, { stableAfterMs: 600_000 });
      await sim.start();
      const rnd = sim.h.world.random;
      let checked = 0;
      for (let i = 0; i < 30; i++) {
        if (i % 6 === 0) {
          sim.h.network.heal();
          const cut = sim.names.filter(() => rnd.next() < 0.4);
          sim.h.network.partition(
            cut,
            sim.names.filter((x) => !cut.includes(x)),
          );
        }
        const w = sim.names[rnd.nextInt(5)] as string;
        const rd = sim.names[rnd.nextInt(5)] as string;
        const e = `w${i}`;
        const wr = sim.rep(w);
        const written = await sim.settle(
          wr.update(SET, ORSet.empty<string>(), (s) => s.add(wr.selfNode, e), MAJORITY, {
            timeoutMs: 1_000,
          }),
        );
        if (!written.ok) {
          expect(written.error, replay(seed, sim)).toBeInstanceOf(UpdateTimeoutError);
          continue;
        }
        const read = await sim.settle(sim.rep(rd).get(SET, MAJORITY, { timeoutMs: 1_000 }));
        if (!read.ok) {
          expect(read.error, replay(seed, sim)).toBeInstanceOf(GetFailureError);
          continue;
        }
        expect(
          read.value?.has(e),
          `${w} wrote ${e}, ${rd} read without it ${replay(seed, sim)}`,
        ).toBe(true);
        checked++;
      }
      expect(checked, replay(seed, sim)).toBeGreaterThanOrEqual(5);
    }, 120_000);

    it.each([false, true])(
      "N=5: crash and restart (durable keys: %s): values converge, removed incarnation pruned",
      async (durable) => {
        const sim = new DDataSim(seed, 5, { durable });
        await sim.start();
        const totals = new Map<string, number>();
        const added = await randomUpdates(sim, sim.names, 20, totals);
        const victim = "n4";
        const old = sim.rep(victim).selfNode;
        await sim.h.world.advance(500);
        sim.crash(victim);
        const rest = sim.names.filter((x) => x !== victim);
        for (const e of await randomUpdates(sim, rest, 20, totals)) added.add(e);
        await sim.h.until(
          () => rest.every((x) => sim.h.members.get(x)?.cluster.state.members.length === 4),
          60_000,
        );
        await sim.startMember(victim);
        for (const e of await randomUpdates(sim, sim.names, 10, totals)) added.add(e);
        await sim.h
          .until(
            () =>
              sim.allUp(sim.names) &&
              converged(sim, sim.names) &&
              sim.names.every(
                (x) => !(peek(sim.rep(x), COUNTER.id) as PNCounter).modifiedByNodes().has(old),
              ),
            90_000,
          )
          .catch((e) => {
            throw new Error(`${String(e)} ${replay(seed, sim)}`);
          });
        const value = (peek(sim.rep("n1"), COUNTER.id) as PNCounter).value;
        // Everything the victim did had reached the others (500 ms of delta propagation and gossip).
        expect(value, replay(seed, sim)).toBe(sum(totals));
        const set = peek(sim.rep("n1"), SET.id) as ORSet<string>;
        expect([...set.elements].sort(), replay(seed, sim)).toEqual([...added].sort());
        if (durable) expect(sim.stores.get(victim)?.entries.has(SET.id)).toBe(true);
      },
      180_000,
    );
  },
);
