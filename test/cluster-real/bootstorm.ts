/**
 * Issue 21: N real member processes started at the same moment on this machine (default
 * timings, 3 seed nodes), until every member sees all N Up with convergence; then the
 * idle cost per member. Used by `npm run test:bootstorm` (bootstorm-run.ts, which fails
 * on a down or a timeout) and by `npm run bench -- bootstorm`. Not part of `npm test`:
 * 50 processes saturate the 2 cores for a minute or more. Every child is killed at the
 * end (killAll), also on failure.
 */
import { killAll } from "../support/child-process.js";
import {
  type ClusterNode,
  clusterEvents,
  command,
  freePorts,
  type StateReply,
  seedNodesOf,
  startChildMember,
  state,
} from "./cluster-node.js";

export interface BootStormResult {
  readonly members: number;
  /** From the spawn of the first process until every member sees all Up, converged. */
  readonly formedMs: number;
  /** member-downed events seen by any member, plus members that were removed. */
  readonly downs: number;
  /** Per member CPU while idle, percent of one core (median over members). */
  readonly idleCpuPctMedian: number;
  /** Resident memory per member while idle, MiB (median). */
  readonly rssMiBMedian: number;
}

/** How long a member may take to start when N start together on 2 cores. */
const START_TIMEOUT_MS = 180_000;
const POLL_INTERVAL_MS = 2_000;

function complete(s: StateReply, n: number): boolean {
  return (
    s.convergence &&
    s.unreachable.length === 0 &&
    s.members.length === n &&
    s.members.every((m) => m.status === "up")
  );
}

/** Distinct members downed (as any member saw it), plus members removed by themselves. */
function downsOf(nodes: readonly ClusterNode[]): number {
  const downed = new Set<string>();
  for (const n of nodes) {
    for (const e of clusterEvents(n)) if (e.type === "member-downed") downed.add(String(e.member));
    if (n.child.events.some((e) => e.event === "self-removed")) downed.add(n.hostPort);
  }
  return downed.size;
}

/** The resolver's decisions and the stall warnings in the members' logs (diagnostics). */
function decisionsOf(nodes: readonly ClusterNode[]): string[] {
  const decisions: string[] = [];
  const stalls: string[] = [];
  for (const n of nodes)
    for (const l of n.child.stderr) {
      if (/split brain resolver|removed from the cluster/.test(l))
        decisions.push(`${n.name}: ${l.slice(0, 600)}`);
      else if (/itself was stalled/.test(l)) stalls.push(`${n.name}: ${l.slice(0, 300)}`);
    }
  return [...decisions, ...stalls];
}

/** Runs one boot storm of `n` members; `idleSampleMs` of idle measurement after forming. */
export async function bootStorm(
  n: number,
  options: { timeoutMs?: number; idleSampleMs?: number; log?: (line: string) => void } = {},
): Promise<BootStormResult> {
  const timeoutMs = options.timeoutMs ?? 240_000;
  const idleSampleMs = options.idleSampleMs ?? 20_000;
  const log = options.log ?? (() => {});
  try {
    const ports = (await freePorts(n)).sort((a, b) => a - b);
    const seedNodes = seedNodesOf(ports.slice(0, 3));
    const t0 = Date.now();
    const nodes = await Promise.all(
      ports.map((port, i) =>
        startChildMember(
          "test/cluster-real/cluster-node-main.ts",
          `m${i}`,
          { port, seedNodes, profile: "default" },
          START_TIMEOUT_MS,
        ),
      ),
    );
    log(`all ${n} processes ready after ${Date.now() - t0} ms`);
    for (;;) {
      const states = await Promise.all(nodes.map((x) => state(x).catch(() => undefined)));
      const done = states.filter((s) => s !== undefined && complete(s, n)).length;
      const downs = downsOf(nodes);
      if (done === n) break;
      if (downs > 0 || Date.now() - t0 > timeoutMs) {
        const leader = states[0];
        for (const l of decisionsOf(nodes).slice(0, 40)) log(l);
        throw new Error(
          `boot storm of ${n}: ${done}/${n} members see all Up after ${Date.now() - t0} ms, ` +
            `${downs} downs; m0 sees ${JSON.stringify(
              leader?.members.reduce<Record<string, number>>((acc, m) => {
                acc[m.status] = (acc[m.status] ?? 0) + 1;
                return acc;
              }, {}),
            )}, unreachable ${leader?.unreachable.length}`,
        );
      }
      log(`${Date.now() - t0} ms: ${done}/${n} members see all ${n} Up with convergence`);
      await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
    }
    const formedMs = Date.now() - t0;
    log(`formed after ${formedMs} ms`);
    // idle: let the start-up settle, then measure CPU over idleSampleMs
    await new Promise((r) => setTimeout(r, 5_000));
    const usage = async () =>
      Promise.all(
        nodes.map(
          async (x) =>
            (await command(x, "usage")) as unknown as {
              cpuUserMs: number;
              cpuSystemMs: number;
              rssBytes: number;
              uptimeMs: number;
            },
        ),
      );
    const before = await usage();
    await new Promise((r) => setTimeout(r, idleSampleMs));
    const after = await usage();
    const cpu = after.map((a, i) => {
      const b = before[i] as (typeof before)[number];
      return (
        ((a.cpuUserMs + a.cpuSystemMs - b.cpuUserMs - b.cpuSystemMs) / (a.uptimeMs - b.uptimeMs)) *
        100
      );
    });
    const rss = after.map((a) => a.rssBytes / 1024 / 1024);
    const med = (v: number[]) => {
      const s = [...v].sort((x, y) => x - y);
      const m = s.length >> 1;
      return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
    };
    return {
      members: n,
      formedMs,
      downs: downsOf(nodes),
      idleCpuPctMedian: med(cpu),
      rssMiBMedian: med(rss),
    };
  } finally {
    await killAll();
  }
}
