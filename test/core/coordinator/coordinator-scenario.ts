/**
 * Random scenarios for the coordinator property tests: the action vocabulary, its
 * generator, and how actions drive a CoordinatorHarness (coordinator-harness.ts).
 */
import fc from "fast-check";
import type { CoordinatorAllocationStrategy } from "../../../src/core/coordinator/coordinator-strategy.js";
import { leastShardStrategy } from "../../../src/core/coordinator/coordinator-strategy.js";
import { CoordinatorHarness, type SimNode } from "./coordinator-harness.js";

export type Action =
  | { t: "deliver"; i: number }
  | { t: "persist-ok" }
  | { t: "persist-fail" }
  | { t: "advance"; ms: number }
  | { t: "tick" }
  | { t: "request"; n: number; shard: number }
  | { t: "add"; proxy: boolean; newVersion: boolean }
  | { t: "kill"; n: number; graceful: boolean }
  | { t: "remove"; n: number }
  | { t: "watch"; n: number }
  | { t: "shutdown"; n: number }
  | { t: "reachable"; n: number; reachable: boolean }
  | { t: "leave"; n: number }
  | { t: "retry"; n: number }
  | { t: "restart"; lands: boolean }
  | { t: "drain" };

const node = fc.nat(7);
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 30, arbitrary: fc.record({ t: fc.constant("deliver" as const), i: fc.nat(50) }) },
  { weight: 8, arbitrary: fc.constant({ t: "persist-ok" as const }) },
  { weight: 2, arbitrary: fc.constant({ t: "persist-fail" as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("advance" as const),
      ms: fc.constantFrom(100, 400, 1_000, 10_000, 60_000),
    }),
  },
  { weight: 6, arbitrary: fc.constant({ t: "tick" as const }) },
  {
    weight: 10,
    arbitrary: fc.record({ t: fc.constant("request" as const), n: node, shard: fc.nat(7) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("add" as const),
      proxy: fc.boolean(),
      newVersion: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant("kill" as const), n: node, graceful: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("remove" as const), n: node }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("watch" as const), n: node }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("shutdown" as const), n: node }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("reachable" as const),
      n: node,
      reachable: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("leave" as const), n: node }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("retry" as const), n: node }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("restart" as const), lands: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ t: "drain" as const }) },
);

/** A strategy that picks and moves shards pseudo-randomly (deterministic per run). */
function chaosStrategy(seed: number): CoordinatorAllocationStrategy {
  let n = seed;
  const next = () => {
    n = (n * 1_103_515_245 + 12_345) & 0x7fffffff;
    return n;
  };
  return {
    allocateShard: (_requester, _shard, regions) => regions[next() % regions.length]?.regionId,
    rebalance: (regions) => {
      const all = regions.flatMap((r) => r.shards);
      return all.filter(() => next() % 3 === 0).slice(0, 3);
    },
  };
}

function nodeAt(h: CoordinatorHarness, i: number): SimNode | undefined {
  return h.nodes.length === 0 ? undefined : h.nodes[i % h.nodes.length];
}

function apply(h: CoordinatorHarness, a: Action): void {
  const n = "n" in a ? nodeAt(h, a.n) : undefined;
  switch (a.t) {
    case "deliver": {
      const links = h.pendingLinks();
      if (links.length > 0) h.deliver(links[a.i % links.length] as number);
      return;
    }
    case "persist-ok":
      h.persistOk();
      return;
    case "persist-fail":
      h.persistFail();
      return;
    case "advance":
      h.advance(a.ms);
      return;
    case "tick":
      h.tick();
      return;
    case "request":
      if (n !== undefined) h.request(n, `s${a.shard}`);
      return;
    case "add":
      if (h.nodes.length < 6) h.addNode(a.proxy, a.newVersion ? "1.1.0" : "1.0.0");
      return;
    case "kill":
      if (n !== undefined) h.kill(n, a.graceful);
      return;
    case "remove":
      if (n !== undefined) h.remove(n);
      return;
    case "watch":
      if (n !== undefined) h.watchTerminated(n);
      return;
    case "shutdown":
      if (n !== undefined) h.shutdown(n);
      return;
    case "reachable":
      if (n !== undefined) h.setReachable(n, a.reachable);
      return;
    case "leave":
      if (n !== undefined) h.leave(n);
      return;
    case "retry":
      if (n !== undefined) h.retry(n);
      return;
    case "restart":
      h.restartCoordinator(a.lands);
      return;
    case "drain":
      h.drain();
      return;
  }
}

/** Heals the world (dead members removed, all reachable) and lets it run until quiet. */
export function settle(h: CoordinatorHarness): void {
  for (const n of h.nodes) {
    if (!n.alive) h.remove(n);
    else h.setReachable(n, true);
  }
  for (let round = 0; round < 8; round++) {
    for (const n of h.nodes) h.retry(n);
    h.drain();
    h.advance(60_000);
    h.tick();
    h.drain();
  }
}

/** Like settle, without rebalance ticks: only what is in flight moves. */
export function serve(h: CoordinatorHarness): void {
  for (let round = 0; round < 4; round++) {
    for (const n of h.nodes) h.retry(n);
    h.drain();
    h.advance(60_000);
    h.drain();
  }
}

export function canTakeShards(n: SimNode): boolean {
  return n.alive && !n.isProxy && n.status === "up" && !n.shuttingDown && n.registered;
}

export const scenario = fc.record({
  mode: fc.constantFrom("persistent" as const, "regions" as const),
  chaos: fc.boolean(),
  seed: fc.nat(),
  rebalanceConcurrencyMax: fc.integer({ min: 1, max: 3 }),
  minNrOfMembers: fc.integer({ min: 1, max: 2 }),
  rememberEntities: fc.boolean(),
  initialRegions: fc.integer({ min: 1, max: 3 }),
  stopDelayMaxMs: fc.constantFrom(0, 500, 2_000),
  actions: fc.array(action, { minLength: 20, maxLength: 250, size: "max" }),
});

export function run(s: Scenario): CoordinatorHarness {
  const h = new CoordinatorHarness({
    mode: s.mode,
    settings: {
      rebalanceConcurrencyMax: s.rebalanceConcurrencyMax,
      minNrOfMembers: s.minNrOfMembers,
      rememberEntities: s.rememberEntities,
      persistBatchMax: 3,
    },
    strategy: () =>
      s.chaos ? chaosStrategy(s.seed) : leastShardStrategy({ absoluteLimit: 3, relativeLimit: 1 }),
    stopDelayMaxMs: s.stopDelayMaxMs,
    seed: s.seed,
  });
  for (let i = 0; i < s.initialRegions; i++) h.addNode(false);
  for (const a of s.actions) apply(h, a);
  return h;
}

export interface Scenario {
  mode: "persistent" | "regions";
  chaos: boolean;
  seed: number;
  rebalanceConcurrencyMax: number;
  minNrOfMembers: number;
  rememberEntities: boolean;
  initialRegions: number;
  /** See HarnessConfig.stopDelayMaxMs. */
  stopDelayMaxMs: number;
  actions: Action[];
}
