/**
 * Test-side handle of a node-main.ts child: start it, wait for its ready line, and send
 * it commands. Every wait is bounded; the child-process harness kills leftovers.
 */

import type { RemotingStats } from "../../src/cluster/remoting/index.js";
import {
  type Child,
  type ChildEvent,
  kill,
  request,
  type SpawnOptions,
  spawnNode,
  waitFor,
} from "../support/child-process.js";
import type { NodeConfig } from "./node-main.js";

/** How long a child may take to start (tsx compile + remoting listen), on a busy 2-core box. */
export const START_TIMEOUT_MS = 15_000;
/** Default bound on one command's reply. */
export const COMMAND_TIMEOUT_MS = 10_000;

export interface RemoteNode {
  readonly name: string;
  readonly child: Child;
  /** `system@127.0.0.1:port` */
  readonly address: string;
  readonly port: number;
  readonly uid: string;
}

/** Fast failure detection and reconnects, so kill/restart tests stay short. */
export const FAST_SETTINGS = {
  watchHeartbeatIntervalMs: 200,
  watchAcceptableHeartbeatPauseMs: 1_000,
  reconnectBackoffMinMs: 50,
  reconnectBackoffMaxMs: 300,
} as const;

export async function startNode(
  name: string,
  config: NodeConfig = {},
  spawn: Omit<SpawnOptions, "name"> = {},
): Promise<RemoteNode> {
  const child = spawnNode("test/remote/node-main.ts", [JSON.stringify(config)], {
    ...spawn,
    name,
  });
  const ready = await waitFor(child, (e) => e.event === "ready", START_TIMEOUT_MS, "ready");
  return {
    name,
    child,
    address: String(ready.address),
    port: Number(ready.port),
    uid: String(ready.uid),
  };
}

/** Sends a command and returns the (ok) reply. */
export function command(
  node: RemoteNode,
  cmd: string,
  args: Readonly<Record<string, unknown>> = {},
  timeoutMs = COMMAND_TIMEOUT_MS,
): Promise<ChildEvent> {
  return request(node.child, { cmd, ...args }, timeoutMs);
}

/** Sends a command and returns its reply whether ok or not. */
export async function tryCommand(
  node: RemoteNode,
  cmd: string,
  args: Readonly<Record<string, unknown>> = {},
  timeoutMs = COMMAND_TIMEOUT_MS,
): Promise<ChildEvent> {
  try {
    return await command(node, cmd, args, timeoutMs);
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    const json = text.slice(text.indexOf("{"));
    try {
      return JSON.parse(json) as ChildEvent;
    } catch {
      throw error;
    }
  }
}

/** `from` asks `to`'s echo (or `path`) for `value`; returns the reply's `{ from, value }`. */
export async function askEcho(
  from: RemoteNode,
  to: RemoteNode,
  value: unknown,
  timeoutMs = 3_000,
): Promise<{ from: string; value: unknown }> {
  const r = await command(
    from,
    "ask",
    { address: to.address, path: "/user/echo", value, timeoutMs },
    timeoutMs + COMMAND_TIMEOUT_MS,
  );
  return r.reply as { from: string; value: unknown };
}

export type Stats = RemotingStats;

export async function stats(node: RemoteNode): Promise<Stats> {
  return (await command(node, "stats")).stats as Stats;
}

/** Polls `node`'s remoting stats until `check` holds; returns them. */
export async function waitForStats(
  node: RemoteNode,
  check: (s: Stats) => boolean,
  timeoutMs: number,
): Promise<Stats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await stats(node);
    if (check(s)) return s;
    if (Date.now() > deadline)
      throw new Error(
        `${node.name}: stats never matched within ${timeoutMs} ms: ${JSON.stringify(s)}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Polls `node`'s counter actor until it has seen `count` messages of the stream `from`
 * (the `from` a `seq` command returned); returns the counter's report.
 */
export async function waitForCounter(
  node: RemoteNode,
  from: string,
  count: number,
  timeoutMs: number,
): Promise<ChildEvent> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const report = await command(node, "counter");
    if ((report.senders as Record<string, number>)[from] === count) return report;
    if (Date.now() > deadline)
      throw new Error(`${node.name}: counter stuck: ${JSON.stringify(report)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Kills `node` with `signal` (default SIGKILL). */
export function stopNode(node: RemoteNode, signal: NodeJS.Signals = "SIGKILL") {
  return kill(node.child, signal);
}
