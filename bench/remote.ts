/**
 * Remoting benchmarks: two real Node processes on loopback (plain TCP, no secret).
 * This process is the sender; a child process (this same file, started with
 * SHARDKIT_BENCH_REMOTE_CHILD=1 through test/support/child-process.ts) is the receiver.
 *
 * - remote.tell.throughput: one-way tells of ~100-byte messages, counted by the
 *   receiver's sink actor from its first message to an end marker (msgs/s at the
 *   receiver). The sender tells BATCH_MSGS per event-loop turn (as remote-floor's sender
 *   writes one batch per turn) and keeps at most WINDOW_MSGS unconfirmed (a marker ask
 *   every BATCH_MSGS) so the outbound queue never overflows. ~1.5 s per run, median of 3.
 *   The note gives each side's event-loop busy share.
 * - remote.tell.receiver.cpu.ns / remote.tell.sender.cpu.ns: CPU time (user + system,
 *   process.cpuUsage) of each process per message over the same runs. On a shared
 *   machine these move much less with the load than the throughput does.
 * - remote.ask.p50.us / remote.ask.p99.us: ask round trip, 1 outstanding, 20 000 samples.
 * - remote.ask1000.throughput: asks/s with 1 000 outstanding, median of 3.
 * - remote.association.idle.bytes: heap per idle peer on a node. The child (run with
 *   --expose-gc) is the hub; this process starts K peer actor systems, each with its own
 *   remoting and TCP transport. After one warm-up peer, the child reports heapUsed after
 *   a full GC; then each of the K peers asks the hub's echo (so the hub holds one inbound
 *   connection and one outbound association per peer, both handshaked, plus its sockets
 *   and per-peer maps); after an idle pause the child reports heapUsed again.
 *   Figure = delta / K. ArrayBuffer memory (socket and frame buffers) is outside the V8
 *   heap and is given in the note.
 *
 * `--only=remote.tell` (or `remote.ask`, `remote.ask1000`, `remote.association`) runs
 * one part.
 *
 * Profiling: SHARDKIT_BENCH_PROF_DIR=<dir> runs the receiver with --cpu-prof (it is then
 * stopped by closing its stdin, so that it exits normally and writes the profile);
 * profile the sender with `node --cpu-prof --expose-gc --import tsx bench/run.ts remote`.
 */
import { type ActorRef, ActorSystem, ask, Behaviors } from "../src/actor/index.js";
import { Remoting } from "../src/cluster/remoting/index.js";
import { createNodeRuntime, TcpTransport } from "../src/runtime/node/index.js";
import { type Child, kill, request, spawnNode, waitFor } from "../test/support/child-process.js";
import {
  type BenchGroup,
  median,
  percentile,
  repeat,
  reportStreamRuns,
  type StreamRun,
  wants,
} from "./harness.js";

const CHILD_ENV = "SHARDKIT_BENCH_REMOTE_CHILD";
const PAYLOAD = "x".repeat(80);
const BATCH_MSGS = 5_000;
const WINDOW_MSGS = 50_000;
const TELL_RUN_MS = 1_500;
const TELL_RUNS = 3;
/**
 * SHARDKIT_BENCH_TELL_BURST=1: the sender's old pattern, every batch in the same turn
 * until the window is full (up to WINDOW_MSGS queued at once), instead of one batch per
 * event-loop turn like the floor's sender.
 */
const TELL_BURST = process.env.SHARDKIT_BENCH_TELL_BURST === "1";
const ASK_SAMPLES = 20_000;
const ASK_WARMUP = 2_000;
const ASK1000_OUTSTANDING = 1_000;
const ASK1000_TOTAL = 200_000;
const IDLE_PEERS = 50;
const ASK_TIMEOUT_MS = 30_000;
const START_TIMEOUT_MS = 20_000;

type SinkMsg =
  | { readonly t: "m"; readonly n: number; readonly p: string }
  | { readonly t: "begin"; readonly replyTo: ActorRef<number> }
  | { readonly t: "mark"; readonly replyTo: ActorRef<number> }
  | { readonly t: "end"; readonly replyTo: ActorRef<TellEnd> };
/** The receiver's count, time from its first message, and CPU time since "begin". */
type TellEnd = { count: number; ms: number; cpuUs: number; busy: number };
type Ping = { readonly n: number; readonly replyTo: ActorRef<number> };

// ------------------------------------------------------------------ receiver (child)

async function childMain(): Promise<void> {
  const { createInterface } = await import("node:readline");
  const system = ActorSystem.create({
    name: "bench",
    runtime: createNodeRuntime({ logLevel: "warn" }),
  });
  const remoting = await Remoting.start(system, {
    transport: new TcpTransport(),
    settings: { port: 0 },
  });
  let count = 0;
  let firstAt = -1;
  let cpuAtBegin = process.cpuUsage();
  let eluAtFirst = performance.eventLoopUtilization();
  system.spawn(
    Behaviors.receiveMessage<SinkMsg>((m) => {
      switch (m.t) {
        case "m":
          if (firstAt < 0) {
            firstAt = performance.now();
            eluAtFirst = performance.eventLoopUtilization();
          }
          count++;
          return;
        case "begin":
          count = 0;
          firstAt = -1;
          cpuAtBegin = process.cpuUsage();
          m.replyTo.tell(0);
          return;
        case "mark":
          m.replyTo.tell(count);
          return;
        case "end":
          {
            const cpu = process.cpuUsage(cpuAtBegin);
            m.replyTo.tell({
              count,
              ms: performance.now() - firstAt,
              cpuUs: cpu.user + cpu.system,
              busy: performance.eventLoopUtilization(eluAtFirst).utilization,
            });
          }
          return;
      }
    }),
    "sink",
  );
  system.spawn(
    Behaviors.receiveMessage<Ping>((m) => m.replyTo.tell(m.n)),
    "echo",
  );
  const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);
  createInterface({ input: process.stdin })
    .on("line", (line) => {
      const c = JSON.parse(line) as { cmd: string; id: number };
      if (c.cmd === "heap") {
        const g = (globalThis as { gc?: () => void }).gc;
        g?.();
        g?.();
        const m = process.memoryUsage();
        out({
          event: "reply",
          id: c.id,
          ok: true,
          heapUsed: m.heapUsed,
          arrayBuffers: m.arrayBuffers,
        });
      } else if (c.cmd === "stats")
        out({ event: "reply", id: c.id, ok: true, stats: remoting.stats });
    })
    .on("close", () => process.exit(0));
  out({ event: "ready", address: remoting.address });
}

// ------------------------------------------------------------------ sender (this process)

async function startReceiver(): Promise<{ child: Child; address: string }> {
  const child = spawnNode("bench/remote.ts", [], {
    env: { [CHILD_ENV]: "1" },
    execArgv: ["--expose-gc", ...cpuProfArgs()],
    name: "receiver",
  });
  const ready = await waitFor(child, (e) => e.event === "ready", START_TIMEOUT_MS, "ready");
  return { child, address: String(ready.address) };
}

/** SHARDKIT_BENCH_PROF_DIR=<dir> profiles the receiver with --cpu-prof into <dir>. */
function cpuProfArgs(): string[] {
  const dir = process.env.SHARDKIT_BENCH_PROF_DIR;
  return dir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${dir}`];
}

/**
 * Stops the receiver: SIGKILL, or when profiling, closing its stdin (it exits on its own
 * and --cpu-prof writes the profile on a normal exit only).
 */
async function stopReceiver(child: Child): Promise<void> {
  if (process.env.SHARDKIT_BENCH_PROF_DIR === undefined) {
    await kill(child);
    return;
  }
  child.process.stdin?.end();
  await Promise.race([child.exited, new Promise((r) => setTimeout(r, START_TIMEOUT_MS))]);
  await kill(child);
}

/** A local node of the same actor system ("bench"): remoting refuses other names. */
async function startSender(): Promise<{ system: ActorSystem; remoting: Remoting }> {
  const system = ActorSystem.create({
    name: "bench",
    runtime: createNodeRuntime({ logLevel: "warn" }),
  });
  const remoting = await Remoting.start(system, {
    transport: new TcpTransport(),
    settings: { port: 0 },
  });
  return { system, remoting };
}

/** msg/s at the receiver, and CPU ns per message of the receiver and of this process. */
type TellResult = StreamRun;

async function tellRun(sink: ActorRef<SinkMsg>): Promise<TellResult> {
  const opts = { timeoutMs: ASK_TIMEOUT_MS };
  await ask(sink, (replyTo: ActorRef<number>) => ({ t: "begin", replyTo }), opts);
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const marks: Promise<number>[] = [];
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < TELL_RUN_MS) {
    for (let i = 0; i < BATCH_MSGS; i++) sink.tell({ t: "m", n: n++, p: PAYLOAD });
    marks.push(ask(sink, (replyTo: ActorRef<number>) => ({ t: "mark", replyTo }), opts));
    if (marks.length * BATCH_MSGS >= WINDOW_MSGS) await marks.shift();
    else if (!TELL_BURST) await new Promise<void>((r) => setImmediate(r));
  }
  await Promise.all(marks);
  const end = await ask(sink, (replyTo: ActorRef<TellEnd>) => ({ t: "end", replyTo }), opts);
  const cpu = process.cpuUsage(cpu0);
  if (end.count !== n) throw new Error(`sink counted ${end.count} of ${n} messages`);
  return {
    rate: (end.count / end.ms) * 1000,
    receiverNs: (end.cpuUs * 1000) / n,
    senderNs: ((cpu.user + cpu.system) * 1000) / n,
    receiverBusy: end.busy,
    senderBusy: performance.eventLoopUtilization(elu0).utilization,
  };
}

async function askLatencies(echo: ActorRef<Ping>): Promise<number[]> {
  const opts = { timeoutMs: ASK_TIMEOUT_MS };
  for (let i = 0; i < ASK_WARMUP; i++)
    await ask(echo, (replyTo: ActorRef<number>) => ({ n: i, replyTo }), opts);
  const samples = new Array<number>(ASK_SAMPLES);
  for (let i = 0; i < ASK_SAMPLES; i++) {
    const t = performance.now();
    await ask(echo, (replyTo: ActorRef<number>) => ({ n: i, replyTo }), opts);
    samples[i] = (performance.now() - t) * 1000;
  }
  return samples;
}

async function ask1000Run(echo: ActorRef<Ping>): Promise<number> {
  const opts = { timeoutMs: ASK_TIMEOUT_MS };
  let started = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (started < ASK1000_TOTAL) {
      const n = started++;
      await ask(echo, (replyTo: ActorRef<number>) => ({ n, replyTo }), opts);
    }
  };
  await Promise.all(Array.from({ length: ASK1000_OUTSTANDING }, worker));
  return (ASK1000_TOTAL / (performance.now() - t0)) * 1000;
}

async function idleAssociationBytes(): Promise<{ heap: number; arrayBuffers: number }> {
  const hub = await startReceiver();
  const peers: { system: ActorSystem; remoting: Remoting }[] = [];
  try {
    const touch = async (p: { remoting: Remoting }) => {
      const echo = p.remoting.actorRefFor<Ping>(hub.address, "/user/echo");
      await ask(echo, (replyTo: ActorRef<number>) => ({ n: 1, replyTo }), {
        timeoutMs: ASK_TIMEOUT_MS,
      });
    };
    const warm = await startSender();
    peers.push(warm);
    await touch(warm);
    for (let i = 0; i < IDLE_PEERS; i++) peers.push(await startSender());
    await new Promise((r) => setTimeout(r, 200));
    const before = await request(hub.child, { cmd: "heap" }, ASK_TIMEOUT_MS);
    for (const p of peers.slice(1)) await touch(p);
    await new Promise((r) => setTimeout(r, 500));
    const after = await request(hub.child, { cmd: "heap" }, ASK_TIMEOUT_MS);
    return {
      heap: (Number(after.heapUsed) - Number(before.heapUsed)) / IDLE_PEERS,
      arrayBuffers: (Number(after.arrayBuffers) - Number(before.arrayBuffers)) / IDLE_PEERS,
    };
  } finally {
    await Promise.all(peers.map((p) => p.system.terminate()));
    await kill(hub.child);
  }
}

export const remoteGroup: BenchGroup = {
  name: "remote",
  description: "remoting between two processes on loopback (TCP)",
  async run(report) {
    if (wants("remote.tell") || wants("remote.ask")) {
      const receiver = await startReceiver();
      const sender = await startSender();
      try {
        const sink = sender.remoting.actorRefFor<SinkMsg>(receiver.address, "/user/sink");
        const echo = sender.remoting.actorRefFor<Ping>(receiver.address, "/user/echo");
        if (wants("remote.tell")) {
          await tellRun(sink); // warm-up
          const measured: TellResult[] = [];
          for (let i = 0; i < TELL_RUNS; i++) measured.push(await tellRun(sink));
          reportStreamRuns("remote.tell.throughput", "remote.tell", measured, TELL_RUN_MS, report);
        }
        if (wants("remote.ask.p")) {
          const lat = await askLatencies(echo);
          report({
            metric: "remote.ask.p50.us",
            value: percentile(lat, 50),
            unit: "µs",
            note: "1 outstanding",
          });
          report({
            metric: "remote.ask.p99.us",
            value: percentile(lat, 99),
            unit: "µs",
            note: `${ASK_SAMPLES} samples`,
          });
        }
        if (wants("remote.ask1000")) {
          const asks = await repeat(3, 1, () => ask1000Run(echo));
          report({
            metric: "remote.ask1000.throughput",
            value: median(asks),
            unit: "ops/s",
            note: `${ASK1000_OUTSTANDING} outstanding`,
          });
        }
      } finally {
        await sender.system.terminate();
        await stopReceiver(receiver.child);
      }
    }
    if (!wants("remote.association")) return;
    const idle = await idleAssociationBytes();
    report({
      metric: "remote.association.idle.bytes",
      value: idle.heap,
      unit: "bytes",
      note: `heapUsed delta per peer, ${IDLE_PEERS} peers; +${Math.round(idle.arrayBuffers)} B ArrayBuffers`,
    });
  },
};

if (process.env[CHILD_ENV] === "1") await childMain();
