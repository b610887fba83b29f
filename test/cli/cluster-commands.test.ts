/**
 * `shardkit members|shards|entity|leave|down|ready` against a live 3-member cluster
 * (sharding-node-main.ts children with the management option and a token), run in
 * process through runCli (capturing its lines) and once as the real `shardkit` process:
 * tables, --json, exit codes (0 ok, 1 failure, 2 usage, 3 not ready) and the error
 * messages for an unreachable API and a missing token.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/cli.js";
import { freePorts, seedNodesOf, waitAllUp } from "../cluster-real/cluster-node.js";
import {
  cmd,
  ids,
  type ShardingNode,
  startShardingNode,
  until,
} from "../cluster-real/sharding-node.js";
import { spawnNode } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";

installChildTeardown("perFile");

const TOKEN = "cli-test-token-0123456789";
const TYPE = "Counter";
const ENTITIES = ids("c", 20);
const EXIT_TIMEOUT_MS = 20_000;

interface Run {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
}

async function cli(...argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, {});
  return { code, out, err };
}

function urlOf(n: ShardingNode): string {
  return String(n.child.events.find((e) => e.event === "ready")?.managementUrl);
}

async function exited(n: ShardingNode) {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      n.child.exited,
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`${n.name} did not exit`)), EXIT_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

let a: ShardingNode;
let b: ShardingNode;
let c: ShardingNode;
type Three = [ShardingNode, ShardingNode, ShardingNode];

describe("shardkit cluster commands against a live cluster", () => {
  it("members: a table by default, the API's JSON with --json", async () => {
    const ports = (await freePorts(3)).sort((x, y) => x - y);
    const seeds = seedNodesOf(ports);
    [a, b, c] = (await Promise.all(
      ["A", "B", "C"].map((name, i) =>
        startShardingNode(
          {
            name,
            types: [{ name: TYPE, numberOfShards: 10 }],
            management: { port: 0, token: TOKEN },
          },
          ports[i] as number,
          seeds,
        ),
      ),
    )) as Three;
    await waitAllUp([a, b, c], [a, b, c]);
    const r = await cli("members", "--url", urlOf(a), "--token", TOKEN);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^NODE\s+STATUS\s+REACHABLE\s+ROLES\s+VERSION$/);
    expect(r.out[1]).toMatch(
      new RegExp(`^sk@${a.hostPort}\\s+up\\s+yes\\s+-\\s+1\\.0\\.0\\s+self,leader,oldest$`),
    );
    expect(r.out[2]).toMatch(new RegExp(`^sk@${b.hostPort}\\s+up\\s+yes\\s+-\\s+1\\.0\\.0\\s+-$`));
    expect(r.out.at(-1)).toBe(`3 member(s); leader sk@${a.hostPort}; convergence yes`);
    const j = await cli("members", "--url", urlOf(b), "--token", TOKEN, "--json");
    expect(j.code).toBe(0);
    const parsed = JSON.parse(j.out.join("\n")) as { self: string; members: unknown[] };
    expect(parsed.self).toBe(`sk@${b.hostPort}`);
    expect(parsed.members).toHaveLength(3);
  }, 60_000);

  it("shards <type> and entity <type> <id>", async () => {
    await cmd(a, "tell", { ids: ENTITIES });
    const r = await until(
      async () => {
        const x = await cli("shards", TYPE, "--url", urlOf(a), "--token", TOKEN);
        // every region registered (a member's may come late on a loaded machine) and
        // every entity counted
        const regions = x.out.filter((l) => l.startsWith("sk@")).length;
        return regions === 3 && x.out.at(-1)?.includes(`${ENTITIES.length} entit(ies)`)
          ? x
          : undefined;
      },
      15_000,
      "3 regions and every entity counted",
    );
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^REGION NODE\s+SHARDS\s+ENTITIES$/);
    expect(r.out.filter((l) => l.startsWith("sk@"))).toHaveLength(3);
    const j = await cli("shards", TYPE, "--url", urlOf(a), "--token", TOKEN, "--json");
    expect((JSON.parse(j.out.join("\n")) as { entityCount: number }).entityCount).toBe(
      ENTITIES.length,
    );
    const e = await cli("entity", TYPE, ENTITIES[0] as string, "--url", urlOf(a), "--token", TOKEN);
    expect(e.code).toBe(0);
    expect(e.out[0]).toMatch(
      new RegExp(`^${TYPE} c-0: shard \\d+ on sk@127\\.0\\.0\\.1:\\d+, running$`),
    );
    const none = await cli("shards", "Nope", "--url", urlOf(a), "--token", TOKEN);
    expect(none.code).toBe(1);
    expect(none.err[0]).toContain("404 SHARDING_TYPE_NOT_STARTED");
  }, 30_000);

  it("ready: exit 0 when ready, 3 with the failing checks when not", async () => {
    const ok = await cli("ready", "--url", urlOf(a));
    expect(ok.code).toBe(0);
    expect(ok.out[0]).toBe(`sk@${a.hostPort}: ready`);
    expect(ok.out.slice(1)).toEqual([
      "  ok   member-up",
      "  ok   not-shutting-down",
      "  ok   sharding-regions-registered",
    ]);
    // D's only seed is a port nobody listens on: it never becomes a member
    const [dPort, nobody] = await freePorts(2);
    const d = await startShardingNode(
      { name: "D", types: [{ name: TYPE }], management: { port: 0 } },
      dPort as number,
      seedNodesOf([nobody as number]),
    );
    const notReady = await cli("ready", "--url", urlOf(d));
    expect(notReady.code).toBe(3);
    expect(notReady.out[0]).toBe(`sk@${d.hostPort}: NOT ready`);
    expect(notReady.out[1]).toMatch(/^ {2}FAIL member-up: this member is not a member yet/);
    const j = await cli("ready", "--url", urlOf(d), "--json");
    expect(j.code).toBe(3);
    expect((JSON.parse(j.out.join("\n")) as { code: string }).code).toBe("NOT_READY");
  }, 40_000);

  it("errors: unreachable API, missing or wrong token (1), usage (2)", async () => {
    const [free] = await freePorts(1);
    const down = await cli("members", "--url", `http://127.0.0.1:${free}`);
    expect(down.code).toBe(1);
    expect(down.err[0]).toBe(
      `shardkit members: cannot reach the management API at http://127.0.0.1:${free}: connection refused (is the node running with the management option, on this port? set --url or $SHARDKIT_MANAGEMENT_URL)`,
    );
    const noToken = await cli("members", "--url", urlOf(a));
    expect(noToken.code).toBe(1);
    expect(noToken.err[0]).toContain("401 UNAUTHORIZED");
    expect(noToken.err[0]).toContain("pass --token or set $SHARDKIT_MANAGEMENT_TOKEN");
    const wrong = await cli("leave", b.hostPort, "--url", urlOf(a), "--token", "x".repeat(20));
    expect(wrong.code).toBe(1);
    expect(wrong.err[0]).toContain("403 FORBIDDEN");
    const usage = await cli("shards", "--url", urlOf(a));
    expect(usage.code).toBe(2);
    expect(usage.err[0]).toBe(
      "shardkit shards: expected <type>, got none (see shardkit shards --help)",
    );
    expect((await cli("members", "--url", "ftp://x")).code).toBe(2);
    expect((await cli("members", "--bogus")).code).toBe(2);
    expect((await cli("members", "--timeout-ms", "0")).code).toBe(2);
    const help = await cli("members", "--help");
    expect(help.code).toBe(0);
    expect(help.out.join("\n")).toContain("Exit codes: 0 ok, 1 failure");
  }, 30_000);

  it("leave <address> and down <address>", async () => {
    const l = await cli("leave", `sk@${b.hostPort}`, "--url", urlOf(a), "--token", TOKEN);
    expect(l.code).toBe(0);
    expect(l.out).toEqual([`leaving sk@${b.hostPort}`]);
    expect(await exited(b)).toEqual({ code: 0, signal: null });
    const d = await cli("down", c.hostPort, "--url", urlOf(a), "--token", TOKEN);
    expect(d.code).toBe(0);
    expect(d.out).toEqual([`downing sk@${c.hostPort}`]);
    expect(await exited(c)).toEqual({ code: 0, signal: null });
    await waitAllUp([a], [a], EXIT_TIMEOUT_MS);
  }, 60_000);

  it("the shardkit process: output on stdout, exit code, env defaults", async () => {
    const child = spawnNode("src/cli/main.ts", ["members"], {
      name: "shardkit-members",
      env: { SHARDKIT_MANAGEMENT_URL: urlOf(a), SHARDKIT_MANAGEMENT_TOKEN: TOKEN },
    });
    const exit = await child.exited;
    expect(exit.code).toBe(0);
    expect(child.stdoutNoise.at(-1)).toBe(`1 member(s); leader sk@${a.hostPort}; convergence yes`);
    const [free] = await freePorts(1);
    const refused = spawnNode("src/cli/main.ts", ["ready", "--url", `http://127.0.0.1:${free}`], {
      name: "shardkit-ready",
    });
    expect((await refused.exited).code).toBe(1);
    expect(refused.stderr.join("\n")).toContain("connection refused");
  }, 40_000);
});
