/**
 * S20: randomized faults over many seeds. A 5-node sharded cluster takes traffic while a
 * seeded schedule throws faults at it: partitions of random sizes (healed later), flaky
 * links (segment loss resets connections), kill -9 and restart as a new incarnation,
 * pauses (every link of a node clogged) and graceful leaves. The registry oracle checks
 * safety throughout: never two live incarnations of one entity, never two homes for one
 * shard. After the faults everything is healed and restarted, and every entity must
 * answer again (liveness).
 *
 * S20w is the same run biased toward the dangerous windows (docs/testing.md): messages
 * flow all the time, links have jitter (messages race), entities passivate now and
 * then, more members leave, and half
 * of the fault steps arm a trigger instead of striking blindly: the lifecycle listener
 * (the oracle's feed) fires it on the next shard or entity event — an entity stopping
 * (a hand-off or passivation under way) or a shard starting (a new home) — and it
 * crashes or isolates that member, or crashes the coordinator's member (the coordinator
 * moves in the middle of a hand-off).
 *
 * S20L is S20 with shard leases on (a shared memory lease store, event-sourced entities
 * writing with their shard's fencing token to a shared journal): the oracle also checks
 * that no event is written with a stale token.
 *
 * The default run takes a few seeds (and regression seeds); explore more with
 *   SHARDKIT_SIM_SEEDS=1-200 npx vitest run test/sharding/sharding-faults.sim.test.ts
 * or `npm run sim -- --scenario sharding-faults --seeds 200` (prints a sweep report).
 */
import { describe, expect, it } from "vitest";
import {
  type ClusterNode,
  ClusterSharding,
  type ShardingLifecycleListener,
} from "../../src/api/index.js";
import { compareByAge } from "../../src/core/membership/member-ordering.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { MemoryLeaseStore } from "../../src/persistence/memory/memory-lease.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import type { ShardingOracle } from "../../src/testing/index.js";
import { replayCommand, simSeeds } from "../support/sim-seeds.js";
import {
  allUp,
  CounterKey,
  crashNode,
  FencedJournal,
  type NodeExtras,
  newOracle,
  type SimLeases,
  startNode,
  totalOfEventually,
} from "./sim-sharding.js";

const FILE = "test/sharding/sharding-faults.sim.test.ts";
const NAMES = ["a", "b", "c", "d", "e"] as const;
/** Fault steps per run; each lasts 1–4 s of virtual time. */
const FAULT_STEPS = 14;
const ENTITIES = 40;
/** Restart-and-wait rounds (20 s each) for the cluster to settle after the faults. */
const SETTLE_ROUNDS = 4;
const EXTRAS: NodeExtras = { numberOfShards: 30 };
/** Link jitter of the biased run (ms): forwarded messages race hand-off messages. */
const BIASED_JITTER_MS = 8;
/** Biased: a couple of messages every FLOW_TICK_MS between fault steps. */
const FLOW_TICK_MS = 100;

/** A lifecycle event a trigger waits for: something is moving on `host` right now. */
type WindowEvent = "entity-stopped" | "shard-started";
interface Trigger {
  readonly on: WindowEvent;
  readonly fire: (host: string) => void;
}

/** One process of a node name (a restart makes a new one). */
interface Proc {
  node: ClusterNode;
  runtime: string;
  crashed: boolean;
}

class FaultyCluster {
  readonly procs = new Map<string, Proc>();
  private incarnations = new Map<string, number>();
  readonly log: string[] = [];
  /** Armed fault, fired by the next matching lifecycle event (biased run). */
  armed: Trigger | undefined;
  /** Triggers fired so far. */
  fired = 0;
  /** The oracle's feed, which also fires the armed trigger. */
  readonly lifecycle: ShardingLifecycleListener;
  /** S20L: shard leases on a shared store (set before the first start). */
  leases: SimLeases | undefined;

  constructor(
    readonly world: SimWorld,
    readonly network: SimNetwork,
    readonly oracle: ShardingOracle,
  ) {
    const host = (node: string) => /@([^:/#]+):/.exec(node)?.[1] ?? node;
    const seen = (on: WindowEvent, node: string) => {
      const t = this.armed;
      if (t === undefined || t.on !== on) return;
      this.armed = undefined;
      this.fired++;
      // not inside the shard's turn: right after it, at the same virtual time
      world.schedule(0, () => t.fire(host(node)));
    };
    this.lifecycle = {
      shardStarted: (t, id, node) => {
        oracle.shardStarted(t, id, node);
        seen("shard-started", node);
      },
      shardStopped: (t, id, node) => oracle.shardStopped(t, id, node),
      entityStarted: (t, id, node, shard) => oracle.entityStarted(t, id, node, shard),
      entityStopped: (t, id, node, shard) => {
        oracle.entityStopped(t, id, node, shard);
        seen("entity-stopped", node);
      },
    };
  }

  async start(name: string, seeds: string[]): Promise<void> {
    const k = (this.incarnations.get(name) ?? 0) + 1;
    this.incarnations.set(name, k);
    const runtime = k === 1 ? name : `${name}#${k}`;
    const node = await startNode(this.world, this.network, name, seeds, this.oracle, {
      ...EXTRAS,
      runtimeName: runtime,
      lifecycle: this.lifecycle,
      ...(this.leases === undefined ? {} : { lease: this.leases }),
    });
    this.procs.set(name, { node, runtime, crashed: false });
  }

  /** kill -9 from inside the simulation (a trigger): like crash, without advancing time. */
  crashNow(name: string): void {
    const p = this.procs.get(name);
    if (p === undefined || p.crashed) return;
    p.crashed = true;
    this.world.getRuntime(p.runtime)?.scheduler.cancelAll();
    if (!this.network.isCrashed(name)) this.network.crash(name);
    this.oracle.nodeCrashed(name);
  }

  /** Host of the oldest Up member as a live member sees it: the coordinator's node. */
  coordinatorHost(): string | undefined {
    const [, node] = this.upNodes()[0] ?? [];
    const up = node?.cluster.state.members.filter((m) => m.status === "up") ?? [];
    return [...up].sort(compareByAge)[0]?.uniqueAddress.address.host;
  }

  /** Processes that run and see themselves Up. */
  upNodes(): [string, ClusterNode][] {
    return [...this.procs]
      .filter(([, p]) => !p.crashed && !p.node.system.isTerminated)
      .filter(([, p]) => p.node.cluster.selfMember?.status === "up")
      .map(([n, p]) => [n, p.node]);
  }

  /**
   * The running members grouped by cluster: two processes are in one cluster when one
   * has the other's current incarnation among its members. Largest first (ties: by the
   * first name).
   */
  islands(): string[][] {
    const up = this.upNodes();
    const uidOf = new Map(up.map(([n, node]) => [n, node.cluster.selfMember?.uniqueAddress.uid]));
    const root = new Map(up.map(([n]) => [n, n]));
    const find = (n: string): string => {
      const r = root.get(n) as string;
      return r === n ? n : find(r);
    };
    for (const [n, node] of up)
      for (const m of node.cluster.state.members) {
        const other = m.uniqueAddress.address.host;
        if (other !== n && uidOf.get(other) === m.uniqueAddress.uid) root.set(find(other), find(n));
      }
    const groups = new Map<string, string[]>();
    for (const [n] of up) groups.set(find(n), [...(groups.get(find(n)) ?? []), n]);
    return [...groups.values()]
      .map((g) => g.sort())
      .sort((x, y) => y.length - x.length || (x[0] as string).localeCompare(y[0] as string));
  }

  /** Each process's own status and its view of the members, for failure messages. */
  views(): string {
    return [...this.procs]
      .map(([n, p]) => {
        if (p.crashed || p.node.system.isTerminated) return `${p.runtime}: gone`;
        const ms = p.node.cluster.state.members.map(
          (m) => `${m.uniqueAddress.address.host}#${m.uniqueAddress.uid % 1000}=${m.status}`,
        );
        return `${p.runtime} (${n}#${(p.node.cluster.selfMember?.uniqueAddress.uid ?? 0) % 1000}): ${ms.join(" ")}`;
      })
      .join("; ");
  }

  /** Names whose process is gone (crashed, or stopped after being downed or leaving). */
  deadNames(): string[] {
    return [...this.procs]
      .filter(([, p]) => p.crashed || p.node.system.isTerminated)
      .map(([n]) => n);
  }

  async crash(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (p === undefined || p.crashed) return;
    p.crashed = true;
    await crashNode(this.world, this.network, this.oracle, name, p.runtime);
  }

  /**
   * A new incarnation of `name`, joining through the others (never forming its own
   * cluster), or — `first` — the first of a new cluster when no process is left.
   */
  async restart(name: string, first = false): Promise<void> {
    const p = this.procs.get(name);
    if (p !== undefined && !p.crashed) {
      // a process that stopped itself (downed, left) still owns its host: kill it first
      await this.crash(name);
    }
    this.network.restart(name);
    const others = NAMES.filter((n) => n !== name).map((n) => `${n}:2552`);
    await this.start(name, first ? [`${name}:2552`, ...others] : others);
  }
}

// seed 6: shards of a downed minority restarted on the survivors while the minority, kept
// unstable by pauses, still ran them (fixed: the shard removal margin); keep it here.
// seeds 292, 419, 464: split brains of the SBR (a side downed nodes of the other on a
// stale view, and down members' records looked like indirect connections; fixed in
// src/core/downing, see test/core/scripts/sbr-keep-majority.txt); keep them too.
// seed 977: a new coordinator in regions recovery allocated a shard of a member removed
// before it registered, while that (downed) member still ran it (fixed: recovery waits
// the removal margin, test/core/coordinator/scripts/regions-recovery-margin.txt).
// seed 616: two members restarted last were downed after the cluster looked settled, and
// the final check asked through one of them (fixed: settled must last 5 s).
// seed 416: c was leaving (and ran the coordinator) when its hand-off timed out; c was
// removed as a leaver with its shards still running, and the next coordinator, in
// regions recovery, never knew them and started two elsewhere (fixed: a region stops its
// shards when its member leaves, in the cluster-leave phase).
// seed 27: the resolver's "still indirectly connected: down all" is what stops the other
// side of a split here; a change that dropped a cycle member's records about members
// others see unreachable too (to spare S20wL seed 46 a down-all) ran entities twice.
const SEEDS = [1, 2, 3, 4, 5, 6, 292, 419, 464, 616, 977, 416, 27];
// a few in `npm test` (each is slower than S20); sweep more with --filter S20w
const BIASED_SEEDS = [3, 5];

async function runS20(
  seed: number,
  biased: boolean,
  leases = false,
): Promise<{ fired: number; where: string }> {
  // SHARDKIT_SIM_LOG=info prints the nodes' logs (to analyse a failing seed).
  const world = new SimWorld({ seed, logLevel: (process.env.SHARDKIT_SIM_LOG ?? "off") as "off" });
  const network = new SimNetwork(
    world,
    biased ? { link: { jitterMs: BIASED_JITTER_MS } } : undefined,
  );
  const oracle = newOracle(world);
  const rnd = world.random;
  const pick = <T>(xs: readonly T[]): T => xs[rnd.nextInt(xs.length)] as T;
  const c = new FaultyCluster(world, network, oracle);
  if (leases) {
    const store = new MemoryLeaseStore({ now: () => world.now });
    c.leases = { store, journal: new FencedJournal(new MemoryJournal(), store, oracle) };
  }
  for (const n of NAMES) await c.start(n, ["a:2552", "b:2552"]);
  const boot = await world.runUntil(
    () => NAMES.every((n) => allUp(c.procs.get(n)?.node as ClusterNode, NAMES.length)),
    30_000,
  );
  expect(boot, `[sim ${world.describe()}] cluster did not form`).toBe(true);
  await world.advance(3_000);

  const ids = Array.from({ length: ENTITIES }, (_, i) => `r-${i}`);
  const traffic = () => {
    const up = c.upNodes();
    if (up.length === 0) return;
    for (let i = 0; i < 10; i++) {
      const [, from] = pick(up);
      ClusterSharding.get(from).entityRefFor(CounterKey, pick(ids)).tell({ type: "add", n: 1 });
    }
    // biased: entities passivate now and then (passivation windows)
    if (biased)
      for (let i = 0; i < 3; i++) {
        const [, from] = pick(up);
        ClusterSharding.get(from).entityRefFor(CounterKey, pick(ids)).tell({ type: "passivate" });
      }
  };
  const note = (what: string) => c.log.push(`t=${Math.round(world.now)} ${what}`);
  /**
   * Time passes; biased: with messages flowing all along (a shard moving while nobody
   * writes to it opens no window: its new home starts it only at the next message).
   */
  const flow = async (ms: number) => {
    if (!biased) {
      await world.advance(ms);
      return;
    }
    for (let t = 0; t < ms; t += FLOW_TICK_MS) {
      const up = c.upNodes();
      for (let i = 0; i < 2 && up.length > 0; i++) {
        const [, from] = pick(up);
        ClusterSharding.get(from).entityRefFor(CounterKey, pick(ids)).tell({ type: "add", n: 1 });
      }
      await world.advance(Math.min(FLOW_TICK_MS, ms - t));
    }
  };

  /**
   * Brings a dead process back; as the first of a new cluster when no member is left (the
   * faults downed every member, and a restarted process only tries to join the others),
   * as an operator would, so that the rest of the run still has windows to strike (S20wL
   * seed 315: overlapping partitions downed everybody early, and no trigger ever fired).
   */
  const restartBack = async (back: string) => {
    const first = c.upNodes().length === 0;
    note(`restart ${back}${first ? " (first: no member left)" : ""}`);
    await c.restart(back, first);
  };

  /** A fault for a trigger: strike the member at its window (or the coordinator's). */
  const armTrigger = () => {
    const on: WindowEvent = rnd.nextInt(3) === 0 ? "shard-started" : "entity-stopped";
    const kind = rnd.nextInt(3);
    const isolateMs = 1_000 + rnd.nextInt(5_000);
    c.armed = {
      on,
      fire: (host) => {
        const running = NAMES.filter((n) => !c.deadNames().includes(n));
        const victim = kind === 2 ? c.coordinatorHost() : host;
        const target = running.find((n) => n === victim);
        if (target === undefined) return;
        if (kind === 1) {
          const rest = NAMES.filter((n) => n !== target);
          network.partition(target, rest);
          world.schedule(isolateMs, () => network.heal(target, rest));
          note(`isolate ${target} ${isolateMs}ms at ${on}`);
        } else if (running.length > 3) {
          c.crashNow(target);
          note(`kill -9 ${target}${kind === 2 ? " (coordinator)" : ""} at ${on}`);
        }
      },
    };
  };

  for (let step = 0; step < FAULT_STEPS; step++) {
    traffic();
    const running = NAMES.filter((n) => !c.deadNames().includes(n));
    if (biased && rnd.nextInt(2) === 0) {
      // more hand-offs: a member leaves or a dead one comes back (rebalance); then a
      // trigger waits for a window
      if (rnd.nextInt(2) === 0 && running.length > 3) {
        const leaver = pick(running);
        note(`leave ${leaver}`);
        void (c.procs.get(leaver) as Proc).node.shutdown("user");
      } else if (c.deadNames().length > 0) {
        await restartBack(pick(c.deadNames()));
      }
      armTrigger();
      await flow(1_000 + rnd.nextInt(3_000));
      continue;
    }
    const fault = rnd.nextInt(6);
    if (fault === 0) {
      // partition of a random size, healed 1–8 s later
      const shuffled: string[] = [...NAMES];
      for (let i = shuffled.length - 1; i > 0; i--) {
        const j = rnd.nextInt(i + 1);
        [shuffled[i], shuffled[j]] = [shuffled[j] as string, shuffled[i] as string];
      }
      const k = 1 + rnd.nextInt(NAMES.length - 1);
      const [side, rest] = [shuffled.slice(0, k), shuffled.slice(k)];
      network.partition(side, rest);
      note(`partition ${side.join("")}|${rest.join("")}`);
      const healIn = 1_000 + rnd.nextInt(7_000);
      world.schedule(healIn, () => network.heal(side, rest));
    } else if (fault === 1) {
      // flaky link both ways for a while
      const x = pick(NAMES);
      const y = pick(NAMES.filter((n) => n !== x));
      const loss = 0.02 + rnd.nextInt(10) / 100;
      network.configureLink(x, y, { lossProbability: loss });
      network.configureLink(y, x, { lossProbability: loss });
      note(`flaky ${x}-${y} ${loss}`);
      world.schedule(2_000 + rnd.nextInt(6_000), () => {
        network.configureLink(x, y, { lossProbability: 0 });
        network.configureLink(y, x, { lossProbability: 0 });
      });
    } else if (fault === 2 && running.length > 3) {
      const victim = pick(running);
      await c.crash(victim);
      note(`kill -9 ${victim}`);
    } else if (fault === 3) {
      // a pause: nothing gets in or out of the node for 1–3 s (a long GC, a frozen VM)
      const x = pick(NAMES);
      const ms = 1_000 + rnd.nextInt(2_000);
      for (const y of NAMES) if (y !== x) network.clog(x, y, ms);
      note(`pause ${x} ${ms}ms`);
    } else if (fault === 4 && c.deadNames().length > 0) {
      await restartBack(pick(c.deadNames()));
    } else if (fault === 5 && running.length > 3) {
      const leaver = pick(running);
      note(`leave ${leaver}`);
      void (c.procs.get(leaver) as Proc).node.shutdown("user");
    }
    await flow(1_000 + rnd.nextInt(3_000));
  }

  // heal everything, bring every dead node back, and let the cluster settle
  network.heal();
  for (const x of NAMES)
    for (const y of NAMES) if (x !== y) network.configureLink(x, y, { lossProbability: 0 });
  await world.advance(10_000);
  // Bring back every process that is gone, again while some still stop (a node downed
  // late in the faults shuts down during the settling); the faults may have downed
  // everybody: then the first one back forms a new cluster.
  // Settled: every process is up and sees exactly the current incarnations, all up (a
  // count of up members is not enough: seed 1574's e still saw incarnations of a, b and c
  // that the end of the faults had restarted, was downed after "settling", and the final
  // check asked through a member that went with it).
  const settledNow = () => {
    const up = c.upNodes();
    if (up.length !== NAMES.length) return false;
    const current = new Set(up.map(([, n]) => n.cluster.selfMember?.uniqueAddress.uid));
    return up.every(
      ([, n]) =>
        allUp(n, NAMES.length) &&
        n.cluster.state.members.every((m) => current.has(m.uniqueAddress.uid)),
    );
  };
  let settled = false;
  for (let round = 0; round < SETTLE_ROUNDS && !settled; round++) {
    // Every process runs but none is a member: the faults downed everybody, and the
    // processes restarted since only try to join the others (their seed nodes do not
    // list themselves), so none would ever form a cluster (seeds 12 and 14). Restart one
    // as the first of a new cluster, as an operator would.
    // Two clusters side by side (islands): a partition decided on a stale view can leave
    // each side with a cluster that removed the other's members (docs/cluster.md, "Known
    // issue"; seed 254: {a,c,e} and {b,d}). Neither ever merges back; with leases the
    // oracle holds, but part of the shards wait on leases held in the other island. An
    // operator restarts the smaller island's processes, and so does the scenario.
    if (round > 0) {
      const islands = c.islands();
      for (const island of islands.slice(1)) {
        note(`restart ${island.join(",")} (end, island next to ${islands[0]?.join(",")})`);
        for (const n of island) await c.crash(n);
      }
    }
    if (c.upNodes().length === 0 && c.deadNames().length === 0) {
      note(`restart ${NAMES[0]} (end, first: no member left)`);
      await c.restart(NAMES[0] as string, true);
    }
    for (const [i, n] of c.deadNames().entries()) {
      const first = i === 0 && c.upNodes().length === 0;
      note(`restart ${n} (end${first ? ", first" : ""})`);
      await c.restart(n, first);
    }
    settled = await world.runUntil(settledNow, 20_000);
    // Settled must last: a member restarted at the end can still be downed a few
    // seconds later (seed 616: two incarnations restarted last lost each other's
    // heartbeats and were downed as indirectly connected), and asking through a downed
    // member gets no answer. Then another round brings the downed processes back.
    if (settled) {
      await world.advance(5_000);
      settled = settledNow();
    }
  }
  c.armed = undefined;
  const where = `[sim ${world.describe()}] ${biased ? "biased, " : ""}${leases ? "leases, " : ""}faults: ${c.log.join("; ")}; replay: ${replayCommand(seed, FILE)}`;
  expect(settled, `${where}: the cluster did not settle; views: ${c.views()}`).toBe(true);
  const [, asker] = c.upNodes()[0] as [string, ClusterNode];
  for (const id of ids) {
    const r = await totalOfEventually(world, asker, id, 8);
    expect(r, `${where}: ${id} does not answer`).toBeDefined();
  }
  expect(oracle.entitiesStarted).toBeGreaterThan(0);
  if (leases) expect(oracle.fencedWrites, "fenced writes").toBeGreaterThan(0);
  try {
    oracle.assertNoViolations();
  } catch (e) {
    throw new Error(`${String(e)}\n${where}`);
  }
  return { fired: c.fired, where };
}

describe.each(simSeeds(SEEDS))("sharding under random faults (seed %i)", (seed) => {
  it("S20: partitions, flaky links, kill -9, pauses and restarts: never two incarnations of an entity, never two homes of a shard", async () => {
    await runS20(seed, false);
  }, 60_000);
});

describe.each(simSeeds(BIASED_SEEDS))(
  "sharding under faults timed at the windows (seed %i)",
  (seed) => {
    it("S20w: crashes and partitions timed at hand-offs, passivations and coordinator moves: never two incarnations, never two homes", async () => {
      const { fired, where } = await runS20(seed, true);
      expect(fired, `${where}: triggers fired at lifecycle windows`).toBeGreaterThan(0);
    }, 60_000);
  },
);

// S20 with shard leases. Seed 1001: a pause of b ended just after a partition {a,e} |
// {b,c} began, so c decided on a's stale record about b and downed a, b and e as
// indirectly connected, while a and e downed c: two clusters, {c} and {a,e}, that never
// merged (no oracle violation: the leases held; the cluster did not settle). Fixed: a
// member refused as quarantined by a live member of its own view downs itself
// (docs/cluster.md, "Quarantined by a member"); a and e stop, restart and join c.
// Seed 231: a coordinator started while b was cut off did not wait for b's report and
// gave b's shards new homes, which then waited for the leases b kept renewing (fixed: a
// region that reports a leased shard placed elsewhere is told to stop it). Seed 254: two
// islands, {a,c,e} and {b,d}, each removed the other's members (the island restart).
// Seed 637: with leases off two sides both kept running (c's join, concurrent with the
// partition, was counted by one side only: docs/cluster.md, "Known issue"); with leases
// the oracle holds. Seed 5041: the HandOff telling d to stop shard 2 (placed elsewhere)
// was lost on a reset connection; d ran it and renewed its lease for ever, and its new
// home waited (fixed: sent again every rebalance tick, docs/sharding-coordinator.md).
const LEASE_SEEDS = [1, 2, 3, 6, 692, 1001, 231, 254, 637, 5041];

describe.each(simSeeds(LEASE_SEEDS))(
  "sharding with leases under random faults (seed %i)",
  (seed) => {
    it("S20L: with shard leases: never two incarnations, never two homes, no event written by a stale token", async () => {
      await runS20(seed, false, true);
    }, 60_000);
  },
);

// S20w with shard leases: the faults timed at hand-offs, passivations and coordinator
// moves, with the leases and fencing of S20L. Sweep with --filter S20wL. Seed 46: two
// crashes in a row (the second member had seen the first go) made the resolver down the
// whole cluster (the resolver's down-all, kept: see seed 27 above), so no trigger ever
// fired; passes since the scenario restarts one process as the first of a new cluster.
// Seed 32: after a coordinator fail-over two regions' stale caches named each other as
// shard 27's home and passed r-6's messages back and forth for ever (fixed: a forwarded
// message is never forwarded again, docs/sharding-region.md). Seed 116: e joined b's
// island; b went away and e, never up, stayed joining for ever, its fallback leader c a
// joiner gone to the other cluster (fixed: a never-up member cut off from every up
// member decides for itself, docs/cluster.md).
// Seed 373: processes shut down while still trying to join were welcomed into the new
// cluster during their later shutdown phases, became up, then stopped without leaving
// (fixed: leave before joining stops the join attempts, docs/shutdown.md). Seed 315:
// overlapping partitions downed every member early; restarts only tried to join the
// dead cluster and no trigger fired (the scenario now restarts one as the first).
// Seed 981: b was welcomed by c, which crashed before it told anyone; the leader a
// ignored b's gossip and b stayed joining for ever (fixed: a joiner the leader has not
// seen joins again, docs/cluster.md).
// Seed 1574: the scenario took the cluster for settled while e still saw restarted
// members' old incarnations (now checked), then asked through a member that went away.
// Seed 210: a region cached "no such actor" for its own coordinator's id (named earlier
// by the previous process at its address) and looped for ever at one instant, watching a
// dead ref (fixed: local ids are never cached, src/cluster/sharding/sharding-messages.ts).
// Seed 9154: d's restarted process was admitted by a, its Welcome was cut off, and the
// resolver downed and removed it; d asked to join for ever, every seed refusing it in
// silence (fixed: a refused Join is answered, and a joiner refused as removed or
// quarantined stops so its process restarts, docs/cluster.md "Joining").
const BIASED_LEASE_SEEDS = [3, 5, 46, 32, 116, 373, 315, 981, 1574, 210, 9154];

describe.each(simSeeds(BIASED_LEASE_SEEDS))(
  "sharding with leases under faults timed at the windows (seed %i)",
  (seed) => {
    it("S20wL: with shard leases, faults timed at the windows: never two incarnations, never two homes, no stale write", async () => {
      const { fired, where } = await runS20(seed, true, true);
      expect(fired, `${where}: triggers fired at lifecycle windows`).toBeGreaterThan(0);
    }, 60_000);
  },
);
