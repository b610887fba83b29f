/**
 * Runs an example as a real child process through tsx (killed in teardown if it hangs),
 * and finds free ports for the examples that take a base port.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { afterEach } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const TSX = resolve(ROOT, "node_modules/.bin/tsx");
const children: ChildProcess[] = [];

export function run(
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; out: string }> {
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
export async function freeRange(n: number): Promise<number> {
  const span = FIXED_PORTS_HIGH - FIXED_PORTS_LOW - n;
  for (let tries = 0; tries < 200; tries++) {
    const base = FIXED_PORTS_LOW + ((process.pid * 7 + tries * 101) % span);
    let free = true;
    for (let p = base; p < base + n && free; p++) free = await canListen(p);
    if (free) return base;
  }
  throw new Error(`no ${n} consecutive free ports in ${FIXED_PORTS_LOW}-${FIXED_PORTS_HIGH}`);
}

/** Kills, after each test of the file that calls it, every example still running. */
export function killExamplesAfterEach(): void {
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  });
}
