/**
 * Scenario G1 and G2 (real; docs/scenarios.md): a cluster singleton in three Node processes on 127.0.0.1
 * (real TCP, fixed ports chosen here, FAST timings), each running
 * singleton-node-main.ts.
 *
 * - G1: exactly one instance in the cluster, on the oldest member (the first seed); the
 *   proxy on every node reaches it.
 * - G2: the oldest shuts down gracefully (the `shutdown` command, i.e. node.shutdown,
 *   and then the next one by SIGTERM): its instance stops BEFORE the next oldest's
 *   starts (by the lines' shared clock), never two at once; every question asked
 *   through the proxies during the hand-over is answered by the old or the new
 *   instance, or was lost visibly, as a dead letter (delivery is at most once: a
 *   question that reaches the old instance while it stops is lost, docs/singleton.md
 *   "The proxy"); afterwards every proxy reaches the new instance; the old process
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
/** How much later a line of one child may arrive than a later line of another. */
const LINE_SKEW_MS = 2_000;

/** The first matching line of any of `nodes` (waits up to `timeoutMs`). */
async function waitForAny(
  nodes: readonly SNode[],
  predicate: (e: ChildEvent) => boolean,
  timeoutMs: number,
  what: string,
): Promise<ChildEvent> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const n of nodes) {
      const e = n.child.events.find(predicate);
      if (e !== undefined) return e;
    }
    if (Date.now() > deadline) throw new Error(what);
    await new Promise((r) => setTimeout(r, 20));
  }
}

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

let nextQuestion = 1;

/** Asks the singleton through `from`'s proxy where it runs. */
async function where(from: SNode): Promise<string> {
  const answer = await ask(from);
  if ("failed" in answer) throw new Error(answer.failed);
  return answer.node;
}

type Answer = { readonly node: string } | { readonly failed: string };

/** `where`, but a question that is not answered resolves with the failure. */
async function ask(from: SNode, q = `${from.name}-${nextQuestion++}`): Promise<Answer> {
  try {
    const reply = await request(
      from.child,
      { cmd: "where", q, timeoutMs: WHERE_TIMEOUT_MS },
      WHERE_TIMEOUT_MS + 1_000,
    );
    return { node: String(reply.node) };
  } catch (e) {
    return { failed: `question ${q}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function instanceLines(n: SNode, event: InstanceLine["event"]): ChildEvent[] {
  return n.child.events.filter((e) => e.event === event);
}

/**
 * Replays the instance lines in the order of their shared clock (`t`, epoch ms of the
 * processes on this machine): the most instances alive at once. Within one millisecond
 * a stop counts before a start: the clock cannot order them, and the hand-over's
 * causality (stop, then HandOverDone, then start) puts the stop first. The order in which
 * lines reach this process is no order of events: each child writes to its own pipe.
 */
function maxAliveAtOnce(log: readonly InstanceLine[]): number {
  const alive = new Set<string>();
  let max = 0;
  const byClock = [...log].sort(
    (x, y) => x.t - y.t || (x.event === y.event ? 0 : x.event === "instance-stopped" ? -1 : 1),
  );
  for (const l of byClock) {
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
  // Questions asked at the stop and every 50 ms until the new instance has started: each
  // is answered (buffered by the proxy while no instance is known), by the old or the new
  // instance, or was lost as a dead letter (sent to the old instance as it stopped).
  const asked: { q: string; answer: Promise<Answer> }[] = [];
  const askAll = () => {
    for (const a of askers) {
      const q = `${label}/${a.name}-${nextQuestion++}`;
      asked.push({ q, answer: ask(a, q) });
    }
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
  // The old instance's stop line travels another pipe than the new one's start line: it
  // may reach this process a little later, so it is waited for, then ordered by the clock.
  const stopped = await waitFor(
    old.child,
    (e) => e.event === "instance-stopped",
    LINE_SKEW_MS,
    `${label}: ${old.name}'s instance-stopped`,
  );
  expect(instanceLines(old, "instance-stopped"), `${label}: ${old.name} stopped once`).toHaveLength(
    1,
  );
  // Shared clock: the old instance stopped no later than the new one started.
  expect(Number(stopped.t), `${label}: stop before start`).toBeLessThanOrEqual(Number(started.t));
  expect(maxAliveAtOnce(arrivals), `instance lines ${JSON.stringify(arrivals)}`).toBe(1);

  const during = await Promise.all(asked.map(async ({ q, answer }) => ({ q, a: await answer })));
  const lost = during.filter((d) => "failed" in d.a).map((d) => d.q);
  for (const d of during)
    if ("node" in d.a) expect([old.hostPort, next.hostPort], d.q).toContain(d.a.node);
  // A question that was not answered must have been lost visibly: a dead letter on the
  // old node (it reached the stopping instance) or on the asker's (it could not be sent).
  for (const q of lost)
    await waitForAny(
      [old, ...askers],
      (e) => e.event === "dead-letter" && e.q === q,
      LINE_SKEW_MS,
      `${label}: question ${q} was not answered and is no dead letter anywhere`,
    );
  for (const a of askers) expect(await where(a), `where from ${a.name}`).toBe(next.hostPort);

  const exit = await old.child.exited;
  expect(exit, `${old.name}'s exit`).toEqual({ code: 0, signal: null });
  console.log(
    `[G2] ${label}: stop -> ${next.name} started ${Number(started.t) - startedAt} ms (old stopped at ${Number(stopped.t) - startedAt} ms), ${during.length} questions during hand-over: ${during.filter((d) => "node" in d.a && d.a.node === old.hostPort).length} answered by ${old.name}, ${lost.length} lost as dead letters`,
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
      const starts = [...arrivals]
        .sort((x, y) => x.t - y.t)
        .filter((l) => l.event === "instance-started")
        .map((l) => l.node);
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
