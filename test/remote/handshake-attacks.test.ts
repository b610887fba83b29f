/**
 * The cluster port under attack, with real processes (issue: replay-proof handshake,
 * identity claims, safe defaults, secret rotation):
 * - a recorded handshake replayed (same and another source address, while the member
 *   is up and after it left) is refused and nothing behind it reaches an actor;
 * - without a secret, a spoofed claim to a live member's address from another host is
 *   refused and the real member's association (and remote watch) is undisturbed;
 * - binding a non-loopback address with neither a secret nor TLS refuses to start;
 * - rotating the secret across a rolling restart fails no ask.
 * Another source address is a second loopback address (127.0.0.2): Linux routes 127/8.
 */
import { createServer, type Server, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnNode, waitForStderr } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import { handshakeAs, replay, userFrame } from "./raw-peer.js";
import {
  askEcho,
  command,
  FAST_SETTINGS,
  type RemoteNode,
  START_TIMEOUT_MS,
  startNode,
  stats,
  tryCommand,
  waitForCounter,
} from "./remote-node.js";

installChildTeardown("perFile");

const SECRET = "replay-test-secret-0123456789";

/** A TCP proxy to `targetPort` that records every byte the client sends. */
interface RecordingProxy {
  readonly port: number;
  readonly clientBytes: () => Uint8Array;
  close(): Promise<void>;
}

function recordingProxy(targetPort: number): Promise<RecordingProxy> {
  const recorded: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client);
    sockets.add(upstream);
    upstream.connect(targetPort, "127.0.0.1");
    client.on("data", (d: Buffer) => {
      recorded.push(Buffer.from(d));
      upstream.write(d);
    });
    upstream.on("data", (d: Buffer) => client.write(d));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      resolve({
        port,
        clientBytes: () => new Uint8Array(Buffer.concat(recorded)),
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}

describe("replaying a recorded handshake (secret configured)", () => {
  let b: RemoteNode;
  let c: RemoteNode;
  let proxy: RecordingProxy;

  beforeAll(async () => {
    [b, c] = await Promise.all([
      startNode("B", { secret: SECRET }),
      startNode("C", { secret: SECRET }),
    ]);
    proxy = await recordingProxy(b.port);
  }, 40_000);
  afterAll(() => proxy?.close());

  it("is refused from the same and another source, while the member is up and after it left; nothing reaches an actor", async () => {
    // C talks to B through the recording proxy: its REQ, CONFIRM and 3 messages to B's counter.
    const { from } = await command(c, "seq", {
      address: `sk@127.0.0.1:${proxy.port}`,
      path: "/user/counter",
      count: 3,
      stream: "captured",
    });
    await waitForCounter(b, String(from), 3, 10_000);
    const recorded = proxy.clientBytes();
    expect(recorded.length).toBeGreaterThan(100);

    const attempt = async (localAddress: string) => {
      const before = await stats(b);
      const r = await replay(b.port, recorded, { localAddress });
      const after = await stats(b);
      expect(r.closedByPeer).toBe(true);
      expect(r.rejected).toBe("bad-secret");
      expect(after.handshakeRejectsSent - before.handshakeRejectsSent).toBe(1);
      expect(after.userMessagesIn).toBe(before.userMessagesIn);
    };
    await attempt("127.0.0.1");
    await attempt("127.0.0.2");
    await waitForStderr(
      b.child,
      /refusing inbound connection.*handshake confirm.*proof does not match/,
      5_000,
    );

    // The member leaves (graceful exit); the replay is still refused.
    await command(c, "exit");
    await c.child.exited;
    await attempt("127.0.0.1");
    await attempt("127.0.0.2");
    // Nothing of the four replays reached B's counter: only the original 3 messages did.
    await new Promise((r) => setTimeout(r, 300));
    const counter = await command(b, "counter");
    expect(counter.received).toBe(3);
    expect(counter.errorCount).toBe(0);
  }, 60_000);
});

describe("a spoofed identity claim without a secret", () => {
  let a: RemoteNode;
  let b: RemoteNode;

  beforeAll(async () => {
    [a, b] = await Promise.all([
      startNode("A", { settings: FAST_SETTINGS }),
      startNode("B", { settings: FAST_SETTINGS }),
    ]);
    await askEcho(b, a, "warm-up");
    await askEcho(a, b, "warm-up");
  }, 40_000);

  it("from another host is refused and leaves the real member's association undisturbed", async () => {
    // B watches A's echo: if B took the claim for a restart of A, the watch would fire.
    await command(b, "watch", { address: a.address, path: "/user/echo", watchId: "w1" });
    await askEcho(b, a, "watch settled");
    const before = await stats(b);
    const spoof = await handshakeAs(
      b.port,
      { systemName: "sk", address: { host: "127.0.0.1", port: a.port }, uid: 999n },
      {
        localAddress: "127.0.0.2",
        after: [userFrame("/user/inbox#0", Uint8Array.of(0xa5, 0x73, 0x70, 0x6f, 0x6f, 0x66))],
      },
    );
    expect(spoof.acked).toBe(true);
    expect(spoof.rejected).toBe("address-claim");
    await waitForStderr(
      b.child,
      /refusing inbound connection.*claims an address whose live association/,
      5_000,
    );
    const after = await stats(b);
    expect(after.handshakeRejectsSent - before.handshakeRejectsSent).toBe(1);
    expect(after.userMessagesIn).toBe(before.userMessagesIn);
    // The real A is untouched: no Terminated, asks work both ways.
    expect(await askEcho(b, a, "still A")).toEqual({ from: a.address, value: "still A" });
    expect(await askEcho(a, b, "still B")).toEqual({ from: b.address, value: "still B" });
    await new Promise((r) => setTimeout(r, 500));
    expect(b.child.events.filter((e) => e.event === "terminated")).toEqual([]);
    expect(b.child.stderr.some((l) => l.includes("peer incarnation gone"))).toBe(false);
  }, 30_000);

  it("from the member's own host is accepted (a reconnect or a restart looks like that)", async () => {
    const r = await handshakeAs(b.port, {
      systemName: "sk",
      address: { host: "127.0.0.1", port: 1 },
      uid: 5n,
    });
    expect(r.acked).toBe(true);
    expect(r.rejected).toBeUndefined();
  }, 20_000);
});

describe("safe defaults", () => {
  it("a non-loopback address without a secret or TLS refuses to start, naming both remedies", async () => {
    const child = spawnNode(
      "test/remote/node-main.ts",
      [JSON.stringify({ settings: { host: "0.0.0.0" } })],
      { name: "open" },
    );
    const exit = await Promise.race([
      child.exited,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), START_TIMEOUT_MS)),
    ]);
    expect(exit?.code).not.toBe(0);
    const text = child.stderr.join("\n");
    expect(text).toContain("invalid setting remoting.secret");
    expect(text).toMatch(/TLS/);
    expect(text).toContain("remoting.insecure: true");
    expect(child.events.some((e) => e.event === "ready")).toBe(false);
  }, 30_000);

  it("starts with a secret, or with insecure: true said explicitly", async () => {
    const [withSecret, insecure] = await Promise.all([
      startNode("S", { secret: SECRET, settings: { host: "0.0.0.0" } }),
      startNode("I", { settings: { host: "0.0.0.0", insecure: true } }),
    ]);
    expect(withSecret.port).toBeGreaterThan(0);
    expect(insecure.port).toBeGreaterThan(0);
  }, 40_000);
});

describe("secret rotation across a rolling restart", () => {
  const OLD = "rotation-old-secret-000000";
  const NEW = "rotation-new-secret-111111";

  it("old -> [old, new] -> [new, old] -> new, one member at a time: no ask fails", async () => {
    const names = ["R1", "R2", "R3"];
    const nodes = await Promise.all(
      names.map((n) => startNode(n, { secret: OLD, settings: FAST_SETTINGS })),
    );
    const up = new Set(nodes.map((_, i) => i));
    let asks = 0;
    const failures: string[] = [];
    const round = async () => {
      const live = [...up];
      await Promise.all(
        live.flatMap((i) =>
          live
            .filter((j) => j !== i)
            .map(async (j) => {
              const from = nodes[i] as RemoteNode;
              const to = nodes[j] as RemoteNode;
              asks++;
              const r = await tryCommand(
                from,
                "ask",
                { address: to.address, path: "/user/echo", value: asks, timeoutMs: 8_000 },
                20_000,
              );
              if (!r.ok) failures.push(`${from.name}->${to.name}: ${String(r.error)}`);
            }),
        ),
      );
    };
    await round();
    const phases: (string | string[])[] = [[OLD, NEW], [NEW, OLD], NEW];
    for (const secret of phases) {
      for (let i = 0; i < nodes.length; i++) {
        const old = nodes[i] as RemoteNode;
        up.delete(i);
        await command(old, "exit");
        await old.child.exited;
        await round(); // the others keep talking while it is down
        nodes[i] = await startNode(old.name, { secret, port: old.port, settings: FAST_SETTINGS });
        up.add(i);
        await round();
      }
    }
    expect(failures).toEqual([]);
    expect(asks).toBe(6 + 9 * (2 + 6));
    for (const n of nodes) {
      const s = await stats(n);
      expect(s.handshakeRejectsSent + s.handshakeRejectsReceived).toBe(0);
    }
  }, 240_000);
});
