/**
 * Scenario G1 and G2 (real; docs/scenarios.md): a cluster singleton in three Node processes on 127.0.0.1
 * (real TCP, fixed ports chosen here, FAST timings), each running
 * singleton-node-main.ts.
 *
 * - G1: exactly one instance in the cluster, on the oldest member (the first seed); the
 *   proxy on every node reaches it.
 * - G2: the oldest shuts down gracefully (the `shutdown` command, i.e. node.shutdown,
 *   and then the next one by SIGTERM): its instance stops BEFORE the next oldest's
 *   starts (by the lines' shared clock and by the order the lines reach this process),
 *   never two at once; questions asked through the proxies during the hand-over are
 *   all answered; afterwards every proxy reaches the new instance; the old process
 *   exits with code 0.
 * - G2, rolling restart: the next oldest leaves right after the oldest was removed; the
 *   third node must not wait for the removal margin of the first leaver. FAILS today
 *   (see the BUG note at the test).
 */
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import {
  type Child,
  type ChildEvent,
  request,
  spawnNode,
  waitFor,
} from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import { freePorts, seedNodesOf } from "./cluster-node.js";
import { SBR_STABLE_AFTER_MS } from "./fast-settings.js";
import type { SingletonNodeConfig } from "./singleton-node-main.js";

installChildTeardown("perTest");

/**
 * A child may take many seconds to start (tsx compile) on a busy 2-core box: 10 s failed
 * beside three busy loops. Each test's own timeout leaves room for it (START_SLACK_MS).
 */
const START_TIMEOUT_MS = 40_000;
const START_SLACK_MS = START_TIMEOUT_MS;
const FORM_TIMEOUT_MS = 10_000;
const COMMAND_TIMEOUT_MS = 5_000;
/** `where` timeout inside the child (the reply must come within it, plus slack). */
const WHERE_TIMEOUT_MS = 5_000;
const HAND_OVER_TIMEOUT_MS = 10_000;

interface SNode {
  readonly name: string;
  readonly child: Child;
  readonly hostPort: string;
}

/** One instance line, in the order the lines reached this process (across children). */
interface InstanceLine {
  readonly event: "instance-started" | "instance-stopped";
  readonly node: string;
  readonly t: number;
}

/** The current test's instance-started/-stopped lines of every child, in arrival order. */
let arrivals: InstanceLine[] = [];

/** Appends `child`'s instance lines to `log` (the log of the test that started it). */
function recordArrivals(child: Child, log: InstanceLine[]): void {
  createInterface({ input: child.process.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    if (!line.startsWith("{")) return;
    try {
      const e = JSON.parse(line) as ChildEvent;
      if (e.event === "instance-started" || e.event === "instance-stopped")
        log.push({ event: e.event, node: String(e.node), t: Number(e.t) });
    } catch {
      // not a JSON line: the harness keeps it as noise
    }
  });
}

async function startNodes(names: readonly string[]): Promise<SNode[]> {
  const log: InstanceLine[] = [];
  arrivals = log;
  // Ascending ports: members with equal up-numbers are aged by address, so then the
  // first seed is also the lowest address.
  const ports = (await freePorts(names.length)).sort((x, y) => x - y);
  const seedNodes = seedNodesOf(ports);
  return Promise.all(
    names.map(async (name, i) => {
      const config: SingletonNodeConfig = { port: ports[i] as number, seedNodes };
      const child = spawnNode(
        "test/cluster-real/singleton-node-main.ts",
        [JSON.stringify(config)],
        {
          name,
        },
      );
      recordArrivals(child, log);
      const ready = await waitFor(child, (e) => e.event === "ready", START_TIMEOUT_MS, "ready");
      return { name, child, hostPort: String(ready.hostPort) };
    }),
  );
}

interface StateReply {
  readonly members: readonly { hostPort: string; status: string; upNumber: number }[];
  readonly convergence: boolean;
}

/** Polls every node until it sees exactly `members` Up with convergence; returns the views. */
async function waitAllUp(
  nodes: readonly SNode[],
  members: readonly SNode[],
): Promise<StateReply[]> {
  const want = members.map((m) => m.hostPort).sort();
  return Promise.all(
    nodes.map(async (n) => {
      const deadline = Date.now() + FORM_TIMEOUT_MS;
      for (;;) {
        const s = (await request(
          n.child,
          { cmd: "state" },
          COMMAND_TIMEOUT_MS,
        )) as unknown as StateReply;
        const up = s.members.filter((m) => m.status === "up").map((m) => m.hostPort);
        if (s.convergence && s.members.length === want.length && up.sort().join() === want.join())
          return s;
        if (Date.now() > deadline)
          throw new Error(
            `${n.name}: not all Up after ${FORM_TIMEOUT_MS} ms: ${JSON.stringify(s)}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
    }),
  );
}

const portOf = (hostPort: string): number => Number(hostPort.split(":")[1]);

/** `nodes` oldest first, by the view `s` (lower upNumber, then lower address). */
function byAge(nodes: readonly SNode[], s: StateReply): SNode[] {
  const age = [...s.members].sort(
    (x, y) => x.upNumber - y.upNumber || portOf(x.hostPort) - portOf(y.hostPort),
  );
  return age.map((m) => {
    const n = nodes.find((x) => x.hostPort === m.hostPort);
    if (n === undefined) throw new Error(`unknown member ${m.hostPort}`);
    return n;
  });
}

/** Asks the singleton through `from`'s proxy where it runs. */
async function where(from: SNode): Promise<string> {
  const reply = await request(
    from.child,
    { cmd: "where", timeoutMs: WHERE_TIMEOUT_MS },
    WHERE_TIMEOUT_MS + 1_000,
  );
  return String(reply.node);
}

function instanceLines(n: SNode, event: InstanceLine["event"]): ChildEvent[] {
  return n.child.events.filter((e) => e.event === event);
}

/** Replays the arrival log: at no point are two instances alive. */
function maxAliveAtOnce(log: readonly InstanceLine[]): number {
  const alive = new Set<string>();
  let max = 0;
  for (const l of log) {
    if (l.event === "instance-started") alive.add(l.node);
    else alive.delete(l.node);
    max = Math.max(max, alive.size);
  }
  return max;
}

/**
 * Hands the singleton over from `old` to `next` by stopping `old` with `stop` while
 * `askers` keep asking where it runs; checks the order and the answers.
 */
async function handOver(
  label: string,
  old: SNode,
  next: SNode,
  askers: readonly SNode[],
  stop: () => void,
): Promise<void> {
  const startedAt = Date.now();
  // Questions asked at the stop and every 50 ms until the new instance has started: every
  // one is answered (buffered by the proxy while no instance is known), by the old or the
  // new instance.
  const answers: Promise<string>[] = [];
  const askAll = () => {
    for (const a of askers) answers.push(where(a));
  };
  stop();
  askAll();
  const asking = setInterval(askAll, 50);
  let started: ChildEvent;
  try {
    started = await waitFor(
      next.child,
      (e) => e.event === "instance-started",
      HAND_OVER_TIMEOUT_MS,
      `${label}: instance-started on ${next.name}`,
    );
  } finally {
    clearInterval(asking);
  }
  const stopped = instanceLines(old, "instance-stopped");
  expect(
    stopped,
    `${label}: ${old.name}'s instance-stopped before ${next.name}'s start`,
  ).toHaveLength(1);
  // Shared clock: the old instance stopped no later than the new one started.
  expect(Number(stopped[0]?.t)).toBeLessThanOrEqual(Number(started.t));
  // Arrival order: the stop line reached this process before the start line.
  const iStop = arrivals.findIndex(
    (l) => l.event === "instance-stopped" && l.node === old.hostPort,
  );
  const iStart = arrivals.findIndex(
    (l) => l.event === "instance-started" && l.node === next.hostPort,
  );
  expect(iStop, `${label}: arrival log ${JSON.stringify(arrivals)}`).toBeGreaterThanOrEqual(0);
  expect(iStop).toBeLessThan(iStart);
  expect(maxAliveAtOnce(arrivals), `arrival log ${JSON.stringify(arrivals)}`).toBe(1);

  const during = await Promise.all(answers);
  for (const a of during) expect([old.hostPort, next.hostPort]).toContain(a);
  for (const a of askers) expect(await where(a), `where from ${a.name}`).toBe(next.hostPort);

  const exit = await old.child.exited;
  expect(exit, `${old.name}'s exit`).toEqual({ code: 0, signal: null });
  console.log(
    `[G2] ${label}: stop -> ${next.name} started ${Number(started.t) - startedAt} ms (old stopped at ${Number(stopped[0]?.t) - startedAt} ms), ${during.length} questions during hand-over answered (${during.filter((a) => a === old.hostPort).length} by ${old.name})`,
  );
}

/**
 * Starts A, B, C (all seeds, A first), waits until all are Up and `where` from every node
 * answers A; returns them oldest first: the oldest (A, the first seed), the next oldest,
 * the youngest.
 */
async function formThree(): Promise<[SNode, SNode, SNode]> {
  const nodes = await startNodes(["A", "B", "C"]);
  const [view] = await waitAllUp(nodes, nodes);
  const aged = byAge(nodes, view as StateReply) as [SNode, SNode, SNode];
  expect(aged[0].name, "the oldest is the first seed").toBe("A");
  for (const n of nodes) expect(await where(n), `where from ${n.name}`).toBe(aged[0].hostPort);
  return aged;
}

describe("G real: cluster singleton in three processes", () => {
  it(
    "G1: exactly one instance, on the oldest (first seed); where from every node answers it",
    async () => {
      const t0 = Date.now();
      const nodes = await startNodes(["A", "B", "C"]);
      const [a] = nodes as [SNode, SNode, SNode];
      const [view] = await waitAllUp(nodes, nodes);
      // The first seed joins itself first: it is the oldest.
      expect(byAge(nodes, view as StateReply)[0]?.name).toBe("A");
      for (const n of nodes) expect(await where(n), `where from ${n.name}`).toBe(a.hostPort);
      // Let a few gossip/identify rounds pass: still exactly one instance, never stopped.
      await new Promise((r) => setTimeout(r, 500));
      const started = nodes.flatMap((n) => instanceLines(n, "instance-started"));
      expect(started.map((e) => e.node)).toEqual([a.hostPort]);
      expect(nodes.flatMap((n) => instanceLines(n, "instance-stopped"))).toEqual([]);
      expect(maxAliveAtOnce(arrivals)).toBe(1);
      console.log(`[G1] formed and answered from 3 nodes in ${Date.now() - t0} ms`);
    },
    15_000 + START_SLACK_MS,
  );

  it(
    "G2: the oldest shuts down (node.shutdown), then the next by SIGTERM: each instance stops before the next starts, proxies answer throughout, the old process exits 0",
    async () => {
      const [a, b, c] = await formThree();

      await handOver(`${a.name} by shutdown command`, a, b, [b, c], () =>
        a.child.send({ cmd: "shutdown", id: 0 }),
      );
      const done = await waitFor(a.child, (e) => e.event === "shutdown-done", 1_000);
      expect(done.reason).toBe("user");
      await waitAllUp([b, c], [b, c]);

      await handOver(`${b.name} by SIGTERM`, b, c, [c], () => b.child.process.kill("SIGTERM"));
      const starts = arrivals.filter((l) => l.event === "instance-started").map((l) => l.node);
      expect(starts).toEqual([a.hostPort, b.hostPort, c.hostPort]);
    },
    20_000 + START_SLACK_MS,
  );

  // BUG (src/core/singleton/singleton-manager.ts, blockers()): fails today. A rolling
  // restart: the oldest leaves and is removed, then the next oldest leaves. The third
  // node gets HandOverDone from the second within milliseconds, but still waits for the
  // removal margin (removalMarginMs = SBR stableAfterMs: 2 s here, 20 s by default) of
  // the FIRST leaver, which handed over long ago: the singleton is unavailable meanwhile.
  // Akka/Pekko start at once on HandOverDone from the previous oldest.
  it(
    "G2: the next oldest leaves right after the oldest was removed: the hand-over does not wait for the first leaver's removal margin",
    async () => {
      const [a, b, c] = await formThree();
      a.child.send({ cmd: "shutdown", id: 0 });
      await waitFor(b.child, (e) => e.event === "instance-started", HAND_OVER_TIMEOUT_MS);
      await waitFor(
        c.child,
        (e) => e.event === "member" && e.type === "member-removed" && e.member === a.hostPort,
        HAND_OVER_TIMEOUT_MS,
        `${c.name} sees ${a.name} removed`,
      );
      b.child.process.kill("SIGTERM");
      const started = await waitFor(
        c.child,
        (e) => e.event === "instance-started",
        HAND_OVER_TIMEOUT_MS,
        `instance-started on ${c.name}`,
      );
      const stopped = await waitFor(b.child, (e) => e.event === "instance-stopped", 1_000);
      const gapMs = Number(started.t) - Number(stopped.t);
      console.log(`[G2] ${b.name} stopped -> ${c.name} started: ${gapMs} ms`);
      expect(gapMs).toBeGreaterThanOrEqual(0);
      // A hand-over takes tens of ms; the margin would add about SBR_STABLE_AFTER_MS.
      expect(gapMs, "gap between the old instance's stop and the new one's start").toBeLessThan(
        SBR_STABLE_AFTER_MS / 2,
      );
      expect(await b.child.exited).toEqual({ code: 0, signal: null });
    },
    15_000 + START_SLACK_MS,
  );
});
