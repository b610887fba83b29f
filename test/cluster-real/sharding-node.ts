/**
 * Test side of sharding-node-main.ts children: start them, drive their counters, query
 * sharding, and the cross-process oracles of the real-process sharding tests:
 *
 * - `incarnationViolations`: replays every child's entity-started / entity-stopped lines
 *   by their shared-clock time `t` (a stop before a start at the same ms; a SIGKILLed
 *   child's live incarnations end when it exited): never two live incarnations of one
 *   entity at once;
 * - `checkDelivery`: every incarnation's final tally (entity-stopped lines, and `get`
 *   reports for the live ones), chained in start order, must account for every message
 *   each sender sent, exactly once and in the order sent.
 *
 * Every wait is bounded and says what it waited for.
 */
import { expect } from "vitest";
import type { ChildEvent } from "../support/child-process.js";
import { request } from "../support/child-process.js";
import {
  type ClusterNode,
  COMMAND_TIMEOUT_MS,
  freePorts,
  seedNodesOf,
  startChildMember,
  stopMember,
} from "./cluster-node.js";
import type {
  EntityReport,
  EntityTypeConfig,
  SenderTally,
  ShardingNodeConfig,
} from "./sharding-node-main.js";

const SCRIPT = "test/cluster-real/sharding-node-main.ts";

/** How many delivery problems a failure message lists. */
const PROBLEMS_SHOWN = 20;

/** A sharding child; `killedAt` is set (epoch ms) once it was SIGKILLed. */
export interface ShardingNode extends ClusterNode {
  killedAt?: number;
}

export interface NodeSpec {
  readonly name: string;
  readonly roles?: readonly string[];
  readonly types: readonly EntityTypeConfig[];
  /** Start without seed nodes: the node joins on a `join` command (see joinNow). */
  readonly joinLater?: boolean;
  /** Start the management HTTP server with these options. */
  readonly management?: ShardingNodeConfig["management"];
  /** Join by discovery (seed nodes are then not passed). */
  readonly discovery?: ShardingNodeConfig["discovery"];
  /** Bound on the child's start-up (default START_TIMEOUT_MS of cluster-node.ts). */
  readonly startTimeoutMs?: number;
  /** Remoting host (default 127.0.0.1). */
  readonly host?: string;
  /** The cluster secret (a member off loopback needs one or TLS). */
  readonly secret?: string;
  /** Run the child in this network namespace. */
  readonly netns?: string;
  readonly logLevel?: ShardingNodeConfig["logLevel"];
}

export function startShardingNode(
  spec: NodeSpec,
  port: number,
  seedNodes: readonly string[],
): Promise<ShardingNode> {
  const config: ShardingNodeConfig = {
    port,
    seedNodes,
    roles: spec.roles,
    types: spec.types,
    ...(spec.management === undefined ? {} : { management: spec.management }),
    ...(spec.discovery === undefined ? {} : { discovery: spec.discovery }),
    ...(spec.secret === undefined ? {} : { secret: spec.secret }),
    ...(spec.host === undefined ? {} : { host: spec.host }),
    ...(spec.logLevel === undefined ? {} : { logLevel: spec.logLevel }),
  };
  return startChildMember(SCRIPT, spec.name, config, spec.startTimeoutMs, spec.netns);
}

/**
 * Starts one child per spec at once, on ascending free ports (so the first spec is the
 * oldest member: the lowest address, first seed); all of them are seed nodes unless
 * `seeds` says how many of the first ones are. Nodes with `joinLater` get no seed nodes.
 * Returns the nodes and the seed list.
 */
export async function startShardingNodes(
  specs: readonly NodeSpec[],
  seeds = specs.length,
): Promise<{ nodes: ShardingNode[]; seedNodes: string[] }> {
  const ports = (await freePorts(specs.length)).sort((a, b) => a - b);
  const seedNodes = seedNodesOf(ports.slice(0, seeds));
  const nodes = await Promise.all(
    specs.map((s, i) => startShardingNode(s, ports[i] as number, s.joinLater ? [] : seedNodes)),
  );
  return { nodes, seedNodes };
}

/** Makes a node started with `joinLater` join the cluster through `seed` ("host:port"). */
export async function joinNow(node: ShardingNode, seed: string): Promise<void> {
  await cmd(node, "join", { address: seed });
}

/** SIGKILLs `node` and records when it was gone (its entities died then). */
export async function killNode(node: ShardingNode): Promise<void> {
  await stopMember(node, "SIGKILL");
  node.killedAt = Date.now();
}

/** One command with an explicit reply bound (the default is COMMAND_TIMEOUT_MS). */
export function cmd(
  node: ClusterNode,
  name: string,
  args: Readonly<Record<string, unknown>> = {},
  timeoutMs = COMMAND_TIMEOUT_MS,
): Promise<ChildEvent> {
  return request(node.child, { cmd: name, ...args }, timeoutMs);
}

export const ids = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Messages `node` sent so far, per entity id. */
export type SentCounts = Record<string, number>;

export async function tell(
  node: ClusterNode,
  entityIds: readonly string[],
  args: { type?: string; n?: number; times?: number } = {},
): Promise<SentCounts> {
  return (await cmd(node, "tell", { ids: entityIds, ...args })).sent as SentCounts;
}

/** Asks every id for its report through `node` (asks retried for `retryForMs`). */
export async function getReports(
  node: ClusterNode,
  entityIds: readonly string[],
  args: { type?: string; timeoutMs?: number; retryForMs?: number } = {},
): Promise<EntityReport[]> {
  const bound = (args.retryForMs ?? 0) + (args.timeoutMs ?? 3_000) + COMMAND_TIMEOUT_MS;
  return (await cmd(node, "get", { ids: entityIds, ...args }, bound)).reports as EntityReport[];
}

export interface RegionStateReply {
  readonly region: string;
  readonly shards: readonly { readonly shardId: string; readonly entityIds: readonly string[] }[];
}

export async function regionState(node: ClusterNode, type?: string): Promise<RegionStateReply> {
  return (await cmd(node, "region-state", { type })).state as RegionStateReply;
}

export async function currentRegions(node: ClusterNode, type?: string): Promise<string[]> {
  return (await cmd(node, "regions", { type })).regions as string[];
}

export interface StatsReply {
  readonly regions: readonly { readonly region: string; readonly shards: Record<string, number> }[];
  readonly failed: readonly string[];
}

export async function shardingStats(
  node: ClusterNode,
  timeoutMs: number,
  type?: string,
): Promise<StatsReply> {
  return (await cmd(node, "stats", { type, timeoutMs }, timeoutMs * 3 + COMMAND_TIMEOUT_MS))
    .stats as StatsReply;
}

export interface LocationReply {
  readonly entityId: string;
  readonly shardId: string;
  readonly region?: string;
  readonly alive: boolean;
}

export async function entityLocation(
  node: ClusterNode,
  entityId: string,
  type?: string,
): Promise<LocationReply> {
  return (await cmd(node, "location", { type, entityId })).location as LocationReply;
}

/** "host:port" of a region id `sk@host:port/...`. */
export function regionHost(region: string): string {
  return region.slice(region.indexOf("@") + 1, region.indexOf("/"));
}

/** Shard ids per region host, from the cluster stats. */
export function shardsByHost(stats: StatsReply): Map<string, string[]> {
  return new Map(stats.regions.map((r) => [regionHost(r.region), Object.keys(r.shards).sort()]));
}

interface EntityLine {
  readonly event: "entity-started" | "entity-stopped";
  readonly type: string;
  readonly id: string;
  readonly inc: string;
  readonly node: string;
  readonly t: number;
}

function entityLines(nodes: readonly ShardingNode[], type: string): (EntityLine & ChildEvent)[] {
  return nodes.flatMap((n) =>
    n.child.events.filter(
      (e) => (e.event === "entity-started" || e.event === "entity-stopped") && e.type === type,
    ),
  ) as (EntityLine & ChildEvent)[];
}

/** Entity incarnations started on `node` (of `type`), in order. */
export function startedOn(node: ShardingNode, type: string): EntityLine[] {
  return entityLines([node], type).filter((e) => e.event === "entity-started");
}

/** Ids of the entities of `type` live on `node` now (by its lines). */
export function liveOn(node: ShardingNode, type: string): string[] {
  const live = new Map<string, string>();
  for (const e of entityLines([node], type)) {
    if (e.event === "entity-started") live.set(e.inc, e.id);
    else live.delete(e.inc);
  }
  return [...live.values()];
}

/**
 * Replays every entity line of `nodes` by time: each time an incarnation starts while
 * another of the same entity is live, one violation. A killed node's live incarnations
 * end at its killedAt.
 */
export function incarnationViolations(nodes: readonly ShardingNode[], type: string): string[] {
  type Step = { t: number; stop: boolean; id: string; inc: string; node: string };
  const steps: Step[] = entityLines(nodes, type).map((e) => ({
    t: e.t,
    stop: e.event === "entity-stopped",
    id: e.id,
    inc: e.inc,
    node: e.node,
  }));
  for (const n of nodes) {
    if (n.killedAt === undefined) continue;
    const live = new Map<string, EntityLine>();
    for (const e of entityLines([n], type)) {
      if (e.event === "entity-started") live.set(e.inc, e);
      else live.delete(e.inc);
    }
    for (const e of live.values())
      steps.push({ t: n.killedAt, stop: true, id: e.id, inc: e.inc, node: e.node });
  }
  steps.sort((a, b) => a.t - b.t || Number(b.stop) - Number(a.stop));
  const live = new Map<string, Step>();
  const violations: string[] = [];
  for (const s of steps) {
    const current = live.get(s.id);
    if (s.stop) {
      if (current?.inc === s.inc) live.delete(s.id);
      continue;
    }
    if (current !== undefined)
      violations.push(
        `${s.id}: incarnation ${s.inc} started on ${s.node} at ${s.t} while ${current.inc} on ${current.node} (since ${current.t}) was live`,
      );
    live.set(s.id, s);
  }
  return violations;
}

/** How strictly checkDelivery treats the order of one sender's messages. */
export type OrderCheck =
  /** Every message of a sender reached its counter in the order sent. */
  | "strict"
  /** Reordered messages are only counted, not a problem (checks that do not need order). */
  | "count";

export interface DeliveryCheck {
  readonly problems: string[];
  /** Messages that arrived after a later one of the same sender. */
  readonly reordered: number;
}

/**
 * Checks that the incarnations of each of `entityIds` together received every message of
 * every sender exactly once: per sender, each incarnation's seqs must be exactly
 * min..max (no gap, no repeat), continue where the previous incarnation's ended, and
 * the last must end at the number sent; with `order: "strict"` also in the order sent.
 * `live` are `get` reports of the live incarnations; stopped ones come from the
 * entity-stopped lines.
 */
export function checkDelivery(
  nodes: readonly ShardingNode[],
  type: string,
  entityIds: readonly string[],
  sent: Readonly<Record<string, SentCounts>>,
  live: readonly EntityReport[],
  order: OrderCheck = "strict",
): DeliveryCheck {
  const startT = new Map<string, number>();
  const reports = new Map<string, EntityReport>();
  for (const e of entityLines(nodes, type)) {
    if (e.event === "entity-started") startT.set(e.inc, e.t);
    else reports.set(e.inc, e as unknown as EntityReport);
  }
  for (const r of live) if (!reports.has(r.inc)) reports.set(r.inc, r);
  const byId = new Map<string, EntityReport[]>();
  for (const r of reports.values()) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
  for (const list of byId.values())
    list.sort((a, b) => (startT.get(a.inc) ?? 0) - (startT.get(b.inc) ?? 0));

  const problems: string[] = [];
  let reordered = 0;
  for (const id of entityIds) {
    const incs = byId.get(id) ?? [];
    let sentTotal = 0;
    for (const [sender, counts] of Object.entries(sent)) {
      const n = counts[id] ?? 0;
      sentTotal += n;
      let next = 1;
      for (const r of incs) {
        const tally: SenderTally | undefined = r.senders[sender];
        if (tally === undefined) continue;
        reordered += tally.bad;
        if (tally.bad > 0 && order === "strict")
          problems.push(`${id} from ${sender}: ${tally.bad} out of order in ${r.inc}`);
        if (tally.dup > 0) problems.push(`${id} from ${sender}: ${tally.dup} repeated in ${r.inc}`);
        if (tally.min !== next)
          problems.push(
            `${id} from ${sender}: incarnation ${r.inc} starts at seq ${tally.min}, expected ${next} (${tally.min > next ? "lost" : "repeated"})`,
          );
        if (tally.count !== tally.max - tally.min + 1)
          problems.push(
            `${id} from ${sender}: ${r.inc} got ${tally.count} for seqs ${tally.min}..${tally.max}`,
          );
        next = tally.max + 1;
      }
      if (next - 1 !== n)
        problems.push(`${id} from ${sender}: last seq received ${next - 1} of ${n} sent`);
    }
    const received = incs.reduce((x, r) => x + r.count, 0);
    if (received !== sentTotal)
      problems.push(
        `${id}: ${received} messages over ${incs.length} incarnation(s), sent ${sentTotal}`,
      );
  }
  return { problems, reordered };
}

/**
 * Polls the live incarnations of `entityIds` through `via` until checkDelivery finds
 * nothing (messages still in flight settle), or fails after `timeoutMs` with the problems.
 * Returns the reports and the number of reordered messages.
 */
export async function expectAllDelivered(
  nodes: readonly ShardingNode[],
  via: ShardingNode,
  type: string,
  entityIds: readonly string[],
  sent: Readonly<Record<string, SentCounts>>,
  timeoutMs: number,
  order: OrderCheck = "strict",
): Promise<{ reports: EntityReport[]; reordered: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const live = await getReports(via, entityIds, { type, timeoutMs: 3_000, retryForMs: 3_000 });
    const { problems, reordered } = checkDelivery(nodes, type, entityIds, sent, live, order);
    if (problems.length === 0 || Date.now() > deadline) {
      expect(
        problems.slice(0, PROBLEMS_SHOWN),
        `delivery of ${type} (first of ${problems.length} problems)`,
      ).toEqual([]);
      return { reports: live, reordered };
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The `log` events (warn/error records) of `node` whose message matches `pattern`. */
export function logLines(node: ClusterNode, pattern: RegExp): ChildEvent[] {
  return node.child.events.filter((e) => e.event === "log" && pattern.test(String(e.msg)));
}

/** Polls `check` every 50 ms until it yields a value other than undefined; fails after timeoutMs. */
export async function until<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The entity-stopped lines of `nodes` matching `predicate`. */
export function stopLines(
  nodes: readonly ShardingNode[],
  predicate: (e: ChildEvent) => boolean,
): ChildEvent[] {
  return nodes.flatMap((n) =>
    n.child.events.filter((e) => e.event === "entity-stopped" && predicate(e)),
  );
}

/** Waits until `node` has printed at least `count` log lines matching `pattern`; returns them. */
export function waitForLogLines(
  node: ClusterNode,
  pattern: RegExp,
  count: number,
  timeoutMs: number,
): Promise<ChildEvent[]> {
  return until(
    () => {
      const lines = logLines(node, pattern);
      return lines.length >= count ? lines : undefined;
    },
    timeoutMs,
    `${node.name}: ${count} log lines matching ${pattern}`,
  );
}
