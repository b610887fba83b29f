/**
 * The floor for bench/remote.ts: bare msgpackr over TCP between two processes on
 * loopback, no shardkit code. The same ~100-byte messages as remote.tell
 * (`{ t: "m", n, p: 80 × "x" }`, msgpackr with shardkit's options), each behind a 4-byte
 * length prefix; the sender packs a batch of BATCH_MSGS per event-loop turn into one
 * buffer and writes it (waiting for drain when the socket says so), for RUN_MS; the
 * receiver (a child process, this file with SHARDKIT_BENCH_FLOOR_CHILD=1) splits frames
 * and decodes each with `unpackr.unpack(chunk.subarray(...))`, the straightforward use.
 *
 * - remote.floor.msgpackr.throughput: messages/s at the receiver, from its first message
 *   to the end marker; median of 3 runs after one warm-up.
 * - remote.floor.receiver.cpu.ns / remote.floor.sender.cpu.ns: CPU time (user + system)
 *   of each process per message.
 *
 * - remote.floor.roundtrip.p50.us / remote.floor.roundtrip.p99.us: the same framing, one
 *   message outstanding: the sender writes one `{ t: "q", n }` and waits for the receiver's
 *   `{ t: "r", n }` (decoded, answered at once) before the next; ROUNDTRIP_SAMPLES round
 *   trips after ROUNDTRIP_WARMUP. What two wake-ups and four socket calls cost on this
 *   machine: the floor for remote.ask.p50.us and sharding.proxy.ask.c1.p50.us (one round
 *   trip each), which on a virtual machine moves from session to session.
 *
 * Compare with remote.tell.throughput and remote.tell.*.cpu.ns: what shardkit adds on
 * top of the codec and the socket (envelopes, recipient lookup, actor delivery).
 */
import { createConnection, createServer, type Socket } from "node:net";
import { Packr, Unpackr } from "msgpackr";
import { MSGPACKR_OPTIONS } from "../src/protocol/msgpack-serializer.js";
import { type Child, kill, spawnNode, waitFor } from "../test/support/child-process.js";
import { type BenchGroup, percentile, reportStreamRuns, type StreamRun } from "./harness.js";

const CHILD_ENV = "SHARDKIT_BENCH_FLOOR_CHILD";
const PAYLOAD = "x".repeat(80);
const BATCH_MSGS = 5_000;
const RUN_MS = 1_500;
const RUNS = 3;
const START_TIMEOUT_MS = 20_000;
const RUN_TIMEOUT_MS = 60_000;
const ROUNDTRIP_SAMPLES = 20_000;
const ROUNDTRIP_WARMUP = 2_000;
/** Length prefix of the end marker (no message is this long). */
const END_MARKER = 0xffff_ffff;

// ------------------------------------------------------------------ receiver (child)

/** One message behind its 4-byte length prefix. */
function frame(packr: Packr, message: unknown): Buffer {
  const body = packr.pack(message);
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeUInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

function childMain(): void {
  const unpackr = new Unpackr({ ...MSGPACKR_OPTIONS });
  const packr = new Packr({ ...MSGPACKR_OPTIONS });
  const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);
  const server = createServer((socket: Socket) => {
    socket.setNoDelay(true);
    let pending: Buffer | undefined;
    let count = 0;
    let sum = 0;
    let firstAt = -1;
    let cpu0 = process.cpuUsage();
    let elu0 = performance.eventLoopUtilization();
    socket.on("data", (data: Buffer) => {
      let chunk = data;
      if (pending !== undefined) {
        chunk = Buffer.concat([pending, data]);
        pending = undefined;
      }
      let pos = 0;
      while (chunk.length - pos >= 4) {
        const length = chunk.readUInt32BE(pos);
        if (length === END_MARKER) {
          const cpu = process.cpuUsage(cpu0);
          out({
            event: "result",
            count,
            ms: performance.now() - firstAt,
            cpuUs: cpu.user + cpu.system,
            busy: performance.eventLoopUtilization(elu0).utilization,
            sum,
          });
          count = 0;
          firstAt = -1;
          cpu0 = process.cpuUsage();
          pos += 4;
          continue;
        }
        if (chunk.length - pos - 4 < length) break;
        const m = unpackr.unpack(chunk.subarray(pos + 4, pos + 4 + length)) as {
          t: string;
          n: number;
        };
        pos += 4 + length;
        if (m.t === "q") {
          socket.write(frame(packr, { t: "r", n: m.n }));
          continue;
        }
        if (firstAt < 0) {
          firstAt = performance.now();
          elu0 = performance.eventLoopUtilization();
        }
        count++;
        sum += m.n;
      }
      if (pos < chunk.length) pending = chunk.subarray(pos);
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    out({ event: "ready", port: typeof address === "object" && address ? address.port : 0 });
  });
  process.stdin.on("end", () => process.exit(0)).resume();
}

// ------------------------------------------------------------------ sender (this process)

type FloorResult = StreamRun;

async function run(child: Child, socket: Socket, packr: Packr): Promise<FloorResult> {
  const seen = child.events.length;
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < RUN_MS) {
    const parts: Buffer[] = [];
    for (let i = 0; i < BATCH_MSGS; i++) {
      const body = packr.pack({ t: "m", n: n++, p: PAYLOAD });
      const prefix = Buffer.allocUnsafe(4);
      prefix.writeUInt32BE(body.length);
      parts.push(prefix, body);
    }
    if (!socket.write(Buffer.concat(parts)))
      await new Promise<void>((r) => socket.once("drain", () => r()));
    else await new Promise<void>((r) => setImmediate(r));
  }
  const end = Buffer.alloc(4);
  end.writeUInt32BE(END_MARKER);
  socket.write(end);
  const result = await waitFor(
    child,
    (e) => e.event === "result" && child.events.indexOf(e) >= seen,
    RUN_TIMEOUT_MS,
    "result",
  );
  const cpu = process.cpuUsage(cpu0);
  if (Number(result.count) !== n) throw new Error(`receiver counted ${result.count} of ${n}`);
  return {
    rate: (n / Number(result.ms)) * 1000,
    receiverNs: (Number(result.cpuUs) * 1000) / n,
    senderNs: ((cpu.user + cpu.system) * 1000) / n,
    receiverBusy: Number(result.busy),
    senderBusy: performance.eventLoopUtilization(elu0).utilization,
  };
}

/**
 * Round trips with one message outstanding; the latency of each in µs. The replies are
 * read with the same framing (a reply may arrive split across chunks).
 */
async function roundTrips(socket: Socket, packr: Packr, count: number): Promise<number[]> {
  const unpackr = new Unpackr({ ...MSGPACKR_OPTIONS });
  const samples = new Array<number>(count);
  let pending: Buffer | undefined;
  let sent = 0;
  let t0 = 0;
  await new Promise<void>((resolve, reject) => {
    const send = () => {
      t0 = performance.now();
      socket.write(frame(packr, { t: "q", n: sent }));
    };
    const onData = (data: Buffer) => {
      const chunk = pending === undefined ? data : Buffer.concat([pending, data]);
      pending = undefined;
      if (chunk.length < 4 || chunk.length - 4 < chunk.readUInt32BE(0)) {
        pending = chunk;
        return;
      }
      const length = chunk.readUInt32BE(0);
      const reply = unpackr.unpack(chunk.subarray(4, 4 + length)) as { t: string; n: number };
      if (reply.t !== "r" || reply.n !== sent || chunk.length !== 4 + length) {
        socket.off("data", onData);
        reject(new Error(`round trip ${sent}: unexpected reply ${JSON.stringify(reply)}`));
        return;
      }
      samples[sent++] = (performance.now() - t0) * 1000;
      if (sent === count) {
        socket.off("data", onData);
        resolve();
      } else send();
    };
    socket.on("data", onData);
    send();
  });
  return samples;
}

export const remoteFloorGroup: BenchGroup = {
  name: "remote-floor",
  description:
    "bare msgpackr over TCP between two processes (the floors for remote.tell and remote.ask)",
  async run(report) {
    const child = spawnNode("bench/remote-floor.ts", [], {
      env: { [CHILD_ENV]: "1" },
      name: "floor-receiver",
    });
    const ready = await waitFor(child, (e) => e.event === "ready", START_TIMEOUT_MS, "ready");
    const socket = createConnection({ host: "127.0.0.1", port: Number(ready.port) });
    socket.setNoDelay(true);
    await new Promise<void>((r) => socket.once("connect", () => r()));
    const packr = new Packr({ ...MSGPACKR_OPTIONS });
    try {
      await run(child, socket, packr); // warm-up
      const runs: FloorResult[] = [];
      for (let i = 0; i < RUNS; i++) runs.push(await run(child, socket, packr));
      reportStreamRuns("remote.floor.msgpackr.throughput", "remote.floor", runs, RUN_MS, report);
      await roundTrips(socket, packr, ROUNDTRIP_WARMUP);
      const cpu0 = process.cpuUsage();
      const lat = await roundTrips(socket, packr, ROUNDTRIP_SAMPLES);
      const cpu = process.cpuUsage(cpu0);
      report({
        metric: "remote.floor.roundtrip.p50.us",
        value: percentile(lat, 50),
        unit: "µs",
        note: `1 outstanding (the floor for remote.ask.p50.us); the sender's CPU per round trip ${((cpu.user + cpu.system) / ROUNDTRIP_SAMPLES).toFixed(1)} µs (${(cpu.system / ROUNDTRIP_SAMPLES).toFixed(1)} in the kernel)`,
      });
      report({
        metric: "remote.floor.roundtrip.p99.us",
        value: percentile(lat, 99),
        unit: "µs",
        note: `${ROUNDTRIP_SAMPLES} samples`,
      });
    } finally {
      socket.destroy();
      await kill(child);
    }
  },
};

if (process.env[CHILD_ENV] === "1") childMain();
