/**
 * The simulated network (src/runtime/sim/network): TCP-like streams over virtual time
 * with latency, jitter, bandwidth, loss, partitions, clogs and crashes, all from the
 * seed. Timing assertions are exact: the model (docs/simulator.md) fixes every time.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, TransportError } from "../../src/base/errors.js";
import type { CloseReason, Connection, HostPort } from "../../src/ports/transport.js";
import {
  SimNetwork,
  type SimNetworkOptions,
  type SimTransport,
  SimWorld,
  withSeed,
} from "../../src/runtime/sim/index.js";

interface Probe {
  readonly chunks: { readonly t: number; readonly bytes: number[] }[];
  readonly drains: number[];
  close: { readonly t: number; readonly reason: CloseReason } | undefined;
}

function probe(world: SimWorld, conn: Connection): Probe {
  const p: Probe = { chunks: [], drains: [], close: undefined };
  conn.setHandlers({
    onData: (chunk) => p.chunks.push({ t: world.now, bytes: [...chunk] }),
    onDrain: () => p.drains.push(world.now),
    onClose: (reason) => {
      expect(p.close).toBeUndefined();
      p.close = { t: world.now, reason };
    },
  });
  return p;
}

function received(p: Probe): number[] {
  return p.chunks.flatMap((c) => c.bytes);
}

function errorOf(p: Probe): TransportError {
  const reason = p.close?.reason;
  if (reason?.type !== "error") throw new Error(`expected an error close, got ${reason?.type}`);
  expect(reason.error).toBeInstanceOf(TransportError);
  return reason.error as TransportError;
}

/** Runs the world until `promise` settles; returns it (resolved or rejected). */
async function settle<T>(world: SimWorld, promise: Promise<T>, limitMs = 60_000): Promise<T> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await world.runUntil(() => done, limitMs);
  expect(done).toBe(true);
  return promise;
}

interface Server {
  readonly address: HostPort;
  readonly accepted: { readonly conn: Connection; readonly probe: Probe; readonly t: number }[];
}

async function serve(world: SimWorld, transport: SimTransport, port = 7000): Promise<Server> {
  const accepted: Server["accepted"][number][] = [];
  const listener = await transport.listen({ host: transport.host, port }, (conn) =>
    accepted.push({ conn, probe: probe(world, conn), t: world.now }),
  );
  return { address: listener.address, accepted };
}

function setup(seed = 1, options?: SimNetworkOptions) {
  const world = new SimWorld({ seed, keepTrace: true });
  const net = new SimNetwork(world, options);
  const a = net.transportFor("a");
  const b = net.transportFor("b");
  return { world, net, a, b };
}

/** a connects to b's server; returns both probes once the server accepted. */
async function connected(world: SimWorld, a: SimTransport, b: SimTransport, port = 7000) {
  const server = await serve(world, b, port);
  const client = await settle(world, a.connect(server.address));
  const clientProbe = probe(world, client);
  await world.runUntil(() => server.accepted.length === 1, 1_000);
  const accepted = server.accepted[0]!;
  return {
    client,
    clientProbe,
    server: accepted.conn,
    serverProbe: accepted.probe,
    address: server.address,
  };
}

const bytes = (...values: number[]) => Uint8Array.from(values);

describe("SimNetwork streams", () => {
  it("handshake timing: connect resolves after one round trip, accept after one and a half", async () => {
    const { world, net, a, b } = setup();
    net.configureLink("a", "b", { latencyMs: 10 });
    net.configureLink("b", "a", { latencyMs: 7 });
    const server = await serve(world, b);
    const client = await settle(world, a.connect(server.address));
    expect(world.now).toBe(17);
    expect(client.local).toEqual({ host: "a", port: 49152 });
    expect(client.remote).toEqual({ host: "b", port: 7000 });
    await world.runUntil(() => server.accepted.length > 0, 100);
    expect(server.accepted[0]!.t).toBe(27);
    expect(server.accepted[0]!.conn.remote).toEqual(client.local);
    expect(server.accepted[0]!.conn.local).toEqual(server.address);
  });

  it("delivery time matches the model: transmission queued behind earlier bytes, then latency", async () => {
    const { world, net, a, b } = setup();
    net.configureLink("a", "b", { latencyMs: 10, bandwidthBytesPerMs: 10 });
    const { client, serverProbe } = await connected(world, a, b);
    const t0 = world.now;
    for (let i = 0; i < 3; i++) expect(client.send(new Uint8Array(100).fill(i))).toBe(true);
    expect(client.bufferedBytes).toBe(300);
    await world.advance(100);
    // Transmission ends at t0+10, +20, +30 (10 B/ms), arrival 10 ms later.
    expect(serverProbe.chunks.map((c) => c.t - t0)).toEqual([20, 30, 40]);
    expect(serverProbe.chunks.map((c) => c.bytes[0])).toEqual([0, 1, 2]);
    expect(client.bufferedBytes).toBe(0);
  });

  it("bytes arrive in order and complete under latency + jitter + bandwidth", async () => {
    const { world, net, a, b } = setup(7);
    net.configureLink("a", "b", { latencyMs: 5, jitterMs: 40, bandwidthBytesPerMs: 64 });
    net.configureLink("b", "a", { latencyMs: 5, jitterMs: 40 });
    const { client, serverProbe } = await connected(world, a, b);
    const sent: number[] = [];
    const sends: { t: number; size: number }[] = [];
    for (let i = 0; i < 200; i++) {
      const chunk = Array.from({ length: 1 + ((i * 37) % 90) }, (_, k) => (i + k) & 0xff);
      world.schedule(i % 17, () => {
        client.send(Uint8Array.from(chunk));
        sent.push(...chunk);
        sends.push({ t: world.now, size: chunk.length });
      });
    }
    const done = () => sends.length === 200 && received(serverProbe).length === sent.length;
    await world.runUntil(done, 10_000);
    expect(received(serverProbe)).toEqual(sent);
    // One onData per send, in send order, each no earlier than latency + own transmission.
    expect(serverProbe.chunks.map((c) => c.bytes.length)).toEqual(sends.map((x) => x.size));
    const delays = serverProbe.chunks.map((c, k) => c.t - sends[k]!.t);
    const tooEarly = delays.filter((d, k) => d < 5 + sends[k]!.size / 64);
    expect(tooEarly).toEqual([]);
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(20); // jitter is real
    const times = serverProbe.chunks.map((c) => c.t);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
  });

  it("backpressure: send returns false above the high-water mark and onDrain follows", async () => {
    const { world, net, a, b } = setup(1, { sendBufferHighWaterBytes: 1000 });
    net.configureLink("a", "b", { latencyMs: 1, bandwidthBytesPerMs: 1 });
    const { client, clientProbe, serverProbe } = await connected(world, a, b);
    const t0 = world.now;
    expect(client.send(new Uint8Array(600))).toBe(true);
    expect(client.send(new Uint8Array(400))).toBe(true); // at the mark, not above it
    expect(client.send(new Uint8Array(200))).toBe(false);
    expect(client.bufferedBytes).toBe(1200);
    await world.runUntil(() => clientProbe.drains.length > 0, 5_000);
    expect(clientProbe.drains).toEqual([t0 + 600]);
    expect(client.bufferedBytes).toBe(600);
    await world.runUntil(() => serverProbe.chunks.length === 3, 5_000);
    expect(serverProbe.chunks.map((c) => c.t - t0)).toEqual([601, 1001, 1201]);
    expect(clientProbe.drains).toHaveLength(1);
  });

  it("with unlimited bandwidth nothing is ever buffered", async () => {
    const { world, a, b } = setup();
    const { client } = await connected(world, a, b);
    expect(client.send(new Uint8Array(4 * 1024 * 1024))).toBe(true);
    expect(client.bufferedBytes).toBe(0);
  });

  it("two connections between the same pair can reorder relative to each other (never within one)", async () => {
    let reorderedSeed: number | undefined;
    for (let seed = 1; seed <= 20 && reorderedSeed === undefined; seed++) {
      const { world, net, a, b } = setup(seed);
      net.configureLink("a", "b", { latencyMs: 2, jitterMs: 20 });
      const arrivals: string[] = []; // "<connection tag>:<sequence number>", in delivery order
      const listener = await b.listen({ host: "b", port: 7000 }, (conn) =>
        conn.setHandlers({
          onData: ([tag, i]) => arrivals.push(`${tag}:${i}`),
          onDrain() {},
          onClose() {},
        }),
      );
      const c1 = await settle(world, a.connect(listener.address));
      const c2 = await settle(world, a.connect(listener.address));
      await world.advance(50);
      for (let i = 0; i < 10; i++) {
        c1.send(bytes(1, i));
        c2.send(bytes(2, i));
      }
      await world.advance(200);
      expect(arrivals).toHaveLength(20);
      for (const tag of ["1", "2"]) {
        const seq = arrivals.filter((x) => x.startsWith(`${tag}:`)).map((x) => x.split(":")[1]);
        expect(seq).toEqual([...Array(10).keys()].map(String));
      }
      // Connection 2's i-th segment overtook connection 1's i-th, sent just before it.
      const overtaken = [...Array(10).keys()].some(
        (i) => arrivals.indexOf(`2:${i}`) < arrivals.indexOf(`1:${i}`),
      );
      if (overtaken) reorderedSeed = seed;
    }
    expect(reorderedSeed).toBeDefined();
  });

  it("data sent before setHandlers is buffered and delivered after it, in a later event", async () => {
    const { world, b, a } = setup();
    let serverConn: Connection | undefined;
    const listener = await b.listen({ host: "b", port: 7000 }, (c) => {
      serverConn = c;
    });
    const client = await settle(world, a.connect(listener.address));
    client.send(bytes(1));
    client.send(bytes(2));
    client.close();
    await world.advance(50);
    expect(serverConn).toBeDefined();
    const log: string[] = [];
    serverConn!.setHandlers({
      onData: (c) => log.push(`data ${c[0]}`),
      onDrain: () => log.push("drain"),
      onClose: (r) => log.push(`close ${r.type}`),
    });
    expect(log).toEqual([]);
    await world.advance(1);
    expect(log).toEqual(["data 1", "data 2", "close remote"]);
    expect(() => serverConn!.setHandlers({ onData() {}, onDrain() {}, onClose() {} })).toThrow();
  });

  it("close flushes queued bytes, then both sides close (local / remote); destroy drops them", async () => {
    const { world, net, a, b } = setup();
    net.configureLink("a", "b", { latencyMs: 5, bandwidthBytesPerMs: 10 });
    const first = await connected(world, a, b);
    const t0 = world.now;
    first.client.send(new Uint8Array(100));
    first.client.close();
    first.client.close();
    expect(first.client.send(bytes(9))).toBe(false);
    expect(first.clientProbe.close).toBeUndefined();
    await world.advance(100);
    expect(first.clientProbe.close).toEqual({ t: t0 + 10, reason: { type: "local" } });
    expect(received(first.serverProbe)).toHaveLength(100);
    expect(first.serverProbe.close).toEqual({ t: t0 + 15, reason: { type: "remote" } });

    const second = await connected(world, a, b, 7001);
    second.client.send(new Uint8Array(1000)); // 100 ms to transmit
    world.schedule(20, () => second.client.destroy());
    await world.advance(200);
    expect(second.clientProbe.close?.reason).toEqual({ type: "local" });
    expect(second.serverProbe.chunks).toEqual([]);
    expect(second.serverProbe.close?.reason).toEqual({ type: "remote" });
    expect(net.openConnections).toBe(0);
  });

  it("callbacks never run inside the call that caused them", async () => {
    const { world, a, b } = setup();
    const { client, clientProbe } = await connected(world, a, b);
    client.destroy();
    expect(clientProbe.close).toBeUndefined();
    await world.advance(0);
    expect(clientProbe.close?.reason).toEqual({ type: "local" });
  });
});

describe("SimNetwork faults", () => {
  it("loss resets the connection on both sides when the lost segment would arrive", async () => {
    const { world, net, a, b } = setup();
    net.configureLink("a", "b", { latencyMs: 4, lossProbability: 1 });
    const { client, clientProbe, serverProbe } = await connected(world, a, b);
    const t0 = world.now;
    client.send(bytes(1, 2, 3));
    await world.advance(100);
    expect(serverProbe.chunks).toEqual([]);
    expect(clientProbe.close?.t).toBe(t0 + 4);
    expect(serverProbe.close?.t).toBe(t0 + 4);
    expect(errorOf(clientProbe).fields.fault).toBe("segment-lost");
    expect(errorOf(serverProbe).fields.fault).toBe("segment-lost");
    expect(net.openConnections).toBe(0);
  });

  it("a stream cut by loss is a gap-free prefix of what was sent", async () => {
    const { world, net, a, b } = setup(3);
    net.configureLink("a", "b", { latencyMs: 1, jitterMs: 5, lossProbability: 0.05 });
    const { client, serverProbe, clientProbe } = await connected(world, a, b);
    for (let i = 0; i < 200; i++) world.schedule(i, () => client.send(bytes(i)));
    await world.advance(500);
    expect(clientProbe.close?.reason.type).toBe("error");
    const got = received(serverProbe);
    expect(got.length).toBeLessThan(200);
    expect(got).toEqual([...Array(got.length).keys()]);
  });

  it("connect fails after one round trip with connectFailProbability (reason other)", async () => {
    const { world, net, a, b } = setup();
    net.configureLink("a", "b", { latencyMs: 3, connectFailProbability: 1 });
    const server = await serve(world, b);
    const error = await settle(world, a.connect(server.address)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).reason).toBe("other");
    expect((error as TransportError).fields.fault).toBe("handshake-reset");
    expect(world.now).toBe(4);
    expect(server.accepted).toEqual([]);
  });

  it("connecting to an address nobody listens on is refused after one round trip", async () => {
    const { world, net, a } = setup();
    net.configureLink("a", "b", { latencyMs: 5 });
    const error = await settle(world, a.connect({ host: "b", port: 9999 })).catch(
      (e: unknown) => e,
    );
    expect((error as TransportError).reason).toBe("connect-refused");
    expect(world.now).toBe(6);
  });

  it("a closed listener refuses new connections and keeps existing ones", async () => {
    const { world, b, a } = setup();
    const accepted: Connection[] = [];
    const listener = await b.listen({ host: "b", port: 0 }, (c) => accepted.push(c));
    expect(listener.address).toEqual({ host: "b", port: 49152 });
    const client = await settle(world, a.connect(listener.address));
    const clientProbe = probe(world, client);
    await world.advance(5);
    const serverProbe = probe(world, accepted[0]!);
    await listener.close();
    const error = await settle(world, a.connect(listener.address)).catch((e: unknown) => e);
    expect((error as TransportError).reason).toBe("connect-refused");
    client.send(bytes(42));
    accepted[0]!.send(bytes(43));
    await world.advance(5);
    expect(received(serverProbe)).toEqual([42]);
    expect(received(clientProbe)).toEqual([43]);
  });

  it("listen validates the address", async () => {
    const { b, net } = setup();
    await b.listen({ host: "b", port: 7000 }, () => {});
    const inUse = await b.listen({ host: "b", port: 7000 }, () => {}).catch((e: unknown) => e);
    expect((inUse as TransportError).reason).toBe("listen-failed");
    const wrongHost = await b.listen({ host: "a", port: 7001 }, () => {}).catch((e: unknown) => e);
    expect((wrongHost as TransportError).reason).toBe("listen-failed");
    const wildcard = await b.listen({ host: "0.0.0.0", port: 7002 }, () => {});
    expect(wildcard.address).toEqual({ host: "0.0.0.0", port: 7002 });
    expect(() => net.transportFor("c", "b")).toThrow(/belongs to b/);
  });
});

describe("SimNetwork partitions and clogs", () => {
  it("a two-way partition holds both directions and resets after partitionResetAfterMs", async () => {
    const { world, net, a, b } = setup(1, { partitionResetAfterMs: 3_000 });
    const { client, server, clientProbe, serverProbe } = await connected(world, a, b);
    const t0 = world.now;
    net.partition(["a"], ["b"]);
    expect(net.isBlocked("a", "b") && net.isBlocked("b", "a")).toBe(true);
    client.send(bytes(1));
    server.send(bytes(2));
    await world.advance(10_000);
    expect(serverProbe.chunks).toEqual([]);
    expect(clientProbe.chunks).toEqual([]);
    expect(clientProbe.close?.t).toBe(t0 + 3_000);
    expect(serverProbe.close?.t).toBe(t0 + 3_000);
    expect(errorOf(clientProbe).fields.fault).toBe("partition-timeout");
    expect(errorOf(serverProbe).fields.fault).toBe("partition-timeout");
  });

  it("a one-way partition blocks only a -> b, then resets", async () => {
    const { world, net, a, b } = setup();
    const { client, server, clientProbe, serverProbe } = await connected(world, a, b);
    const t0 = world.now;
    net.partition("a", "b", { oneWay: true });
    expect(net.isBlocked("a", "b")).toBe(true);
    expect(net.isBlocked("b", "a")).toBe(false);
    client.send(bytes(1));
    server.send(bytes(2));
    await world.advance(10);
    expect(received(clientProbe)).toEqual([2]);
    expect(serverProbe.chunks).toEqual([]);
    await world.advance(10_000);
    expect(clientProbe.close?.t).toBe(t0 + 5_000);
    expect(serverProbe.close?.t).toBe(t0 + 5_000);
  });

  it("healing before the timeout delivers the held bytes in order and keeps the connection", async () => {
    const { world, net, a, b } = setup();
    net.configureLink("a", "b", { latencyMs: 3 });
    const { client, clientProbe, serverProbe } = await connected(world, a, b);
    net.partition(["a"], ["b"]);
    for (let i = 0; i < 5; i++) client.send(bytes(i));
    await world.advance(1_000);
    const healedAt = world.now;
    net.heal("a", "b");
    await world.advance(4_999);
    expect(received(serverProbe)).toEqual([0, 1, 2, 3, 4]);
    expect(serverProbe.chunks[0]!.t).toBe(healedAt + 3);
    await world.advance(10_000);
    expect(clientProbe.close).toBeUndefined();
    expect(serverProbe.close).toBeUndefined();
    client.send(bytes(9));
    await world.advance(3);
    expect(received(serverProbe)).toEqual([0, 1, 2, 3, 4, 9]);
  });

  it("connects across a partition time out (either direction of a one-way block); heal restores them", async () => {
    const { world, net, a, b } = setup(1, { connectTimeoutMs: 2_000 });
    const serverB = await serve(world, b);
    const serverA = await serve(world, a);
    net.partition(["a"], ["b"], { oneWay: true });
    const t0 = world.now;
    const ab = await settle(world, a.connect(serverB.address)).catch((e: unknown) => e);
    expect((ab as TransportError).reason).toBe("connect-timeout");
    expect(world.now).toBe(t0 + 2_000);
    // b -> a: the SYN gets through, the SYN-ACK (a -> b) vanishes.
    const ba = await settle(world, b.connect(serverA.address, { timeoutMs: 500 })).catch(
      (e: unknown) => e,
    );
    expect((ba as TransportError).reason).toBe("connect-timeout");
    expect(serverA.accepted).toEqual([]);
    net.heal();
    const ok = await settle(world, a.connect(serverB.address));
    expect(ok.remote).toEqual(serverB.address);
  });

  it("a connect started during a partition sends its SYN again (1 s, 2 s, 4 s, ...) and completes soon after the heal", async () => {
    const { world, net, a, b } = setup(1, { connectTimeoutMs: 10_000 });
    net.configureLink("a", "b", { latencyMs: 3 });
    net.configureLink("b", "a", { latencyMs: 3 });
    const serverB = await serve(world, b);
    net.partition(["a"], ["b"]);
    const t0 = world.now;
    let connectedAt: number | undefined;
    const pending = a.connect(serverB.address).then((c) => {
      connectedAt = world.now;
      return c;
    });
    // SYNs at t0, t0 + 1 s, t0 + 3 s, t0 + 7 s: the cut heals at t0 + 2.5 s, so the third
    // one (t0 + 3 s) gets through, its SYN-ACK 3 ms later
    world.schedule(2_500, () => net.heal());
    await world.advance(5_000);
    expect(connectedAt).toBe(t0 + 3_000 + 6);
    const c = await pending;
    expect(c.remote).toEqual(serverB.address);
    expect(serverB.accepted.length).toBe(1);
  });

  it("isolate cuts a node off from every other node", async () => {
    const { world, net, a } = setup(1, { connectTimeoutMs: 100 });
    const c = net.transportFor("c");
    const serverC = await serve(world, c);
    net.isolate("a");
    expect(net.isBlocked("a", "b") && net.isBlocked("c", "a") && !net.isBlocked("b", "c")).toBe(
      true,
    );
    const error = await settle(world, a.connect(serverC.address)).catch((e: unknown) => e);
    expect((error as TransportError).reason).toBe("connect-timeout");
  });

  it("clog delays everything on the link until it ends, without reordering", async () => {
    const { world, net, a, b } = setup();
    const { client, server, clientProbe, serverProbe } = await connected(world, a, b);
    const t0 = world.now;
    net.clog("a", "b", 100, { oneWay: true });
    for (let i = 0; i < 3; i++) client.send(bytes(i));
    server.send(bytes(7));
    world.schedule(50, () => client.send(bytes(3)));
    await world.advance(200);
    expect(serverProbe.chunks.map((c) => [c.t - t0, c.bytes[0]])).toEqual([
      [100, 0],
      [100, 1],
      [100, 2],
      [100, 3],
    ]);
    expect(clientProbe.chunks.map((c) => c.t - t0)).toEqual([1]);
  });
});

describe("SimNetwork crash and restart", () => {
  it("crash: the node's ends vanish silently, peers see a reset after one latency, connects are refused", async () => {
    const { world, net, a, b } = setup();
    net.configureLink("b", "a", { latencyMs: 4 });
    const { client, clientProbe, serverProbe } = await connected(world, a, b);
    const t0 = world.now;
    const pending = b.connect({ host: "a", port: 1234 });
    let pendingSettled = false;
    pending.then(
      () => {
        pendingSettled = true;
      },
      () => {
        pendingSettled = true;
      },
    );
    net.crash("b");
    client.send(bytes(1));
    await world.advance(100);
    expect(clientProbe.close?.t).toBe(t0 + 4);
    expect(errorOf(clientProbe).fields.fault).toBe("peer-reset");
    expect(serverProbe.close).toBeUndefined();
    expect(serverProbe.chunks).toEqual([]);
    expect(pendingSettled).toBe(false);
    const refused = await settle(world, a.connect({ host: "b", port: 7000 })).catch(
      (e: unknown) => e,
    );
    expect((refused as TransportError).reason).toBe("connect-refused");
    expect(() => net.transportFor("b")).toThrow(/crashed/);

    net.restart("b");
    const b2 = net.transportFor("b");
    const server2 = await serve(world, b2);
    const again = await settle(world, a.connect(server2.address));
    expect(again.id).toBe(2); // ids count established connections of transport a
    await world.runUntil(() => server2.accepted.length === 1, 100);
    expect(server2.accepted[0]!.conn.id).toBe(1);
  });

  it("transport.close fails pending connects, stops listeners and closes connections", async () => {
    const { world, net, a, b } = setup();
    net.configureLink("a", "b", { latencyMs: 10 });
    const { clientProbe, serverProbe, address } = await connected(world, a, b);
    const pending = a.connect(address).catch((e: unknown) => e);
    await a.close();
    expect(((await pending) as TransportError).reason).toBe("closed");
    const later = await a.connect(address).catch((e: unknown) => e);
    expect((later as TransportError).reason).toBe("closed");
    await world.advance(100);
    expect(clientProbe.close?.reason).toEqual({ type: "local" });
    expect(serverProbe.close?.reason).toEqual({ type: "remote" });
    await b.close();
    const refused = await settle(world, net.transportFor("c").connect(address)).catch(
      (e: unknown) => e,
    );
    expect((refused as TransportError).reason).toBe("connect-refused");
  });
});

describe("SimNetwork settings", () => {
  it("validates link configs and options with ConfigError", () => {
    const world = new SimWorld({ seed: 1 });
    expect(() => new SimNetwork(world, { link: { lossProbability: 2 } })).toThrow(ConfigError);
    expect(() => new SimNetwork(world, { partitionResetAfterMs: -1 })).toThrow(ConfigError);
    expect(() => new SimNetwork(world, { link: { bandwidthBytesPerMs: 0 } })).toThrow(ConfigError);
    const net = new SimNetwork(world, { link: { latencyMs: 2 } });
    expect(() => net.configureLink("a", "b", { latencyMs: -1 })).toThrow(ConfigError);
    expect(() =>
      net.configureLink("a", "b", { jitter: 1 } as unknown as { jitterMs: number }),
    ).toThrow(/known setting/);
    net.configureLink("a", "b", { jitterMs: 3 });
    expect(net.linkConfig("a", "b")).toMatchObject({ latencyMs: 2, jitterMs: 3 });
    expect(net.linkConfig("b", "a")).toMatchObject({ latencyMs: 2, jitterMs: 0 });
  });
});

/** A random workload over five nodes: connects, sends, closes, partitions, clogs, crashes. */
function workload(seed: number): Promise<{ hash: string; delivered: number }> {
  return withSeed(seed, runWorkload);
}

async function runWorkload(world: SimWorld): Promise<{ hash: string; delivered: number }> {
  const net = new SimNetwork(world, {
    link: { latencyMs: 2, jitterMs: 8, bandwidthBytesPerMs: 200, lossProbability: 0.002 },
    connectTimeoutMs: 500,
    partitionResetAfterMs: 400,
  });
  const names = ["n0", "n1", "n2", "n3", "n4"];
  const conns: Connection[] = [];
  const transports = new Map<string, SimTransport>();
  let delivered = 0;
  const track = (node: string, conn: Connection) => {
    conns.push(conn);
    conn.setHandlers({
      onData: (c) => {
        delivered += c.length;
        world.record(node, "rx", `${conn.id}:${c.length}`);
      },
      onDrain: () => world.record(node, "drain", conn.id),
      onClose: (r) => world.record(node, "closed", `${conn.id}:${r.type}`),
    });
  };
  const start = async (node: string) => {
    const t = net.transportFor(node);
    transports.set(node, t);
    await t.listen({ host: node, port: 7000 }, (c) => track(node, c));
  };
  for (const n of names) await start(n);
  const rnd = world.random;
  const pick = <T>(xs: readonly T[]): T => xs[rnd.nextInt(xs.length)]!;
  const act = () => {
    const roll = rnd.nextInt(100);
    const from = pick(names);
    if (roll < 20) {
      const t = transports.get(from);
      const to = pick(names);
      t?.connect({ host: to, port: 7000 }).then(
        (c) => track(from, c),
        (e: TransportError) => world.record(from, "connect-error", e.reason),
      );
    } else if (roll < 80 && conns.length > 0) {
      pick(conns).send(new Uint8Array(1 + rnd.nextInt(3000)));
    } else if (roll < 85 && conns.length > 0) {
      const c = pick(conns);
      if (rnd.nextInt(2) === 0) c.close();
      else c.destroy();
    } else if (roll < 90) {
      net.partition(
        [from],
        names.filter((n) => n !== from && rnd.nextInt(2) === 0),
        {
          oneWay: rnd.nextInt(2) === 0,
        },
      );
    } else if (roll < 95) net.heal();
    else if (roll < 99) net.clog(from, pick(names), rnd.nextInt(50));
    else if (net.isCrashed(from)) {
      net.restart(from);
      void start(from);
    } else net.crash(from);
  };
  for (let i = 0; i < 600; i++) world.schedule(i * 3, act);
  await world.runUntilIdle(60_000);
  return { hash: world.traceHash(), delivered };
}

describe("SimNetwork determinism", () => {
  it("the same seed gives the same trace; another seed another", async () => {
    const first = await workload(42);
    const second = await workload(42);
    const other = await workload(43);
    expect(first.delivered).toBeGreaterThan(100_000);
    expect(second).toEqual(first);
    expect(other.hash).not.toBe(first.hash);
  });
});
