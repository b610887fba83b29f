/**
 * The determinism guarantee of docs/architecture.md, "The determinism boundary", tested on a workload built directly on the
 * ports: 50 workers with mailboxes and a dispatcher-like drain loop exchange 5 000
 * messages with random delays and random targets drawn from each node's Random, under
 * clock drift, with periodic timers and async handlers. Same seed => same trace hash
 * and the same delivery order; another seed => another hash and another order.
 */
import { describe, expect, it } from "vitest";
import type { Disposable } from "../../src/base/disposable.js";
import { type SimRuntime, type SimWorld, withSeed } from "../../src/runtime/sim/index.js";

const WORKERS = 50;
const CHAINS_PER_WORKER = 10;
const HOPS_PER_CHAIN = 10;
const TOTAL_DELIVERIES = WORKERS * CHAINS_PER_WORKER * HOPS_PER_CHAIN;
const DRAIN_BUDGET = 3;
const SEND_DELAY_MAX_MS = 20;
const RUN_LIMIT_MS = 60_000;

interface Message {
  readonly id: string;
  readonly from: string;
  readonly hopsLeft: number;
}

interface Counters {
  delivered: number;
}

class Worker {
  private readonly mailbox: Message[] = [];
  private drainScheduled = false;
  private processed = 0;
  private ticker: Disposable | undefined;

  constructor(
    readonly name: string,
    private readonly rt: SimRuntime,
    private readonly world: SimWorld,
    private readonly peers: readonly Worker[],
    private readonly counters: Counters,
  ) {}

  start(): void {
    for (let c = 0; c < CHAINS_PER_WORKER; c++) {
      const msg = { id: `${this.name}/${c}`, from: this.name, hopsLeft: HOPS_PER_CHAIN };
      this.send(msg);
    }
    this.startTicker(20 + this.rt.random.nextInt(10));
  }

  stop(): void {
    this.ticker?.dispose();
  }

  receive(msg: Message): void {
    this.mailbox.push(msg);
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    this.rt.scheduler.defer(() => this.drain());
  }

  private drain(): void {
    this.drainScheduled = false;
    for (let i = 0; i < DRAIN_BUDGET && this.mailbox.length > 0; i++) {
      this.handle(this.mailbox.shift()!);
    }
    if (this.mailbox.length > 0) {
      this.drainScheduled = true;
      this.rt.scheduler.defer(() => this.drain());
    }
  }

  private handle(msg: Message): void {
    this.processed++;
    this.counters.delivered++;
    this.world.record(this.name, "deliver", `${msg.id}#${msg.hopsLeft} from=${msg.from}`);
    if (msg.hopsLeft === 1) return;
    const next = { id: msg.id, from: this.name, hopsLeft: msg.hopsLeft - 1 };
    if (this.rt.random.next() < 0.25) void this.sendLater(next);
    else this.send(next);
  }

  /** An async handler: its continuation must run before the next simulated event. */
  private async sendLater(msg: Message): Promise<void> {
    await Promise.resolve();
    const rounds = await this.think(1 + this.rt.random.nextInt(3));
    this.rt.logger.debug("forwarding after thinking", { id: msg.id, rounds });
    this.send(msg);
  }

  private async think(rounds: number): Promise<number> {
    for (let i = 0; i < rounds; i++) await Promise.resolve();
    return rounds;
  }

  private send(msg: Message): void {
    const target = this.peers[this.rt.random.nextInt(this.peers.length)]!;
    const delayMs = 1 + this.rt.random.nextInt(SEND_DELAY_MAX_MS);
    this.rt.scheduler.schedule(delayMs, () => target.receive(msg));
  }

  private startTicker(periodMs: number): void {
    const tick = (): void => {
      this.world.record(this.name, "tick", {
        processed: this.processed,
        queued: this.mailbox.length,
      });
      this.ticker = this.rt.scheduler.schedule(periodMs, tick);
    };
    this.ticker = this.rt.scheduler.schedule(periodMs, tick);
  }
}

interface RunResult {
  readonly hash: string;
  readonly deliveries: readonly string[];
  readonly endTimeMs: number;
  readonly stepsRun: number;
  /** Trace entries of the async path (debug logs) and of the periodic timers. */
  readonly asyncForwards: number;
  readonly ticks: number;
}

function createWorkers(world: SimWorld, counters: Counters): Worker[] {
  const workers: Worker[] = [];
  for (let i = 0; i < WORKERS; i++) {
    const rt = world.createRuntime(`w${i}`, {
      clockDriftPpm: ((i % 7) - 3) * 200,
      clockOffsetMs: i * 1_000,
    });
    workers.push(new Worker(`w${i}`, rt, world, workers, counters));
  }
  return workers;
}

/** Runs the workload to completion, checks conservation and leaks, returns the outcome. */
async function runWorkload(world: SimWorld): Promise<RunResult> {
  const counters: Counters = { delivered: 0 };
  const workers = createWorkers(world, counters);
  for (const w of workers) w.start();
  const done = await world.runUntil(() => counters.delivered === TOTAL_DELIVERIES, RUN_LIMIT_MS);
  expect(done).toBe(true);
  const endTimeMs = world.now;
  for (const w of workers) w.stop();
  expect(await world.runUntilIdle(1_000)).toBe(true);
  expect(counters.delivered).toBe(TOTAL_DELIVERIES);
  for (const name of world.nodeNames) expect(world.getRuntime(name)!.scheduler.liveTimers).toBe(0);
  const deliveries = world.trace.filter((e) => e.kind === "deliver").map((e) => e.detail);
  const count = (kind: string): number => world.trace.filter((e) => e.kind === kind).length;
  return {
    hash: world.traceHash(),
    deliveries,
    endTimeMs,
    stepsRun: world.stepsRun,
    asyncForwards: count("log"),
    ticks: count("tick"),
  };
}

function run(seed: number): Promise<RunResult> {
  return withSeed(seed, runWorkload, { keepTrace: true });
}

describe("simulator determinism", () => {
  it("the same seed gives the same trace hash and the same delivery order", async () => {
    const a = await run(20260101);
    const b = await run(20260101);
    expect(a.deliveries).toHaveLength(TOTAL_DELIVERIES);
    expect(new Set(a.deliveries).size).toBe(TOTAL_DELIVERIES);
    expect(a.stepsRun).toBeGreaterThan(TOTAL_DELIVERIES);
    expect(a.asyncForwards).toBeGreaterThan(TOTAL_DELIVERIES / 10);
    expect(a.ticks).toBeGreaterThan(WORKERS * 3);
    expect(b.hash).toBe(a.hash);
    expect(b.deliveries).toEqual(a.deliveries);
    expect(b.endTimeMs).toBe(a.endTimeMs);
    expect(b.stepsRun).toBe(a.stepsRun);
  });

  it("a different seed gives a different hash and a different delivery order", async () => {
    const a = await run(20260101);
    const c = await run(20260102);
    expect(c.hash).not.toBe(a.hash);
    expect(c.deliveries).not.toEqual(a.deliveries);
    // Same messages, different order: the seed changes scheduling, not the workload.
    expect([...c.deliveries].map(stripSender).sort()).toEqual(
      [...a.deliveries].map(stripSender).sort(),
    );
  });

  it("worlds running concurrently in one process do not influence each other", async () => {
    const [x, y] = await Promise.all([run(7), run(8)]);
    expect((await run(7)).hash).toBe(x.hash);
    expect((await run(8)).hash).toBe(y.hash);
  });

  it("the hash does not depend on keeping the trace in memory", async () => {
    const kept = await run(11);
    const light = await withSeed(11, runWorkload);
    expect(light.deliveries).toEqual([]);
    expect(light.hash).toBe(kept.hash);
  });
});

function stripSender(detail: string): string {
  return detail.replace(/ from=.*$/, "");
}
