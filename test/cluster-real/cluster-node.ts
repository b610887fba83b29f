/**
 * Test-side handle of a cluster-node-main.ts child: free ports for seed nodes, start
 * members, read their cluster events, poll their state. Every wait is bounded; the
 * child-process harness kills leftovers (installChildTeardown in each test file).
 */
import { createServer, type Server } from "node:net";
import {
  type Child,
  type ChildEvent,
  kill,
  request,
  spawnNode,
  waitFor,
} from "../support/child-process.js";
import type { ClusterNodeConfig } from "./cluster-node-main.js";

/** How long a child may take to start (tsx compile + listen), on a busy 2-core box. */
export const START_TIMEOUT_MS = 40_000;
/** Bound on one command's reply. */
export const COMMAND_TIMEOUT_MS = 5_000;
/** How long a freshly started cluster may take to have every member Up with convergence. */
export const FORM_TIMEOUT_MS = 15_000;

export interface ClusterNode {
  readonly name: string;
  readonly child: Child;
  /** "127.0.0.1:port" */
  readonly hostPort: string;
  readonly port: number;
  readonly uid: string;
}

/** A cluster event line printed by a child. */
export interface ClusterEventLine {
  readonly type: string;
  readonly t: number;
  readonly member?: string;
  readonly status?: string;
  readonly previousStatus?: string;
  readonly leader?: string | null;
}

export interface MemberInfo {
  readonly hostPort: string;
  readonly status: string;
  readonly upNumber: number;
}

export interface StateReply {
  readonly self: MemberInfo | null;
  readonly members: readonly MemberInfo[];
  readonly unreachable: readonly string[];
  readonly leader: string | null;
  readonly convergence: boolean;
}

/**
 * `n` distinct free ports on 127.0.0.1: binds n listeners on port 0 at once (so the
 * kernel hands out distinct ports), reads them, closes them. Another process could take
 * one before the child binds it; on a test box that window is negligible.
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < n; i++) {
      const s = createServer();
      servers.push(s);
      await new Promise<void>((ok, fail) => {
        s.once("error", fail);
        s.listen(0, "127.0.0.1", () => ok());
      });
      const addr = s.address();
      if (addr === null || typeof addr === "string") throw new Error("no port");
      ports.push(addr.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((ok) => s.close(() => ok()))));
  }
}

export function seedNodesOf(ports: readonly number[]): string[] {
  return ports.map((p) => `127.0.0.1:${p}`);
}

export function startMember(name: string, config: ClusterNodeConfig): Promise<ClusterNode> {
  return startChildMember("test/cluster-real/cluster-node-main.ts", name, config);
}

/**
 * Starts `script` (a child main that prints `ready` with hostPort, port and uid, and
 * answers `state` like cluster-node-main.ts) with `config` as argv[2]; resolves once ready.
 */
export async function startChildMember(
  script: string,
  name: string,
  config: unknown,
  startTimeoutMs = START_TIMEOUT_MS,
  netns?: string,
): Promise<ClusterNode> {
  const child = spawnNode(script, [JSON.stringify(config)], {
    name,
    ...(netns === undefined ? {} : { netns }),
  });
  const ready = await waitFor(child, (e) => e.event === "ready", startTimeoutMs, "ready");
  return {
    name,
    child,
    hostPort: String(ready.hostPort),
    port: Number(ready.port),
    uid: String(ready.uid),
  };
}

/** Starts one member per port, all at once, every one with all ports as seed nodes. */
export function startSeedMembers(
  names: readonly string[],
  ports: readonly number[],
): Promise<ClusterNode[]> {
  const seedNodes = seedNodesOf(ports);
  return Promise.all(names.map((n, i) => startMember(n, { port: ports[i], seedNodes })));
}

export function command(
  node: ClusterNode,
  cmd: string,
  args: Readonly<Record<string, unknown>> = {},
): Promise<ChildEvent> {
  return request(node.child, { cmd, ...args }, COMMAND_TIMEOUT_MS);
}

export async function state(node: ClusterNode): Promise<StateReply> {
  return (await command(node, "state")) as unknown as StateReply;
}

/** Polls `node`'s state until `check` holds; the timeout message shows the last state. */
export async function waitForState(
  node: ClusterNode,
  check: (s: StateReply) => boolean,
  timeoutMs: number,
  what: string,
): Promise<StateReply> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await state(node);
    if (check(s)) return s;
    if (Date.now() > deadline)
      throw new Error(
        `${node.name}: timed out after ${timeoutMs} ms waiting for ${what}; last state ${JSON.stringify(s)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** True if `s` has exactly the members `hostPorts`, all Up, no unreachable, convergence. */
export function allUp(s: StateReply, hostPorts: readonly string[]): boolean {
  return (
    s.convergence &&
    s.unreachable.length === 0 &&
    s.members.length === hostPorts.length &&
    hostPorts.every((hp) => s.members.some((m) => m.hostPort === hp && m.status === "up"))
  );
}

/** Waits until every node in `nodes` reports exactly `members` Up with convergence. */
export function waitAllUp(
  nodes: readonly ClusterNode[],
  members: readonly ClusterNode[],
  timeoutMs = FORM_TIMEOUT_MS,
): Promise<StateReply[]> {
  const hps = members.map((m) => m.hostPort);
  return Promise.all(
    nodes.map((n) => waitForState(n, (s) => allUp(s, hps), timeoutMs, `all Up: ${hps.join(", ")}`)),
  );
}

/** The cluster events `node` printed so far (about `member`, if given). */
export function clusterEvents(node: ClusterNode, member?: string): ClusterEventLine[] {
  return node.child.events
    .filter((e) => e.event === "cluster" && (member === undefined || e.member === member))
    .map((e) => e as unknown as ClusterEventLine);
}

/** Waits for the cluster event `type` about `member` on `node`; returns it. */
export async function waitForEvent(
  node: ClusterNode,
  type: string,
  member: string,
  timeoutMs: number,
): Promise<ClusterEventLine> {
  const e = await waitFor(
    node.child,
    (x) => x.event === "cluster" && x.type === type && x.member === member,
    timeoutMs,
    `${type} of ${member}`,
  );
  return e as unknown as ClusterEventLine;
}

export function stopMember(node: ClusterNode, signal: NodeJS.Signals = "SIGKILL") {
  return kill(node.child, signal);
}

/**
 * Starts `names.length` seed members at once and waits until every one sees all of them
 * Up with convergence. Returns the nodes sorted by port (so `[0]` is the leader: the
 * lowest address) and the seed node list.
 */
export async function formCluster(
  names: readonly string[],
): Promise<{ nodes: ClusterNode[]; seedNodes: string[] }> {
  const ports = (await freePorts(names.length)).sort((a, b) => a - b);
  const nodes = await startSeedMembers(names, ports);
  const views = await waitAllUp(nodes, nodes);
  for (const v of views)
    if (v.leader !== nodes[0]?.hostPort)
      throw new Error(`leader is ${v.leader}, expected ${nodes[0]?.hostPort}`);
  return { nodes, seedNodes: seedNodesOf(ports) };
}
