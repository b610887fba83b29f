/**
 * Join diagnostics and start-up validation of ClusterNode.start on real TCP, in one
 * process: a member that cannot join logs at warn what it tries and why it fails, per
 * seed node and cause; bad seed strings are refused before anything is bound.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ClusterNode, type ClusterNodeOptions } from "../../src/api/index.js";
import { ConfigError } from "../../src/base/errors.js";
import { FrameType, FrameWriter } from "../../src/protocol/framing.js";
import {
  encodeHandshakeReject,
  PROTOCOL_VERSION,
  RejectReason,
} from "../../src/protocol/handshake.js";
import { ConsoleLogger, createNodeRuntime } from "../../src/runtime/node/index.js";
import { freePorts } from "../cluster-real/cluster-node.js";
import { FAST_CLUSTER_SETTINGS } from "../cluster-real/fast-settings.js";
import { type Child, type ExitInfo, spawnNode, waitFor } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";

interface Captured {
  readonly level: string;
  readonly msg: string;
}

installChildTeardown("perFile");

const nodes: ClusterNode[] = [];
const servers: Server[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.system.terminate()));
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((ok) => s.close(() => ok()))));
}, 15_000);

function capturingRuntime(records: Captured[]) {
  return createNodeRuntime({
    logger: new ConsoleLogger({
      level: "warn",
      format: "json",
      write: (line) => {
        const r = JSON.parse(line) as { level: string; msg: string };
        records.push({ level: r.level, msg: r.msg });
      },
    }),
  });
}

async function start(
  options: Partial<ClusterNodeOptions> & { seedNodes: readonly string[] },
  records: Captured[] = [],
): Promise<ClusterNode> {
  const node = await ClusterNode.start({
    systemName: "sk",
    port: 0,
    handleSignals: false,
    settings: { ...FAST_CLUSTER_SETTINGS, joinDiagnosticsIntervalMs: 300 },
    runtime: capturingRuntime(records),
    ...options,
  });
  nodes.push(node);
  return node;
}

async function waitForWarning(records: Captured[], text: string, timeoutMs = 8_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = records.find((r) => r.level === "warn" && r.msg.includes(text));
    if (hit !== undefined) return hit.msg;
    if (Date.now() > deadline)
      throw new Error(
        `no warning containing ${JSON.stringify(text)}; got:\n${records.map((r) => `${r.level} ${r.msg}`).join("\n")}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function listen(onConnection: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    sockets.push(socket);
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", () => ok()));
  const a = server.address();
  if (a === null || typeof a === "string") throw new Error("no port");
  return a.port;
}

function portOf(node: ClusterNode): number {
  return node.remoting.node.port;
}

describe("join diagnostics", () => {
  it("connection refused: names the seed and the cause, rate-limited", async () => {
    const [free] = await freePorts(1);
    const records: Captured[] = [];
    await start({ seedNodes: [`127.0.0.1:${free}`] }, records);
    const msg = await waitForWarning(records, `seed 127.0.0.1:${free}: connection refused`);
    expect(msg).toContain(`not a cluster member yet after`);
    expect(msg).toContain(`trying seed nodes 127.0.0.1:${free}`);
    expect(msg).toContain("is the seed node running");
    // rate limit: at most one warning per joinDiagnosticsIntervalMs (300 ms)
    const t0 = Date.now();
    const before = records.filter((r) => r.msg.startsWith("not a cluster member")).length;
    await new Promise((r) => setTimeout(r, 1_000));
    const after = records.filter((r) => r.msg.startsWith("not a cluster member")).length;
    expect(after - before).toBeLessThanOrEqual(Math.ceil((Date.now() - t0) / 300) + 1);
    expect(after - before).toBeGreaterThanOrEqual(1);
  }, 20_000);

  it("DNS failure", async () => {
    const records: Captured[] = [];
    await start({ seedNodes: ["no-such-host.invalid:2552"] }, records);
    await waitForWarning(
      records,
      "seed no-such-host.invalid:2552: DNS failure: the host name does not resolve",
      15_000,
    );
  }, 25_000);

  it("wrong system name", async () => {
    const seed = await start({ systemName: "other", seedNodes: [] });
    seed.cluster.join(seed.remoting.node.hostPort);
    const records: Captured[] = [];
    await start({ seedNodes: [`127.0.0.1:${portOf(seed)}`] }, records);
    const msg = await waitForWarning(records, `seed 127.0.0.1:${portOf(seed)}: wrong system name`);
    expect(msg).toContain("every member needs the same systemName");
  }, 20_000);

  it("wrong secret", async () => {
    const seed = await start({ seedNodes: [], remoting: { secret: "secret-one-0123456789" } });
    seed.cluster.join(seed.remoting.node.hostPort);
    const records: Captured[] = [];
    await start(
      { seedNodes: [`127.0.0.1:${portOf(seed)}`], remoting: { secret: "secret-two-0123456789" } },
      records,
    );
    await waitForWarning(records, `seed 127.0.0.1:${portOf(seed)}: wrong secret`);
  }, 20_000);

  it("wrong secret: only the joiner has one", async () => {
    const seed = await start({ seedNodes: [] });
    seed.cluster.join(seed.remoting.node.hostPort);
    const records: Captured[] = [];
    await start(
      { seedNodes: [`127.0.0.1:${portOf(seed)}`], remoting: { secret: "secret-two-0123456789" } },
      records,
    );
    await waitForWarning(records, `seed 127.0.0.1:${portOf(seed)}: wrong secret`);
  }, 20_000);

  /** A peer that rejects every handshake with `reason`. */
  const rejecting = (reason: RejectReason) =>
    listen((socket) => {
      const w = new FrameWriter();
      w.append(
        FrameType.HANDSHAKE_REJECT,
        encodeHandshakeReject({
          protocolVersion: PROTOCOL_VERSION,
          reason,
          systemName: "sk",
          address: { host: "127.0.0.1", port: 1 },
          uid: 7n,
        }),
      );
      socket.on("error", () => undefined);
      socket.write(w.take());
    });

  it("handshake refused (a peer that rejects every handshake)", async () => {
    const port = await rejecting(RejectReason.ADDRESS_CLAIM);
    const records: Captured[] = [];
    await start({ seedNodes: [`127.0.0.1:${port}`] }, records);
    const msg = await waitForWarning(
      records,
      `seed 127.0.0.1:${port}: handshake refused by the seed node`,
    );
    expect(msg).toContain("address-claim");
  }, 20_000);

  it("refused as quarantined: the incarnation can never join, so the node stops", async () => {
    const port = await rejecting(RejectReason.QUARANTINED);
    const records: Captured[] = [];
    const node = await start({ seedNodes: [`127.0.0.1:${port}`] }, records);
    const msg = await waitForWarning(records, "removed from the cluster; stopping");
    expect(msg).toBe("removed from the cluster; stopping");
    await node.system.whenTerminated;
    expect(records.some((r) => r.msg.startsWith("not a cluster member yet"))).toBe(false);
  }, 20_000);

  it("handshake timeout (something listens but never answers)", async () => {
    const port = await listen((socket) => socket.on("error", () => undefined));
    const records: Captured[] = [];
    await start(
      { seedNodes: [`127.0.0.1:${port}`], remoting: { handshakeTimeoutMs: 300 } },
      records,
    );
    await waitForWarning(records, `seed 127.0.0.1:${port}: handshake timed out`);
  }, 20_000);

  it("stops warning once joined", async () => {
    const [seedPort] = await freePorts(1);
    const records: Captured[] = [];
    const joiner = await start({ seedNodes: [`127.0.0.1:${seedPort}`] }, records);
    await waitForWarning(records, "connection refused");
    await start({ port: seedPort, seedNodes: [`127.0.0.1:${seedPort}`] });
    const deadline = Date.now() + 10_000;
    while (joiner.cluster.selfMember?.status !== "up") {
      if (Date.now() > deadline) throw new Error("joiner never became Up");
      await new Promise((r) => setTimeout(r, 50));
    }
    const count = records.filter((r) => r.msg.startsWith("not a cluster member")).length;
    await new Promise((r) => setTimeout(r, 900));
    expect(records.filter((r) => r.msg.startsWith("not a cluster member")).length).toBe(count);
  }, 20_000);
});

describe("ClusterNode.start validation", () => {
  it("refuses a seed without port before binding anything", async () => {
    const [port] = await freePorts(1);
    const error = await ClusterNode.start({
      systemName: "sk",
      port,
      handleSignals: false,
      seedNodes: ["localhost"],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe("seedNodes[0]");
    // the port was never bound: we can bind it now
    await listenOn(port as number);
  });

  it("refuses an Akka address of another system with a hint; accepts its own", async () => {
    const error = await ClusterNode.start({
      systemName: "orders",
      port: 0,
      handleSignals: false,
      seedNodes: ["akka://shop@127.0.0.1:25559"],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain('it names "shop"');
    const node = await start({ systemName: "shop", seedNodes: ["akka://shop@127.0.0.1:25559"] });
    expect(node.cluster.selfMember).toBeUndefined();
  });

  it("a start that fails to bind releases what it opened; the process exits by itself", async () => {
    const port = await listen(() => undefined);
    const child = spawnNode("test/api/failed-start-main.ts", [JSON.stringify({ port })], {
      name: "failed-start",
    });
    const failed = await waitFor(child, (e) => e.event === "start-failed", 15_000, "start-failed");
    expect(failed.code).toBe("TRANSPORT_FAILED");
    const exit = await waitForExit(child, 10_000);
    expect(exit.code).toBe(0);
  }, 30_000);

  it("a start that fails after remoting was bound (management port taken) releases everything", async () => {
    const managementPort = await listen(() => undefined);
    const child = spawnNode("test/api/failed-start-main.ts", [JSON.stringify({ managementPort })], {
      name: "failed-start-management",
    });
    const failed = await waitFor(child, (e) => e.event === "start-failed", 15_000, "start-failed");
    expect(failed.code).toBe("EADDRINUSE");
    const exit = await waitForExit(child, 10_000);
    expect(exit.code).toBe(0);
  }, 30_000);
});

async function listenOn(port: number): Promise<void> {
  const s = createServer();
  await new Promise<void>((ok, fail) => {
    s.once("error", fail);
    s.listen(port, "127.0.0.1", () => ok());
  });
  await new Promise<void>((ok) => s.close(() => ok()));
}

/** The child's exit, or an error naming what it still has open after `timeoutMs`. */
function waitForExit(child: Child, timeoutMs: number): Promise<ExitInfo> {
  return Promise.race([
    child.exited,
    new Promise<ExitInfo>((_, fail) =>
      setTimeout(
        () =>
          fail(
            new Error(
              `${child.name} did not exit within ${timeoutMs} ms: ${child.stderr.join("\n")}`,
            ),
          ),
        timeoutMs,
      ),
    ),
  ]);
}
