/**
 * The examples must run: `npm start`'s sharding demo, the actor demo and the README's
 * actor example, each as a real child process (killed in teardown if it hangs; the
 * sharding demo's own nodes exit when it goes away).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const TSX = resolve(ROOT, "node_modules/.bin/tsx");
const children: ChildProcess[] = [];

function run(args: string[], timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((done, fail) => {
    const child = spawn(TSX, args, {
      cwd: ROOT,
      env: { ...process.env, SHARDKIT_LOG_LEVEL: "warn" },
    });
    children.push(child);
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`timed out after ${timeoutMs} ms; output:\n${out}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

/** Below Linux's ephemeral range (32768-60999): no port the OS hands out lands here. */
const FIXED_PORTS_LOW = 20_000;
const FIXED_PORTS_HIGH = 32_000;

async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  const ok = await new Promise<boolean>((done) => {
    server.once("error", () => done(false));
    server.listen(port, "127.0.0.1", () => done(true));
  });
  if (ok) await new Promise<void>((done) => server.close(() => done()));
  return ok;
}

/**
 * `n` consecutive free ports for an example that takes a base port, searched below the
 * ephemeral range (a port from there could be taken by another test's outgoing
 * connection or listener between this check and the example's listen: CI once failed
 * with EADDRINUSE).
 */
async function freeRange(n: number): Promise<number> {
  const span = FIXED_PORTS_HIGH - FIXED_PORTS_LOW - n;
  for (let tries = 0; tries < 200; tries++) {
    const base = FIXED_PORTS_LOW + ((process.pid * 7 + tries * 101) % span);
    let free = true;
    for (let p = base; p < base + n && free; p++) free = await canListen(p);
    if (free) return base;
  }
  throw new Error(`no ${n} consecutive free ports in ${FIXED_PORTS_LOW}-${FIXED_PORTS_HIGH}`);
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

describe("examples", () => {
  it("the ddata example: majority writes on 3 members, every majority read sees them all", async () => {
    const { code, out } = await run(["examples/ddata-counter.ts", "--base-port", "25620"], 40_000);
    for (const k of [0, 1, 2])
      expect(out).toContain(`node-${k} reads visits=6 visitors=node-0,node-1,node-2`);
    expect(code).toBe(0);
  }, 50_000);

  it("the actor demo conserves money and exits 0", async () => {
    const { code, out } = await run(
      ["examples/actor-demo.ts", "--seconds", "2", "--accounts", "200"],
      30_000,
    );
    expect(out).toMatch(/t=1\.\ds transfers\/s=\d+/);
    expect(out).toContain("money conserved (200000/200000)");
    expect(code).toBe(0);
  }, 40_000);

  it("npm start's sharding demo runs 3 nodes on SQLite, moves node c's shards, restarts c, loses nothing and exits 0", async () => {
    const { code, out } = await run(["examples/sharding-demo/main.ts", "--seconds", "24"], 100_000);
    expect(out).toMatch(/t=\d+s msgs\/s=[\d ]+ entities=[\d ]+ shards a:\d+ b:\d+ c:\d+/);
    expect(out).toContain("stopping node c gracefully");
    expect(out).toMatch(
      /management API: a http:\/\/127\.0\.0\.1:\d+, b http:\/\/127\.0\.0\.1:\d+, c http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(out).toMatch(/npm run shardkit -- members --url http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toMatch(/dashboard \(open in a browser\): http:\/\/127\.0\.0\.1:\d+\/dashboard/);
    expect(out).toMatch(
      /shards moved: node c's (\d+) shards now run on a \(\d+\) and b \(\d+\) — a:\d+→\d+ b:\d+→\d+ c:\1→0/,
    );
    expect(out).toMatch(/t=12s msgs\/s=[\d ]+ entities=[\d ]+ shards a:\d+ b:\d+ c:gone/);
    expect(out).toContain("starting node c again");
    expect(out).toMatch(/node c is back with \d+ shards/);
    expect(out).toMatch(
      /state check: ([\d ]+) deposits acknowledged.*balances grew by [\d ]+: OK, nothing lost/,
    );
    expect(out).toContain("all nodes stopped; bye");
    expect(code).toBe(0);
  }, 110_000);

  it("three cluster members over TCP join, agree, and one leaves", async () => {
    const base = await freeRange(3);
    const { code, out } = await run(
      ["examples/cluster-three-nodes.ts", "--base-port", String(base)],
      30_000,
    );
    expect(out).toContain("all three Up");
    expect(out).toMatch(/node \d+ left; members now \d+, \d+/);
    expect(code).toBe(0);
  }, 40_000);

  it("the README sharding example runs on a one-node cluster", async () => {
    const port = await freeRange(1);
    const { code, out } = await run(["examples/readme-sharding.ts", String(port)], 30_000);
    expect(out).toContain("tea, scones");
    expect(code).toBe(0);
  }, 40_000);

  it("the README persistence example: an event-sourced, remembered cart on SQLite survives a restart", async () => {
    const port = await freeRange(1);
    const { code, out } = await run(["examples/readme-persistence.ts", String(port)], 40_000);
    expect(out).toContain("round 1: tea, scones");
    expect(out).toContain("round 2: cart-42 restarted without a message (remembered)");
    expect(out).toContain("round 2: tea, scones");
    expect(code).toBe(0);
  }, 50_000);

  it("the outbox demo redelivers unconfirmed messages after a restart on SQLite", async () => {
    const { code, out } = await run(["examples/outbox-demo.ts"], 30_000);
    expect(out).toMatch(/run 1: 20 sent, \d+ deliveries, \d+ lost, 6 unconfirmed at the crash/);
    expect(out).toMatch(/run 2: recovered, \d+ redeliveries, all 20 confirmed/);
    expect(code).toBe(0);
  }, 40_000);

  it("the README actor example runs", async () => {
    const { code, out } = await run(["examples/readme-actor.ts"], 20_000);
    expect(out.split("\n")[0]).toBe("2");
    expect(code).toBe(0);
  }, 30_000);
});
