/**
 * A small, deterministic world around one CoordinatorMachine for property tests: nodes
 * with a region (or a proxy) that behave like real regions, per-pair FIFO links with
 * arbitrary interleaving, a store whose writes succeed or fail on command, timers in
 * virtual time, node crashes, removals and coordinator restarts (persistent or regions
 * recovery). Every output is checked as it happens; a violation throws.
 *
 * Real timing windows: a region told HandOff keeps running the shard for a random,
 * seeded time (`stopDelayMaxMs`, 0 = instant) before it reports ShardStopped, like a real
 * region whose entities take time to stop. Until then the shard still counts as running
 * there, so a coordinator that moves a shard before ShardStopped meets the "one home per
 * shard" oracle inside that window.
 *
 * Oracles:
 * - one home per shard: at no time do two live regions run the same shard (a region runs
 *   a shard from HostShard, or ShardHome naming itself, until HandOff or its death);
 * - the coordinator never sends HostShard for a shard to a second region while the first
 *   one has neither answered ShardStopped nor died;
 * - persist before announce: every HostShard and ShardHome names the home the store
 *   holds at that moment (fold of the acknowledged batches);
 * - the driver never sees two writes at once.
 */

import { Xoshiro128 } from "../../../src/base/prng.js";
import type {
  CoordinatorInput,
  CoordinatorMember,
  CoordinatorOutput,
} from "../../../src/core/coordinator/coordinator-io.js";
import { CoordinatorMachine } from "../../../src/core/coordinator/coordinator-machine.js";
import type { CoordinatorSettings } from "../../../src/core/coordinator/coordinator-settings.js";
import { recoverCoordinatorState } from "../../../src/core/coordinator/coordinator-state.js";
import type { CoordinatorAllocationStrategy } from "../../../src/core/coordinator/coordinator-strategy.js";
import type {
  CoordinatorCommand,
  CoordinatorEvent,
  RegionCommand,
} from "../../../src/protocol/sharding.js";

/** One node: a region or a proxy, and the member it runs on. */
export interface SimNode {
  readonly idx: number;
  readonly member: string;
  readonly id: string;
  readonly isProxy: boolean;
  alive: boolean;
  removed: boolean;
  status: "up" | "leaving";
  reachable: boolean;
  registered: boolean;
  shuttingDown: boolean;
  readonly running: Set<string>;
  /** GetShardHome sent and not yet answered. */
  readonly requested: Set<string>;
  /** The latest home this node was told per shard. */
  readonly answers: Map<string, string>;
}

/** Harness parameters. */
export interface HarnessConfig {
  readonly mode: "persistent" | "regions";
  readonly settings: Partial<CoordinatorSettings>;
  readonly strategy: () => CoordinatorAllocationStrategy;
  /**
   * Upper bound (ms, virtual time) of the time a region takes to stop a shard after
   * HandOff; each stop draws from [0, stopDelayMaxMs] with `seed` (a quarter of them are
   * instant). Undefined or 0: every stop is instant.
   */
  readonly stopDelayMaxMs?: number;
  /** Seed of the stop delays. */
  readonly seed?: number;
}

/** A shard a region was told to hand off and is still stopping. */
interface PendingStop {
  readonly node: SimNode;
  readonly shard: string;
  handOffId: number;
  readonly atMs: number;
  readonly order: number;
}

/** See the module comment. */
export class CoordinatorHarness {
  machine: CoordinatorMachine;
  readonly nodes: SimNode[] = [];
  now = 0;
  private readonly toCoordinator = new Map<number, CoordinatorCommand[]>();
  private readonly toNode = new Map<number, RegionCommand[]>();
  private readonly timers = new Map<string, [number, number]>();
  private timerSeq = 0;
  private writing: { batchId: number; events: readonly CoordinatorEvent[] } | undefined;
  /** Acknowledged events of the current store (per incarnation in regions mode). */
  journal: CoordinatorEvent[] = [];
  private durableHomes = new Map<string, string>();
  /** Per hand-off attempt (`shard#id`): BeginHandOff recipients and delivered acks. */
  private readonly handOffAcks = new Map<string, { sentTo: Set<string>; acked: Set<string> }>();
  /** Last HostShard target per shard, until that region stops the shard or dies. */
  private readonly hostedBy = new Map<string, string>();
  readonly trace: string[] = [];
  /** Shards being stopped after HandOff, per `node:shard`. */
  private readonly stopping = new Map<string, PendingStop>();
  private readonly stopRandom: Xoshiro128;
  /** Stops that took a non-zero time (for tests that check the windows exist). */
  delayedStops = 0;

  constructor(private readonly config: HarnessConfig) {
    this.machine = this.newMachine();
    this.stopRandom = new Xoshiro128(config.seed ?? 0);
  }

  private newMachine(): CoordinatorMachine {
    const recovery =
      this.config.mode === "persistent"
        ? { mode: "persistent" as const, events: [...this.journal] }
        : { mode: "regions" as const };
    return new CoordinatorMachine({
      self: "coordinator",
      strategy: this.config.strategy(),
      recovery,
      settings: this.config.settings,
    });
  }

  // ---- world changes ----------------------------------------------------------------------

  addNode(isProxy: boolean, appVersion = "1.0.0"): SimNode {
    const idx = this.nodes.length;
    const node: SimNode = {
      idx,
      member: `m${idx}`,
      id: isProxy ? `P${idx}` : `R${idx}`,
      isProxy,
      alive: true,
      removed: false,
      status: "up",
      reachable: true,
      registered: false,
      shuttingDown: false,
      running: new Set(),
      requested: new Set(),
      answers: new Map(),
    };
    this.nodes.push(node);
    this.toCoordinator.set(idx, []);
    this.toNode.set(idx, []);
    this.versions.set(idx, appVersion);
    this.feedMembership();
    this.sendRegister(node);
    return node;
  }

  private readonly versions = new Map<number, string>();

  membersSnapshot(): CoordinatorMember[] {
    return this.nodes
      .filter((n) => !n.removed)
      .map((n) => ({
        uniqueAddress: n.member,
        address: n.member,
        status: n.status,
        appVersion: this.versions.get(n.idx) ?? "1.0.0",
        reachable: n.reachable,
        roles: [],
      }));
  }

  feedMembership(): void {
    this.feed({ type: "membership", members: this.membersSnapshot() });
  }

  sendRegister(n: SimNode): void {
    if (!n.alive) return;
    if (n.isProxy) this.fromNode(n, { type: "register-proxy", proxy: n.id, member: n.member });
    else
      this.fromNode(n, {
        type: "register",
        region: n.id,
        member: n.member,
        hostedShards: [...n.running],
      });
  }

  request(n: SimNode, shard: string): void {
    if (!n.alive) return;
    n.requested.add(shard);
    this.fromNode(n, { type: "get-shard-home", shard, from: n.id });
  }

  /** Retries of a live node: Register until acked, GetShardHome until answered. */
  retry(n: SimNode): void {
    if (!n.alive) return;
    if (!n.registered) this.sendRegister(n);
    for (const s of n.requested) this.fromNode(n, { type: "get-shard-home", shard: s, from: n.id });
  }

  shutdown(n: SimNode): void {
    if (!n.alive || n.isProxy) return;
    n.shuttingDown = true;
    this.fromNode(n, { type: "graceful-shutdown-req", region: n.id });
  }

  /** The process dies (its shards with it); `graceful` = the region reports RegionStopped. */
  kill(n: SimNode, graceful: boolean): void {
    if (!n.alive) return;
    if (graceful && !n.isProxy) this.fromNode(n, { type: "region-stopped", region: n.id });
    n.alive = false;
    n.running.clear();
    n.requested.clear();
    for (const [key, p] of this.stopping) if (p.node === n) this.stopping.delete(key);
    this.toNode.set(n.idx, []);
    for (const [s, r] of this.hostedBy) if (r === n.id) this.hostedBy.delete(s);
    n.reachable = false;
    this.feedMembership();
  }

  /** A dead node's member is removed (downing never removes a live node here). */
  remove(n: SimNode): void {
    if (n.alive || n.removed) return;
    n.removed = true;
    this.feedMembership();
  }

  /** A watched dead region (or proxy) reports terminated. */
  watchTerminated(n: SimNode): void {
    if (n.alive) return;
    this.feed(
      n.isProxy
        ? { type: "proxy-terminated", proxy: n.id }
        : { type: "region-terminated", region: n.id },
    );
  }

  setReachable(n: SimNode, reachable: boolean): void {
    if (!n.alive || n.reachable === reachable) return;
    n.reachable = reachable;
    this.feedMembership();
  }

  leave(n: SimNode): void {
    if (!n.alive || n.status === "leaving") return;
    n.status = "leaving";
    this.feedMembership();
  }

  /**
   * The coordinator moves: a write in flight lands (or not) before the new one recovers;
   * messages to and from the old one are lost (regions ignore a coordinator they are not
   * registered with); every live node registers again and retries its requests.
   */
  restartCoordinator(writeLands: boolean): void {
    if (this.writing !== undefined && writeLands) this.journal.push(...this.writing.events);
    this.writing = undefined;
    this.timers.clear();
    this.handOffAcks.clear();
    for (const q of this.toCoordinator.values()) q.length = 0;
    for (const q of this.toNode.values()) q.length = 0;
    if (this.config.mode === "regions") {
      this.journal = [];
      this.hostedBy.clear();
      for (const n of this.nodes) for (const s of n.running) this.hostedBy.set(s, n.id);
    }
    this.recomputeDurableHomes();
    this.machine = this.newMachine();
    this.trace.push("restart coordinator");
    this.feedMembership();
    for (const n of this.nodes) {
      n.registered = false;
      this.retry(n);
    }
  }

  // ---- store and time -------------------------------------------------------------------

  get writeInFlight(): boolean {
    return this.writing !== undefined;
  }

  persistOk(): void {
    const w = this.writing;
    if (w === undefined) return;
    this.writing = undefined;
    this.journal.push(...w.events);
    this.recomputeDurableHomes();
    this.feed({ type: "persisted", batchId: w.batchId });
  }

  persistFail(): void {
    const w = this.writing;
    if (w === undefined) return;
    this.writing = undefined;
    this.feed({ type: "persist-failed", batchId: w.batchId, reason: "injected" });
  }

  /** Shards still stopping after HandOff (the hand-off windows open now). */
  get stopsInProgress(): number {
    return this.stopping.size;
  }

  /** Moves virtual time: timers fire and shard stops complete in time order. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.timers].filter(([, [at]]) => at <= until);
      due.sort(([, a], [, b]) => a[0] - b[0] || a[1] - b[1]);
      const stops = [...this.stopping.values()].filter((p) => p.atMs <= until);
      stops.sort((a, b) => a.atMs - b.atMs || a.order - b.order);
      const timer = due[0];
      const stop = stops[0];
      if (stop !== undefined && (timer === undefined || stop.atMs <= timer[1][0])) {
        this.now = stop.atMs;
        this.finishStop(stop);
        continue;
      }
      if (timer === undefined) break;
      const [key, [at]] = timer;
      this.timers.delete(key);
      this.now = at;
      this.feed({ type: "timer", key });
    }
    this.now = until;
  }

  tick(): void {
    this.feed({ type: "rebalance-tick" });
  }

  // ---- links ------------------------------------------------------------------------------

  /** Non-empty links as indexes usable with deliver(). */
  pendingLinks(): number[] {
    const out: number[] = [];
    for (const n of this.nodes) {
      if ((this.toCoordinator.get(n.idx) as unknown[]).length > 0) out.push(2 * n.idx);
      if ((this.toNode.get(n.idx) as unknown[]).length > 0) out.push(2 * n.idx + 1);
    }
    return out;
  }

  deliver(link: number): void {
    const idx = link >> 1;
    const node = this.nodes[idx] as SimNode;
    if (link % 2 === 0) {
      const msg = (this.toCoordinator.get(idx) as CoordinatorCommand[]).shift();
      if (msg === undefined) return;
      if (msg.type === "shard-stopped" && this.hostedBy.get(msg.shard) === msg.from)
        this.hostedBy.delete(msg.shard);
      if (msg.type === "begin-hand-off-ack")
        this.handOffAcks.get(`${msg.shard}#${msg.handOffId}`)?.acked.add(msg.from);
      this.feed(msg);
    } else {
      const msg = (this.toNode.get(idx) as RegionCommand[]).shift();
      if (msg !== undefined && node.alive) this.onNodeMessage(node, msg);
    }
  }

  /** Delivers everything and lets every write succeed, until nothing moves. */
  drain(): void {
    for (let guard = 0; guard < 100_000; guard++) {
      const links = this.pendingLinks();
      if (links.length > 0) this.deliver(links[0] as number);
      else if (this.writing !== undefined) this.persistOk();
      else return;
    }
    throw new Error("drain did not settle");
  }

  private fromNode(n: SimNode, msg: CoordinatorCommand): void {
    (this.toCoordinator.get(n.idx) as CoordinatorCommand[]).push(msg);
  }

  private onNodeMessage(n: SimNode, msg: RegionCommand): void {
    switch (msg.type) {
      case "register-ack":
        n.registered = true;
        return;
      case "host-shard":
        if (n.isProxy) throw new Error(`HostShard ${msg.shard} sent to proxy ${n.id}`);
        this.start(n, msg.shard);
        this.fromNode(n, { type: "shard-started", shard: msg.shard, from: n.id });
        return;
      case "shard-home":
        this.onHome(n, msg.shard, msg.region);
        return;
      case "shard-homes":
        for (const h of msg.homes) for (const s of h.shards) this.onHome(n, s, h.region);
        return;
      case "begin-hand-off":
        this.fromNode(n, {
          type: "begin-hand-off-ack",
          shard: msg.shard,
          handOffId: msg.handOffId,
          from: n.id,
        });
        return;
      case "hand-off": {
        const key = `${n.idx}:${msg.shard}`;
        const inProgress = this.stopping.get(key);
        if (inProgress !== undefined) {
          // a newer attempt while stopping: answer it when the stop completes
          inProgress.handOffId = msg.handOffId;
          return;
        }
        const delay = n.running.has(msg.shard) ? this.stopDelay() : 0;
        if (delay === 0) {
          n.running.delete(msg.shard);
          this.fromNode(n, {
            type: "shard-stopped",
            shard: msg.shard,
            handOffId: msg.handOffId,
            from: n.id,
          });
          return;
        }
        this.delayedStops++;
        this.trace.push(`${n.id} stopping ${msg.shard} until ${this.now + delay}`);
        this.stopping.set(key, {
          node: n,
          shard: msg.shard,
          handOffId: msg.handOffId,
          atMs: this.now + delay,
          order: this.timerSeq++,
        });
        return;
      }
    }
  }

  private stopDelay(): number {
    const max = this.config.stopDelayMaxMs ?? 0;
    if (max <= 0 || this.stopRandom.next() < 0.25) return 0;
    return 1 + Math.floor(this.stopRandom.next() * max);
  }

  /** The region's shard finished stopping: it stops running and reports ShardStopped. */
  private finishStop(p: PendingStop): void {
    this.stopping.delete(`${p.node.idx}:${p.shard}`);
    if (!p.node.alive) return;
    p.node.running.delete(p.shard);
    this.trace.push(`${p.node.id} stopped ${p.shard}`);
    this.fromNode(p.node, {
      type: "shard-stopped",
      shard: p.shard,
      handOffId: p.handOffId,
      from: p.node.id,
    });
  }

  private onHome(n: SimNode, shard: string, region: string): void {
    n.requested.delete(shard);
    n.answers.set(shard, region);
    if (region === n.id && !n.isProxy) this.start(n, shard);
  }

  private start(n: SimNode, shard: string): void {
    for (const other of this.nodes)
      if (other !== n && other.alive && other.running.has(shard))
        throw new Error(`shard ${shard} runs on ${other.id} and ${n.id}\n${this.dump()}`);
    n.running.add(shard);
  }

  // ---- the machine ------------------------------------------------------------------------

  feed(input: CoordinatorInput): void {
    this.trace.push(`in  ${JSON.stringify(input)}`);
    for (const o of this.machine.handle(input, this.now)) this.onOutput(o);
  }

  private onOutput(o: CoordinatorOutput): void {
    if (o.type !== "log") this.trace.push(`out ${JSON.stringify(o)}`);
    switch (o.type) {
      case "send":
        this.onSend(o.to, o.message);
        return;
      case "persist":
        if (this.writing !== undefined && this.writing.batchId !== o.batchId)
          throw new Error(`write ${o.batchId} while ${this.writing.batchId} is in flight`);
        this.writing = { batchId: o.batchId, events: o.events };
        return;
      case "start-timer":
        this.timers.set(o.key, [this.now + o.delayMs, this.timerSeq++]);
        return;
      case "cancel-timer":
        this.timers.delete(o.key);
        return;
      case "save-snapshot":
      case "log":
        return;
    }
  }

  private onSend(to: string, msg: RegionCommand): void {
    const node = this.nodes.find((n) => n.id === to);
    if (msg.type === "host-shard") {
      this.checkDurable(msg.shard, to);
      const prev = this.hostedBy.get(msg.shard);
      if (prev !== undefined && prev !== to)
        throw new Error(`HostShard ${msg.shard} to ${to} while ${prev} may run it\n${this.dump()}`);
      if (node?.alive) this.hostedBy.set(msg.shard, to);
    } else if (msg.type === "begin-hand-off") {
      const key = `${msg.shard}#${msg.handOffId}`;
      const entry = this.handOffAcks.get(key) ?? { sentTo: new Set(), acked: new Set() };
      entry.sentTo.add(to);
      this.handOffAcks.set(key, entry);
    } else if (msg.type === "hand-off") this.checkAllAcked(msg.shard, msg.handOffId);
    else if (msg.type === "shard-home") this.checkDurable(msg.shard, msg.region);
    else if (msg.type === "shard-homes")
      for (const h of msg.homes) for (const s of h.shards) this.checkDurable(s, h.region);
    if (node?.alive) (this.toNode.get(node.idx) as RegionCommand[]).push(msg);
  }

  /** HandOff only after every live recipient of BeginHandOff acked that attempt. */
  private checkAllAcked(shard: string, handOffId: number): void {
    const entry = this.handOffAcks.get(`${shard}#${handOffId}`);
    const missing = [...(entry?.sentTo ?? [])].filter(
      (id) => !entry?.acked.has(id) && this.nodes.find((n) => n.id === id)?.alive === true,
    );
    if (entry === undefined || missing.length > 0)
      throw new Error(`HandOff ${shard}#${handOffId} before acks of ${missing}\n${this.dump()}`);
  }

  private checkDurable(shard: string, region: string): void {
    const durable = this.durableHomes.get(shard);
    if (durable !== region)
      throw new Error(
        `announced ${shard}@${region} but the store has ${durable ?? "nothing"}\n${this.dump()}`,
      );
  }

  private recomputeDurableHomes(): void {
    const state = recoverCoordinatorState(undefined, this.journal, false);
    this.durableHomes = new Map();
    for (const [region, r] of state.regions())
      for (const s of r.shards) this.durableHomes.set(s, region);
  }

  /** The machine's durable state equals a fresh replay of the journal. */
  replayMatches(): boolean {
    const remember = this.machine.settings.rememberEntities;
    const replayed = recoverCoordinatorState(undefined, this.journal, remember).toSnapshot();
    return JSON.stringify(replayed) === JSON.stringify(this.machine.durableSnapshot());
  }

  dump(): string {
    return this.trace.slice(-60).join("\n");
  }
}
