/**
 * Cluster bootstrap by discovery on real processes (127.0.0.1, method "static": the
 * contact points are the members' management endpoints). Five members started at once in
 * random order (random start delays): exactly one cluster of five forms every time; then a
 * sixth member joins the existing cluster through discovery. SHARDKIT_BOOTSTRAP_REPEAT
 * sets the number of repetitions (default 1; `npm run test:bootstrap` runs 30).
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePorts, waitAllUp } from "../cluster-real/cluster-node.js";
import { type ShardingNode, startShardingNode } from "../cluster-real/sharding-node.js";
import { killAll } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";

installChildTeardown("perFile");

const REPEAT = Number(process.env.SHARDKIT_BOOTSTRAP_REPEAT ?? 1);
const MEMBERS = 5;
/** The members' log level (their logs are written to a file when a run fails). */
const LOG_LEVEL = (process.env.SHARDKIT_BOOTSTRAP_LOG_LEVEL ?? "info") as "debug" | "info" | "warn";
const TYPE = { name: "Counter", numberOfShards: 10 };
const FORM_TIMEOUT_MS = 40_000;
/** Five children compiling at once on a loaded 2-core machine. */
const START_TIMEOUT_MS = 60_000;

interface Members {
  readonly leader: string | null;
  readonly members: readonly { node: string; status: string }[];
}

async function membersOf(n: ShardingNode): Promise<Members> {
  const url = String(n.child.events.find((e) => e.event === "ready")?.managementUrl);
  const res = await fetch(`${url}/cluster/members`, { signal: AbortSignal.timeout(5_000) });
  return (await res.json()) as Members;
}

function discoveryOf(contactPoints: readonly string[], required: number) {
  return {
    method: "static" as const,
    contactPoints,
    requiredContactPoints: required,
    stableMarginMs: 1_000,
    probeIntervalMs: 200,
    probeTimeoutMs: 1_000,
  };
}

async function startAll(
  names: readonly string[],
  ports: readonly number[],
  mports: readonly number[],
  contactPoints: readonly string[],
): Promise<ShardingNode[]> {
  const order = names.map((_, i) => i).sort(() => Math.random() - 0.5);
  const started: Promise<ShardingNode>[] = new Array(names.length);
  for (const i of order)
    started[i] = new Promise<void>((r) => setTimeout(r, Math.random() * 1_500)).then(() =>
      startShardingNode(
        {
          name: names[i] as string,
          types: [TYPE],
          management: { port: mports[i] as number },
          discovery: discoveryOf(contactPoints, MEMBERS),
          startTimeoutMs: START_TIMEOUT_MS,
          logLevel: LOG_LEVEL,
        },
        ports[i] as number,
        [],
      ),
    );
  return Promise.all(started);
}

let last: { nodes: ShardingNode[]; contactPoints: string[] } | undefined;

describe("bootstrap by discovery (static contact points, real processes)", () => {
  for (let run = 1; run <= REPEAT; run++)
    it(`run ${run}/${REPEAT}: ${MEMBERS} members started at once in random order form exactly one cluster`, async () => {
      const ports = await freePorts(MEMBERS * 2);
      const rports = ports.slice(0, MEMBERS);
      const mports = ports.slice(MEMBERS);
      const contactPoints = mports.map((p) => `127.0.0.1:${p}`);
      const names = rports.map((_, i) => `M${i}`);
      let nodes: ShardingNode[] = [];
      try {
        nodes = await startAll(names, rports, mports, contactPoints);
        await waitAllUp(nodes, nodes, FORM_TIMEOUT_MS);
        const lowest = `sk@127.0.0.1:${Math.min(...rports)}`;
        for (const n of nodes) {
          const m = await membersOf(n);
          expect(m.members.map((x) => x.status)).toEqual(new Array(MEMBERS).fill("up"));
          expect(m.leader).toBe(lowest);
        }
        last = { nodes, contactPoints };
      } catch (error) {
        // every member's log, to see who formed and who joined whom
        const file = join(tmpdir(), `shardkit-bootstrap-static-run${run}-${process.pid}.log`);
        writeFileSync(
          file,
          nodes.map((n) => `=== ${n.child.name}\n${n.child.stderr.join("\n")}`).join("\n"),
        );
        throw new Error(`${(error as Error).message}\nlogs of every member: ${file}`, {
          cause: error,
        });
      } finally {
        // no member of a run outlives it, except the last run's (the next test uses them)
        if (run < REPEAT) await killAll();
      }
    }, 150_000);

  it("a new member joins the existing cluster through discovery", async () => {
    expect(last).toBeDefined();
    const { nodes, contactPoints } = last as { nodes: ShardingNode[]; contactPoints: string[] };
    const [rport, mport] = (await freePorts(2)) as [number, number];
    const newcomer = await startShardingNode(
      {
        name: "M-new",
        types: [TYPE],
        management: { port: mport },
        discovery: discoveryOf([...contactPoints, `127.0.0.1:${mport}`], 2),
        startTimeoutMs: START_TIMEOUT_MS,
      },
      rport,
      [],
    );
    await waitAllUp([...nodes, newcomer], [...nodes, newcomer], FORM_TIMEOUT_MS);
    const m = await membersOf(newcomer);
    expect(m.members).toHaveLength(MEMBERS + 1);
    expect(m.leader).toBe((await membersOf(nodes[0] as ShardingNode)).leader);
  }, 60_000);
});
