/**
 * TcpTransport over real loopback sockets: ordered bytes, drain-based backpressure,
 * close reasons, typed connect/listen failures, mutual TLS, and no leaked handles.
 * TLS fixtures come from scripts/gen-test-certs.sh.
 */
import { createHash, type Hash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError, TransportError } from "../../src/base/errors.js";
import { Xoshiro128 } from "../../src/base/prng.js";
import type { LogFields, Logger } from "../../src/ports/logger.js";
import type {
  CloseReason,
  Connection,
  ConnectionHandlers,
  HostPort,
} from "../../src/ports/transport.js";
import { connectFailureReason } from "../../src/runtime/node/connect-failure.js";
import {
  TcpTransport,
  type TcpTransportOptions,
  TRANSPORT_LOG_BURST_MAX,
} from "../../src/runtime/node/index.js";

const LOOPBACK = "127.0.0.1";
const ANY_PORT: HostPort = { host: LOOPBACK, port: 0 };
const FIXTURES = resolve(import.meta.dirname, "../fixtures/tls");
const pem = (name: string): string => readFileSync(join(FIXTURES, name), "utf8");

const TLS_A = { ca: pem("ca.crt"), cert: pem("node-a.crt"), key: pem("node-a.key") };
const TLS_B = { ca: pem("ca.crt"), cert: pem("node-b.crt"), key: pem("node-b.key") };
const TLS_FOREIGN = {
  ca: pem("ca.crt"),
  cert: pem("foreign-node.crt"),
  key: pem("foreign-node.key"),
};

const transports: TcpTransport[] = [];
const cleanups: (() => void)[] = [];

function transport(options?: TcpTransportOptions): TcpTransport {
  const t = new TcpTransport(options);
  transports.push(t);
  return t;
}

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await Promise.all(transports.splice(0).map((t) => t.close()));
});

/** Records everything a connection reports; checks that nothing follows onClose. */
class Collector implements ConnectionHandlers {
  bytes = 0;
  drains = 0;
  callbacksAfterClose = 0;
  reason: CloseReason | undefined;
  readonly closed: Promise<CloseReason>;
  private readonly hash: Hash = createHash("sha256");
  private readonly kept: Buffer[] = [];
  private waiters: { bytes: number; resolve: () => void }[] = [];
  private drainWaiters: (() => void)[] = [];
  private resolveClosed: (reason: CloseReason) => void = () => {};

  constructor(private readonly keep = false) {
    this.closed = new Promise((r) => {
      this.resolveClosed = r;
    });
  }

  onData(chunk: Uint8Array): void {
    if (this.reason !== undefined) this.callbacksAfterClose++;
    this.hash.update(chunk);
    this.bytes += chunk.byteLength;
    if (this.keep) this.kept.push(Buffer.from(chunk));
    const ready = this.waiters.filter((w) => w.bytes <= this.bytes);
    this.waiters = this.waiters.filter((w) => w.bytes > this.bytes);
    for (const waiter of ready) waiter.resolve();
  }

  onDrain(): void {
    if (this.reason !== undefined) this.callbacksAfterClose++;
    this.drains++;
    for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  onClose(reason: CloseReason): void {
    if (this.reason !== undefined) this.callbacksAfterClose++;
    this.reason = reason;
    this.resolveClosed(reason);
  }

  untilBytes(bytes: number): Promise<void> {
    if (this.bytes >= bytes) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ bytes, resolve }));
  }

  nextDrain(): Promise<void> {
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  digest(): string {
    return this.hash.digest("hex");
  }

  text(): string {
    return Buffer.concat(this.kept).toString("utf8");
  }
}

/** Listens on `server`, connects from `client`, returns both ends (server end not yet handled). */
async function connectPair(
  server: TcpTransport,
  client: TcpTransport,
): Promise<{ outbound: Connection; inbound: Connection }> {
  let accept: (c: Connection) => void = () => {};
  const accepted = new Promise<Connection>((r) => {
    accept = r;
  });
  const listener = await server.listen(ANY_PORT, accept);
  const outbound = await client.connect(listener.address);
  return { outbound, inbound: await accepted };
}

async function sendAll(conn: Connection, collector: Collector, chunks: Iterable<Uint8Array>) {
  for (const chunk of chunks) if (!conn.send(chunk)) await collector.nextDrain();
}

/** `count` views of random sizes in [1, sizeMax] over one seeded random buffer. */
function randomChunks(seed: number, count: number, sizeMax: number): Uint8Array[] {
  const prng = new Xoshiro128(seed);
  const sizes = Array.from({ length: count }, () => 1 + (prng.nextUint32() % sizeMax));
  const data = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
  for (let i = 0; i < data.length; i++) data[i] = prng.nextUint32() & 0xff;
  let offset = 0;
  return sizes.map((size) => {
    offset += size;
    return data.subarray(offset - size, offset);
  });
}

function sha256(chunks: readonly Uint8Array[]): string {
  const hash = createHash("sha256");
  for (const chunk of chunks) hash.update(chunk);
  return hash.digest("hex");
}

const totalBytes = (chunks: readonly Uint8Array[]): number =>
  chunks.reduce((n, c) => n + c.byteLength, 0);

/** Echoes every chunk back (copied: the chunk may be reused after onData returns). */
function echo(conn: Connection): Collector {
  const collector = new Collector();
  conn.setHandlers({
    onData: (chunk) => {
      collector.onData(chunk);
      conn.send(new Uint8Array(chunk));
    },
    onDrain: () => collector.onDrain(),
    onClose: (reason) => collector.onClose(reason),
  });
  return collector;
}

async function expectTransportError(promise: Promise<unknown>, reason: string) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TransportError);
  expect((error as TransportError).reason).toBe(reason);
  return error as TransportError;
}

async function echoRoundTrip(server: TcpTransport, client: TcpTransport, chunks: Uint8Array[]) {
  const { outbound, inbound } = await connectPair(server, client);
  const serverSide = echo(inbound);
  const clientSide = new Collector();
  outbound.setHandlers(clientSide);
  await sendAll(outbound, clientSide, chunks);
  await clientSide.untilBytes(totalBytes(chunks));
  expect(serverSide.bytes).toBe(totalBytes(chunks));
  expect(clientSide.bytes).toBe(totalBytes(chunks));
  expect(clientSide.digest()).toBe(sha256(chunks));
  expect(serverSide.digest()).toBe(sha256(chunks));
}

/** A plain TCP server that accepts and never answers (a TLS handshake to it hangs). */
async function silentServer(): Promise<{ address: HostPort; openSockets: () => number }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
    s.resume(); // read (and drop) so the peer's FIN is seen
  });
  await new Promise<void>((r) => server.listen(0, LOOPBACK, r));
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const info = server.address();
  if (info === null || typeof info === "string") throw new Error("no address");
  return { address: { host: LOOPBACK, port: info.port }, openSockets: () => sockets.size };
}

class RecordingLogger implements Logger {
  readonly warnings: { message: string; fields: LogFields | undefined }[] = [];
  debug(): void {}
  info(): void {}
  warn(message: string, fields?: LogFields): void {
    this.warnings.push({ message, fields });
  }
  error(message: string, fields?: LogFields): void {
    this.warnings.push({ message, fields });
  }
  isEnabled(): boolean {
    return true;
  }
  child(): Logger {
    return this;
  }
}

const tcpHandles = (): number =>
  process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap" || r === "TCPServerWrap")
    .length;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe("TcpTransport: byte streams", () => {
  it("echoes 10 000 random-sized sends in order in both directions", async () => {
    const chunks = randomChunks(42, 10_000, 1000);
    await echoRoundTrip(transport(), transport(), chunks);
  }, 30_000);

  it("listen on port 0 reports the bound port; ids are unique and addresses filled", async () => {
    const server = transport();
    const accepted: Connection[] = [];
    const listener = await server.listen(ANY_PORT, (c) => accepted.push(c));
    expect(listener.address.port).toBeGreaterThan(0);
    const client = transport();
    const a = await client.connect(listener.address);
    const b = await client.connect(listener.address);
    expect(a.id).not.toBe(b.id);
    expect(a.remote).toEqual({ host: LOOPBACK, port: listener.address.port });
    expect(a.local.port).toBeGreaterThan(0);
    await vi.waitFor(() => expect(accepted).toHaveLength(2));
    expect(accepted.map((c) => c.remote.port).sort()).toEqual([a.local.port, b.local.port].sort());
  }, 10_000);

  const flavours: [string, TcpTransportOptions, TcpTransportOptions][] = [
    ["TCP", {}, {}],
    ["TLS", { tls: TLS_A }, { tls: TLS_B }],
  ];

  it.each(flavours)(
    "%s: buffers data that arrives before setHandlers, then onClose",
    async (_flavour, serverOptions, clientOptions) => {
      const { outbound, inbound } = await connectPair(
        transport(serverOptions),
        transport(clientOptions),
      );
      outbound.setHandlers(new Collector());
      expect(outbound.send(new TextEncoder().encode("early bytes"))).toBe(true);
      outbound.close();
      await sleep(100); // let the bytes and the FIN reach the unhandled inbound side
      const collector = new Collector(true);
      inbound.setHandlers(collector);
      expect(collector.bytes).toBe(0); // delivered right after, not inside, setHandlers
      expect(await collector.closed).toEqual({ type: "remote" });
      expect(collector.text()).toBe("early bytes");
    },
    10_000,
  );
});

describe("TcpTransport: backpressure", () => {
  const HWM = 64 * 1024;
  const chunkPool = randomChunks(7, 16, 64 * 1024).map((c) => {
    const full = new Uint8Array(64 * 1024);
    full.set(c);
    return full;
  });

  it("send returns false above the mark, onDrain follows, every byte arrives", async () => {
    const client = transport({ sendHighWaterMarkBytes: HWM });
    const { outbound, inbound } = await connectPair(transport(), client);
    const sender = new Collector();
    outbound.setHandlers(sender);
    const sent: Uint8Array[] = [];
    let blocked = false;
    // The inbound side does not read yet: kernel buffers fill and the drain stops coming.
    while (!blocked && totalBytes(sent) < 512 * 1024 * 1024) {
      const chunk = chunkPool[sent.length % chunkPool.length] as Uint8Array;
      sent.push(chunk);
      if (outbound.send(chunk)) continue;
      expect(outbound.bufferedBytes).toBeGreaterThan(HWM);
      blocked = await Promise.race([
        sender.nextDrain().then(() => false),
        sleep(300).then(() => true),
      ]);
    }
    expect(blocked).toBe(true);
    const drainsWhileBlocked = sender.drains;
    const receiver = new Collector();
    const drained = sender.nextDrain();
    inbound.setHandlers(receiver);
    await drained;
    expect(sender.drains).toBe(drainsWhileBlocked + 1);
    const rest = Array.from(
      { length: 64 },
      (_, i) => chunkPool[i % chunkPool.length] as Uint8Array,
    );
    await sendAll(outbound, sender, rest);
    sent.push(...rest);
    await receiver.untilBytes(totalBytes(sent));
    expect(receiver.bytes).toBe(totalBytes(sent));
    expect(receiver.digest()).toBe(sha256(sent));
  }, 30_000);

  it("does not fire onDrain when send never returned false", async () => {
    const { outbound, inbound } = await connectPair(transport(), transport());
    const sender = new Collector();
    outbound.setHandlers(sender);
    const receiver = new Collector();
    inbound.setHandlers(receiver);
    for (let i = 0; i < 10; i++) expect(outbound.send(new Uint8Array(1000))).toBe(true);
    await receiver.untilBytes(10_000);
    await sleep(20);
    expect(sender.drains).toBe(0);
  }, 10_000);
});

describe("TcpTransport: close reasons", () => {
  it("close() flushes queued bytes; local here, remote there; send is refused after", async () => {
    const { outbound, inbound } = await connectPair(transport(), transport());
    const here = new Collector();
    const there = new Collector();
    outbound.setHandlers(here);
    inbound.setHandlers(there);
    const chunks = randomChunks(3, 2000, 1000);
    for (const chunk of chunks) outbound.send(chunk);
    outbound.close();
    outbound.close(); // idempotent
    expect(outbound.send(new Uint8Array(1))).toBe(false);
    expect(await here.closed).toEqual({ type: "local" });
    expect(await there.closed).toEqual({ type: "remote" });
    expect(there.digest()).toBe(sha256(chunks));
    expect(here.callbacksAfterClose + there.callbacksAfterClose).toBe(0);
  }, 10_000);

  it("close() on the accepting side: local there, remote on the dialing side", async () => {
    const { outbound, inbound } = await connectPair(transport(), transport());
    const dialer = new Collector();
    const acceptor = new Collector();
    outbound.setHandlers(dialer);
    inbound.setHandlers(acceptor);
    inbound.close();
    expect(await acceptor.closed).toEqual({ type: "local" });
    expect(await dialer.closed).toEqual({ type: "remote" });
  }, 10_000);

  it("destroy(): local here, remote or error on the peer, no data after", async () => {
    const { outbound, inbound } = await connectPair(transport(), transport());
    const here = new Collector();
    const there = new Collector();
    outbound.setHandlers(here);
    inbound.setHandlers(there);
    inbound.send(new Uint8Array(100_000)); // in flight towards the destroyed side
    outbound.destroy();
    outbound.destroy();
    expect(await here.closed).toEqual({ type: "local" });
    expect(["remote", "error"]).toContain((await there.closed).type);
    expect(here.bytes).toBe(0);
    expect(here.callbacksAfterClose + there.callbacksAfterClose).toBe(0);
  }, 10_000);

  it("transport.close() closes its connections (local); the peer sees remote/error", async () => {
    const client = transport();
    const { outbound, inbound } = await connectPair(transport(), client);
    const here = new Collector();
    const there = new Collector();
    outbound.setHandlers(here);
    inbound.setHandlers(there);
    await client.close();
    expect(here.reason).toEqual({ type: "local" });
    expect(client.openConnections).toBe(0);
    expect(["remote", "error"]).toContain((await there.closed).type);
    await client.close(); // idempotent
    await expectTransportError(client.connect({ host: LOOPBACK, port: 1 }), "closed");
    await expectTransportError(
      client.listen(ANY_PORT, () => {}),
      "closed",
    );
  }, 10_000);

  it("Listener.close stops accepting but keeps existing connections", async () => {
    const server = transport();
    const client = transport();
    const accepted: Connection[] = [];
    const listener = await server.listen(ANY_PORT, (c) => accepted.push(c));
    const kept = await client.connect(listener.address);
    await vi.waitFor(() => expect(accepted).toHaveLength(1));
    await listener.close();
    await expectTransportError(client.connect(listener.address), "connect-refused");
    const receiver = new Collector();
    (accepted[0] as Connection).setHandlers(receiver);
    kept.setHandlers(new Collector());
    expect(kept.send(new Uint8Array(10))).toBe(true);
    await receiver.untilBytes(10);
    expect(receiver.reason).toBeUndefined();
  }, 10_000);
});

describe("TcpTransport: connect and listen failures", () => {
  it("connect to a closed port rejects with connect-refused", async () => {
    const server = transport();
    const listener = await server.listen(ANY_PORT, () => {});
    const address = listener.address;
    await listener.close();
    const error = await expectTransportError(transport().connect(address), "connect-refused");
    expect(error.code).toBe("TRANSPORT_FAILED");
    expect(error.fields.errorCode).toBe("ECONNREFUSED");
  }, 10_000);

  it("a handshake that never completes rejects with connect-timeout after timeoutMs", async () => {
    const silent = await silentServer();
    const client = transport({ tls: TLS_B });
    const start = performance.now();
    const error = await expectTransportError(
      client.connect(silent.address, { timeoutMs: 200 }),
      "connect-timeout",
    );
    const elapsed = performance.now() - start;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(3000);
    expect(error.fields.phase).toBe("tls-handshake");
  }, 10_000);

  it("maps each phase and cause to a stable reason (TCP-level timeouts included)", () => {
    const err = (code: string) => ({ type: "error" as const, error: errno(code) });
    expect(connectFailureReason("tcp", { type: "timeout", timeoutMs: 5 })).toBe("connect-timeout");
    expect(connectFailureReason("tcp", err("ETIMEDOUT"))).toBe("connect-timeout");
    expect(connectFailureReason("tcp", err("ECONNREFUSED"))).toBe("connect-refused");
    expect(connectFailureReason("tcp", err("EHOSTUNREACH"))).toBe("other");
    expect(connectFailureReason("tcp", { type: "hang-up" })).toBe("other");
    expect(connectFailureReason("tcp", { type: "aborted" })).toBe("closed");
    expect(connectFailureReason("tls-handshake", err("ECONNRESET"))).toBe("tls");
    expect(connectFailureReason("tls-handshake", { type: "timeout", timeoutMs: 5 })).toBe(
      "connect-timeout",
    );
    expect(connectFailureReason("tls-verify", { type: "hang-up" })).toBe("tls");
  });

  it("listen on a port in use rejects with listen-failed (EADDRINUSE)", async () => {
    const listener = await transport().listen(ANY_PORT, () => {});
    const error = await expectTransportError(
      transport().listen(listener.address, () => {}),
      "listen-failed",
    );
    expect(error.fields.errorCode).toBe("EADDRINUSE");
  }, 10_000);

  it("rejects invalid addresses and per-call timeouts with typed errors", async () => {
    const t = transport();
    await expectTransportError(t.connect({ host: LOOPBACK, port: 0 }), "other");
    await expectTransportError(t.connect({ host: "", port: 80 }), "other");
    await expectTransportError(
      t.listen({ host: LOOPBACK, port: 70_000 }, () => {}),
      "listen-failed",
    );
    const error = await t.connect({ host: LOOPBACK, port: 80 }, { timeoutMs: -1 }).catch((e) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe("transport.connect.timeoutMs");
  });
});

describe("TcpTransport: mutual TLS", () => {
  it("nodes with certificates from the cluster CA connect and exchange bytes", async () => {
    const chunks = randomChunks(11, 2000, 2000);
    await echoRoundTrip(transport({ tls: TLS_A }), transport({ tls: TLS_B }), chunks);
  }, 20_000);

  it("a client whose certificate comes from another CA is refused with reason tls", async () => {
    const logger = new RecordingLogger();
    const server = transport({ tls: TLS_A, logger });
    const accepted: Connection[] = [];
    const listener = await server.listen(ANY_PORT, (c) => accepted.push(c));
    const client = transport({ tls: TLS_FOREIGN });
    await expectTransportError(client.connect(listener.address), "tls");
    await vi.waitFor(() => expect(logger.warnings.length).toBeGreaterThan(0));
    expect(logger.warnings[0]?.message).toBe("rejected inbound TLS connection");
    expect(accepted).toHaveLength(0);
    expect(server.openConnections).toBe(0);
  }, 10_000);

  it("rate-limits the log of rejected handshakes", async () => {
    const logger = new RecordingLogger();
    const listener = await transport({ tls: TLS_A, logger }).listen(ANY_PORT, () => {});
    const client = transport({ tls: TLS_FOREIGN });
    const attempts = TRANSPORT_LOG_BURST_MAX + 5;
    for (let i = 0; i < attempts; i++)
      await expectTransportError(client.connect(listener.address), "tls");
    await sleep(50);
    expect(logger.warnings.length).toBeGreaterThan(0);
    expect(logger.warnings.length).toBeLessThanOrEqual(TRANSPORT_LOG_BURST_MAX);
  }, 20_000);

  it("a client that does not trust the server's CA fails with reason tls", async () => {
    const listener = await transport({ tls: TLS_A }).listen(ANY_PORT, () => {});
    const client = transport({ tls: { ...TLS_B, ca: pem("foreign-ca.crt") } });
    const error = await expectTransportError(client.connect(listener.address), "tls");
    expect(error.fields.phase).toBe("tls-handshake");
  }, 10_000);

  it("a server whose certificate does not name `servername` fails with reason tls", async () => {
    const listener = await transport({ tls: TLS_A }).listen(ANY_PORT, () => {});
    const client = transport({ tls: { ...TLS_B, servername: "other.example" } });
    await expectTransportError(client.connect(listener.address), "tls");
    const named = transport({ tls: { ...TLS_B, servername: "shardkit-node" } });
    const ok = await named.connect(listener.address);
    ok.setHandlers(new Collector());
  }, 10_000);

  it("a plain TCP client to a TLS server is dropped without reaching onConnection", async () => {
    const server = transport({ tls: TLS_A, logger: new RecordingLogger() });
    const accepted: Connection[] = [];
    const listener = await server.listen(ANY_PORT, (c) => accepted.push(c));
    const plain = await transport().connect(listener.address);
    const collector = new Collector();
    plain.setHandlers(collector);
    plain.send(new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n"));
    expect(["remote", "error"]).toContain((await collector.closed).type);
    expect(accepted).toHaveLength(0);
  }, 10_000);
});

describe("TcpTransport: resources", () => {
  it("close() leaves no TCP socket or server handle behind", async () => {
    const before = tcpHandles();
    const plainServer = new TcpTransport();
    const plainClient = new TcpTransport();
    const tlsServer = new TcpTransport({ tls: TLS_A });
    const tlsClient = new TcpTransport({ tls: TLS_B });
    for (const [server, client] of [
      [plainServer, plainClient],
      [tlsServer, tlsClient],
    ] as const) {
      const { outbound, inbound } = await connectPair(server, client);
      const receiver = new Collector();
      inbound.setHandlers(receiver);
      outbound.setHandlers(new Collector());
      outbound.send(new Uint8Array(50_000));
      await receiver.untilBytes(50_000);
      await connectPair(server, client); // a second pair, never given handlers
    }
    expect(tcpHandles()).toBeGreaterThan(before);
    await Promise.all([plainServer, plainClient, tlsServer, tlsClient].map((t) => t.close()));
    expect(tcpHandles()).toBe(before);
  }, 20_000);

  it("close() aborts pending connects and drops sockets still in the TLS handshake", async () => {
    const silent = await silentServer();
    const before = tcpHandles();
    const client = new TcpTransport({ tls: TLS_B });
    const aborted = expectTransportError(
      client.connect(silent.address, { timeoutMs: 10_000 }),
      "closed",
    );
    const server = new TcpTransport({ tls: TLS_A });
    const listener = await server.listen(ANY_PORT, () => {});
    const raw = createConnection(listener.address.port, LOOPBACK);
    const rawClosed = new Promise((r) => raw.on("close", r));
    raw.on("error", () => {});
    await new Promise((r) => raw.on("connect", r));
    await sleep(20);
    await vi.waitFor(() => expect(silent.openSockets()).toBe(1));
    await Promise.all([client.close(), server.close()]);
    await aborted;
    await rawClosed;
    // The silent server's own end of the aborted connect closes once it sees the FIN.
    await vi.waitFor(() => expect(silent.openSockets()).toBe(0));
    expect(tcpHandles()).toBe(before);
  }, 10_000);
});

describe("TcpTransport: options", () => {
  const invalid: [string, Record<string, unknown>, string][] = [
    ["a mark below 16 KiB", { sendHighWaterMarkBytes: 1000 }, "transport.sendHighWaterMarkBytes"],
    ["a zero connect timeout", { connectTimeoutMs: 0 }, "transport.connectTimeoutMs"],
    ["a NaN connect timeout", { connectTimeoutMs: Number.NaN }, "transport.connectTimeoutMs"],
    ["a sub-second keep-alive", { keepAliveMs: 500 }, "transport.keepAliveMs"],
    ["a negative linger", { closeLingerMs: -1 }, "transport.closeLingerMs"],
    ["a non-boolean noDelay", { noDelay: "yes" }, "transport.noDelay"],
    ["a misspelt key", { sendHighWatermarkBytes: 1 << 20 }, "transport.sendHighWatermarkBytes"],
    ["tls without key", { tls: { ca: TLS_A.ca, cert: TLS_A.cert } }, "transport.tls.key"],
    ["tls with an empty ca", { tls: { ...TLS_A, ca: "" } }, "transport.tls.ca"],
    [
      "a non-boolean rejectUnauthorized",
      { tls: { ...TLS_A, rejectUnauthorized: "no" } },
      "transport.tls.rejectUnauthorized",
    ],
    ["an unknown tls key", { tls: { ...TLS_A, pfx: "x" } }, "transport.tls.pfx"],
    ["a key that does not match the cert", { tls: { ...TLS_A, key: TLS_B.key } }, "transport.tls"],
  ];

  it.each(invalid)("rejects %s, naming the key", (_label, options, key) => {
    let error: unknown;
    try {
      new TcpTransport(options as TcpTransportOptions);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe(key);
    expect((error as ConfigError).message).not.toContain("PRIVATE KEY");
  });

  it("accepts the defaults, keepAliveMs 0, and key material as bytes", () => {
    expect(() => new TcpTransport()).not.toThrow();
    expect(() => new TcpTransport({ keepAliveMs: 0, noDelay: false })).not.toThrow();
    const bytes = (s: string) => new TextEncoder().encode(s);
    const tls = { ca: bytes(TLS_A.ca), cert: bytes(TLS_A.cert), key: bytes(TLS_A.key) };
    expect(() => new TcpTransport({ tls })).not.toThrow();
  });
});

function errno(code: string): Error {
  return Object.assign(new Error(code), { code });
}
