/**
 * Slow members in the simulator (docs/cluster.md "Self-aware failure detection" and
 * "Formation and boot storms"; issue 21): a member's event loop stalls (the harness's
 * `stall`: no callback runs and nothing is read for the duration), on one member, on
 * several, on all at once for up to 10 s; sustained overload (every member stalling
 * again and again); and a boot storm of many members started at the same instant whose
 * start-up is slow. With the default failure-detector and resolver timings nobody that
 * was only slow is downed, and a stalled member never marks others unreachable on the
 * evidence of its own stall. A failure names its seed.
 */
import { describe, expect, it } from "vitest";
import { simSeeds } from "../support/sim-seeds.js";
import type { SimMember } from "./sim-cluster.js";
import { MeteredSimCluster, nodeNames } from "./sim-gossip-meter.js";

const SEEDS = simSeeds([1, 2, 3]);
/** Sustained overload: each member stalls stallMs, then runs gapMs, again and again. */
interface Overload {
  readonly stallMinMs: number;
  readonly stallMaxMs: number;
  readonly gapMinMs: number;
  readonly gapSpreadMs: number;
}
const MILD: Overload = { stallMinMs: 500, stallMaxMs: 5_000, gapMinMs: 500, gapSpreadMs: 2_500 };
/** The code before issue 21 downed every member under this one (seeds 1-3). */
const HARSH: Overload = { stallMinMs: 2_000, stallMaxMs: 8_000, gapMinMs: 200, gapSpreadMs: 1_000 };

async function sustainedOverload(seed: number, o: Overload): Promise<void> {
  const [h, names, w] = await formed(seed, 10);
  const end = h.world.now + 180_000;
  const nextStall = new Map(names.map((n) => [n, h.world.now + h.world.random.next() * 3_000]));
  while (h.world.now < end) {
    for (const n of names) {
      if ((nextStall.get(n) ?? 0) > h.world.now) continue;
      const ms = o.stallMinMs + h.world.random.next() * (o.stallMaxMs - o.stallMinMs);
      h.stall(member(h, n), ms);
      nextStall.set(n, h.world.now + ms + o.gapMinMs + h.world.random.next() * o.gapSpreadMs);
    }
    await h.world.advance(100);
  }
  const d = `[sim ${h.world.describe()}]`;
  expect(w.downed, d).toEqual([]);
  expect(noneRemoved(h, names), d).toEqual([]);
  await h.until(
    h.throttled(() => h.allUpAndConverged(names), 100),
    60_000,
  );
}
/** Default timings everywhere (the harness's fast ones are overridden). */
const DEFAULTS = { settings: {}, failureDetector: {}, downing: {} } as const;

interface Watch {
  downed: string[];
  /** "observer->subject" unreachability records made by a member while it was stalled
   * or within one heartbeat round after. */
  unreachableEvents: number;
  logs: string[];
}

async function formed(seed: number, size: number): Promise<[MeteredSimCluster, string[], Watch]> {
  const logs: string[] = [];
  const h = new MeteredSimCluster(seed, {
    logLevel: "warn",
    write: (line) => logs.push(line),
  });
  const names = nodeNames(size);
  const seedNodes = names.slice(0, 3).map((n) => `${n}:2552`);
  for (const n of names) await h.member(n, { seedNodes, ...DEFAULTS });
  await h.until(
    h.throttled(() => h.allUpAndConverged(names), 100),
    120_000,
  );
  const w: Watch = { downed: [], unreachableEvents: 0, logs };
  for (const n of names)
    h.members.get(n)?.cluster.subscribe((e) => {
      if (e.type === "member-downed")
        w.downed.push(`${n} saw ${e.member.uniqueAddress.address.host}`);
      if (e.type === "unreachable-member") w.unreachableEvents++;
    });
  return [h, names, w];
}

function member(h: MeteredSimCluster, name: string): SimMember {
  const m = h.members.get(name);
  if (m === undefined) throw new Error(`no member ${name}`);
  return m;
}

/** Unreachability records made by `observer`, as any member sees them. */
function recordsBy(h: MeteredSimCluster, names: readonly string[], observer: string): string[] {
  const out = new Set<string>();
  for (const n of names)
    for (const r of member(h, n).cluster.membershipState.latestGossip.overview.reachability.records)
      if (r.observer.address.host === observer && r.status !== "reachable")
        out.add(`${observer}->${r.subject.address.host}`);
  return [...out];
}

function noneRemoved(h: MeteredSimCluster, names: readonly string[]): string[] {
  return names.filter((n) => member(h, n).removedReason !== undefined);
}

describe.each(SEEDS)("membership under stalls (seed %i)", (seed) => {
  it("one member stalls for 10 s: nobody is downed, and it marks nobody unreachable afterwards", async () => {
    const [h, names, w] = await formed(seed, 5);
    const x = "n002";
    h.stall(member(h, x), 10_000);
    const madeByX = new Set<string>();
    await h.world.runUntil(() => {
      for (const r of recordsBy(h, names, x)) madeByX.add(r);
      return false;
    }, 40_000);
    const d = `[sim ${h.world.describe()}]`;
    expect(w.downed, d).toEqual([]);
    expect(noneRemoved(h, names), d).toEqual([]);
    expect([...madeByX], `${d} the stalled member's own verdicts`).toEqual([]);
    expect(
      w.logs.some((l) => l.includes(x) && l.includes("itself was stalled")),
      d,
    ).toBe(true);
    await h.until(
      h.throttled(() => h.allUpAndConverged(names), 100),
      30_000,
    );
  });

  it("two members stall for 10 s at once, then all five for 10 s: nobody is downed", async () => {
    const [h, names, w] = await formed(seed, 5);
    h.stall(member(h, "n001"), 10_000);
    h.stall(member(h, "n003"), 10_000);
    await h.world.advance(30_000);
    for (const n of names) h.stall(member(h, n), 10_000);
    await h.world.advance(30_000);
    const d = `[sim ${h.world.describe()}]`;
    expect(w.downed, d).toEqual([]);
    expect(noneRemoved(h, names), d).toEqual([]);
    await h.until(
      h.throttled(() => h.allUpAndConverged(names), 100),
      30_000,
    );
  });

  it("all members stall at once for 10 s: nobody is marked unreachable at all", async () => {
    const [h, names, w] = await formed(seed, 5);
    for (const n of names) h.stall(member(h, n), 10_000);
    await h.world.advance(30_000);
    const d = `[sim ${h.world.describe()}]`;
    expect(w.unreachableEvents, d).toBe(0);
    expect(w.downed, d).toEqual([]);
  });

  it("sustained overload: every member of 10 stalls 0.5-5 s again and again for 3 minutes; nobody is downed", async () => {
    await sustainedOverload(seed, MILD);
  }, 120_000);

  it("harsh overload: every member of 10 stalls 2-8 s with 0.2-1.2 s between, for 3 minutes; nobody is downed", async () => {
    await sustainedOverload(seed, HARSH);
  }, 120_000);
});

describe.each(simSeeds([1]))("boot storm (seed %i)", (seed) => {
  it("50 members started at the same instant with slow start-up form one cluster; nobody is downed", async () => {
    const h = new MeteredSimCluster(seed);
    const names = nodeNames(50);
    const seedNodes = names.slice(0, 3).map((n) => `${n}:2552`);
    const downed: string[] = [];
    for (const n of names) {
      const m = await h.member(n, { seedNodes, ...DEFAULTS });
      m.cluster.subscribe((e) => {
        if (e.type === "member-downed")
          downed.push(`${n} saw ${e.member.uniqueAddress.address.host}`);
      });
      // start-up competes for the CPU: a first long stall, then shorter ones
      h.stall(m, 1_000 + h.world.random.next() * 7_000);
    }
    const stallsUntil = h.world.now + 40_000;
    while (h.world.now < stallsUntil) {
      for (const n of names)
        if (h.world.random.next() < 0.05)
          h.stall(member(h, n), 500 + h.world.random.next() * 3_500);
      await h.world.advance(500);
    }
    await h.until(
      h.throttled(() => h.allUpAndConverged(names), 200),
      180_000,
    );
    const d = `[sim ${h.world.describe()}]`;
    expect(downed, d).toEqual([]);
    const leaders = new Set(names.map((n) => member(h, n).cluster.state.leader?.address.host));
    expect([...leaders], d).toEqual(["n000"]);
  }, 240_000);
});
