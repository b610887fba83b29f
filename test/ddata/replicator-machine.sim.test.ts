/**
 * Replicator machines on a hostile bus (message loss, duplication, reordering, partitions,
 * crash/restart with and without durable keys), N = 3, 5, 9, over seeds: after the
 * faults stop, every replica converges and removed incarnations are pruned; a majority
 * write followed by a majority read always sees it. Replay a failing seed with the printed
 * command; explore with `npm run sim:ddata`.
 */
import { describe, expect, it } from "vitest";
import { ORSet, PNCounter } from "../../src/core/ddata/index.js";
import { digestOf } from "../../src/core/ddata/replicator-machine.js";
import { DELETED, LOCAL, MAJORITY } from "../../src/core/ddata/replicator-types.js";
import { replayCommand, simSeeds } from "../support/sim-seeds.js";
import { MachineNet } from "./machine-net.js";

const FILE = "test/ddata/replicator-machine.sim.test.ts";
const SEEDS = simSeeds([1, 2, 3]);

function names(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `m${i + 1}`);
}

function convergedAndPruned(net: MachineNet, removed: readonly string[]): boolean {
  const live = [...net.machines.values()];
  for (const key of ["set", "counter"]) {
    const digests = live.map((m) => {
      const env = m.envelope(key);
      return env === undefined ? "" : digestOf(env);
    });
    if (!digests.every((d) => d === digests[0])) return false;
    for (const m of live) {
      const d = m.envelope(key)?.data;
      if (d !== undefined && d !== DELETED && removed.some((r) => d.modifiedByNodes().has(r)))
        return false;
    }
  }
  return true;
}

describe.each(SEEDS)("replicator machines on a hostile bus (seed %i)", (seed) => {
  const replay = () => `replay: ${replayCommand(seed, FILE)}`;

  it.each([
    [3, false],
    [5, true],
    [9, false],
    [5, false],
    [3, true],
  ])(
    "N=%i, durable=%s: updates under loss, duplication, reordering, partitions and crashes converge",
    async (n, durable) => {
      const net = new MachineNet(seed * 1_000 + n, durable);
      const all = names(n);
      for (const x of all) net.start(x);
      net.faults = { loss: 0.2, duplication: 0.2, maxDelayMs: 80 };
      let total = 0;
      let lostBound = 0;
      const added = new Set<string>();
      const crashedIds: string[] = [];
      const pendingLocal = new Map<string, number>();
      for (let step = 0; step < 120; step++) {
        const r = net.rnd.next();
        if (r < 0.05) {
          const cut = all.filter(() => net.rnd.next() < 0.4);
          net.partition(
            cut,
            all.filter((x) => !cut.includes(x)),
          );
        } else if (r < 0.08) net.heal();
        else if (r < 0.1 && net.machines.size === n) {
          const victim = all[Math.floor(net.rnd.next() * n)] as string;
          crashedIds.push(net.idOf(victim));
          // Without durable keys, what the victim did since it last spread may be lost.
          if (!durable) lostBound += pendingLocal.get(victim) ?? 0;
          pendingLocal.set(victim, 0);
          net.crash(victim);
          await net.run(200);
          net.announceRemovals();
          net.start(victim);
        } else {
          const live = [...net.machines.keys()];
          const at = live[Math.floor(net.rnd.next() * live.length)] as string;
          const id = net.idOf(at);
          const e = `x${step}`;
          const k = 1 + Math.floor(net.rnd.next() * 4);
          void net.request(at, (req) => ({
            type: "update",
            req,
            key: "set",
            initial: ORSet.empty<string>(),
            modify: (s) => (s as ORSet<string>).add(id, e),
            consistency: LOCAL,
          }));
          void net.request(at, (req) => ({
            type: "update",
            req,
            key: "counter",
            initial: PNCounter.empty,
            modify: (c) => (c as PNCounter).increment(id, k),
            consistency: LOCAL,
          }));
          added.add(e);
          total += k;
          pendingLocal.set(at, (pendingLocal.get(at) ?? 0) + k);
        }
        await net.run(Math.floor(net.rnd.next() * 60));
      }
      net.heal();
      net.faults = { loss: 0, duplication: 0, maxDelayMs: 5 };
      const ok = await net.run(60_000, () => convergedAndPruned(net, crashedIds));
      if (!ok)
        for (const m of net.machines.values())
          for (const key of ["set", "counter"]) {
            const env = m.envelope(key);
            const d = env?.data;
            console.log(
              m.self,
              key,
              env === undefined ? "-" : digestOf(env).slice(0, 20),
              d === undefined || d === DELETED ? "" : [...d.modifiedByNodes()].join(","),
              JSON.stringify([...(env?.pruning ?? [])]),
            );
          }
      expect(ok, `did not converge (or prune) ${replay()}`).toBe(true);
      const any = [...net.machines.values()][0];
      const counter = any?.envelope("counter")?.data as PNCounter;
      const set = any?.envelope("set")?.data as ORSet<string>;
      if (durable || crashedIds.length === 0) {
        expect(counter.value, replay()).toBe(total);
        expect(set.size, replay()).toBe(added.size);
      } else {
        expect(counter.value, replay()).toBeLessThanOrEqual(total);
        expect(counter.value, replay()).toBeGreaterThanOrEqual(total - lostBound - 4 * 120);
        for (const x of set.elements) expect(added.has(x)).toBe(true);
      }
    },
    60_000,
  );

  it.each([3, 5, 9])(
    "N=%i: a majority write followed by a majority read always sees it (loss, duplication, reordering, partitions)",
    async (n) => {
      const net = new MachineNet(seed * 7_919 + n, false);
      const all = names(n);
      for (const x of all) net.start(x);
      net.faults = { loss: 0.1, duplication: 0.2, maxDelayMs: 50 };
      let checked = 0;
      for (let i = 0; i < 40; i++) {
        if (i % 10 === 0) {
          net.heal();
          const cut = all.filter(() => net.rnd.next() < 0.3);
          net.partition(
            cut,
            all.filter((x) => !cut.includes(x)),
          );
        } else if (i % 10 === 5) net.heal();
        const w = all[Math.floor(net.rnd.next() * n)] as string;
        const rd = all[Math.floor(net.rnd.next() * n)] as string;
        const id = net.idOf(w);
        const e = `w${i}`;
        const written = await net.settle(
          net.request(w, (req) => ({
            type: "update",
            req,
            key: "set",
            initial: ORSet.empty<string>(),
            modify: (s) => (s as ORSet<string>).add(id, e),
            consistency: MAJORITY,
          })),
        );
        if (!written.ok) {
          expect(written.error.code).toBe("DDATA_UPDATE_TIMEOUT");
          continue;
        }
        const read = await net.settle(
          net.request(rd, (req) => ({ type: "get", req, key: "set", consistency: MAJORITY })),
        );
        if (!read.ok) {
          expect(read.error.code).toBe("DDATA_GET_FAILURE");
          continue;
        }
        expect(
          (read.data as ORSet<string>).has(e),
          `${w} wrote ${e}, ${rd} did not read it; ${replay()}`,
        ).toBe(true);
        checked++;
      }
      expect(checked, replay()).toBeGreaterThanOrEqual(10);
    },
    60_000,
  );
});
