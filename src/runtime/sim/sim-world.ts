/**
 * The deterministic simulator: one virtual event queue, one clock, one seed, any number
 * of simulated nodes in one process.
 *
 * Invariants:
 * - World time starts at 0 and never decreases; events run in (time, insertion) order.
 * - All randomness derives from `seed`: the world's own `random`, and one stream per
 *   node derived from (seed, node name) — see seeds.ts.
 * - After each event the world yields to the host (`yieldToHost`, or its callback form
 *   `onNextHostTurn` in the run loop), so every promise continuation the event started
 *   settles before the next event. With no real IO, V8's microtask
 *   order is a pure function of the inputs, so async code stays deterministic.
 * - step/runUntil/advance/runUntilIdle are not re-entrant; each run is bounded by a
 *   time limit and by `stepsPerRunMax` (a livelock of zero-delay events fails loudly).
 * - The trace (logs and `record` calls) is hashed incrementally: same seed and code,
 *   same `traceHash()`.
 */
import { assert, fail } from "../../base/assert.js";
import type { Disposable } from "../../base/disposable.js";
import type { LogFields, LogLevel } from "../../ports/logger.js";
import { levelRank } from "../../ports/logger.js";
import type { Random } from "../../ports/random.js";
import type { Runtime } from "../../ports/runtime.js";
import { onNextHostTurn, yieldToHost } from "../host/yield.js";
import { detailJson, toDetail } from "./detail.js";
import { EventQueue } from "./event-queue.js";
import { SeededRandom } from "./seeded-random.js";
import { nodeSeed, rootSeed } from "./seeds.js";
import { SimClock, type SimClockOptions } from "./sim-clock.js";
import { SimStepsExceededError } from "./sim-errors.js";
import { SimLogger, type SimLogSink } from "./sim-logger.js";
import { SimScheduler } from "./sim-scheduler.js";
import { Trace, type TraceEntry } from "./trace.js";

/**
 * Host turns the run loop queues at once (see runLoop): enough that the host's own loop
 * pass is a small share of an event's cost, few enough that host timers (a test's
 * timeout) still run every so often.
 */
const HOST_TURNS_PER_BATCH = 64;

/** Options of {@link SimWorld}. */
export interface SimWorldOptions {
  /** The seed every random choice derives from (a safe integer). */
  readonly seed: number;
  /** Simulated log records at or above this level are printed. Default "off". */
  readonly logLevel?: LogLevel;
  /** Simulated log records at or above this level go into the trace. Default "debug". */
  readonly traceLogLevel?: LogLevel;
  /** Keep trace entries in memory (`world.trace`), not just their hash. Default false. */
  readonly keepTrace?: boolean;
  /** Receives printed log lines. Default `console.error`. */
  readonly write?: (line: string) => void;
  /** Most events one step/runUntil/advance call may run. Default 10 000 000. */
  readonly stepsPerRunMax?: number;
}

/** Options of one simulated node. */
export type SimNodeOptions = SimClockOptions;

/** The Runtime of a simulated node, with its concrete parts exposed for tests. */
export interface SimRuntime extends Runtime {
  readonly nodeName: string;
  readonly clock: SimClock;
  readonly scheduler: SimScheduler;
  readonly eventLoop: SimScheduler;
}

/** Node name used for records made by the world itself. */
export const WORLD_NODE = "world";

const STEPS_PER_RUN_MAX_DEFAULT = 10_000_000;

/** A seeded, virtual-time world hosting simulated nodes. */
export class SimWorld {
  /** The seed of this run; print it with every failure. */
  readonly seed: number;
  /** World-level randomness (network faults, scenario choices). */
  readonly random: Random;
  private readonly queue = new EventQueue<() => void>();
  private readonly traceLog: Trace;
  private readonly runtimes = new Map<string, SimRuntime>();
  private readonly printRank: number;
  private readonly enabledRank: number;
  private readonly write: (line: string) => void;
  private readonly stepsPerRunMax: number;
  private readonly logSink: SimLogSink;
  private time = 0;
  private steps = 0;
  private running = false;

  constructor(options: SimWorldOptions) {
    this.seed = options.seed;
    this.random = new SeededRandom(rootSeed(options.seed));
    this.traceLog = new Trace(options.keepTrace ?? false);
    this.printRank = levelRank(options.logLevel ?? "off");
    this.enabledRank = Math.min(this.printRank, levelRank(options.traceLogLevel ?? "debug"));
    this.write = options.write ?? ((line) => console.error(line));
    this.stepsPerRunMax = options.stepsPerRunMax ?? STEPS_PER_RUN_MAX_DEFAULT;
    assert(this.stepsPerRunMax > 0, "stepsPerRunMax must be positive");
    this.logSink = {
      isEnabled: (level) => level !== "off" && levelRank(level) >= this.enabledRank,
      log: (node, level, message, fields) => this.onLog(node, level, message, fields),
    };
  }

  /** World (virtual) time in ms. */
  get now(): number {
    return this.time;
  }

  /** Number of queued events that have not run or been cancelled. */
  get pendingEvents(): number {
    return this.queue.size;
  }

  /** Number of events run so far. */
  get stepsRun(): number {
    return this.steps;
  }

  /** Trace entries (empty unless `keepTrace`). */
  get trace(): readonly TraceEntry[] {
    return this.traceLog.entries;
  }

  /** Number of trace entries recorded (kept or not). */
  get traceLength(): number {
    return this.traceLog.length;
  }

  /** Names of the nodes created so far, in creation order. */
  get nodeNames(): readonly string[] {
    return [...this.runtimes.keys()];
  }

  /** Creates the Runtime of a new simulated node. Node names are unique per world. */
  createRuntime(nodeName: string, options: SimNodeOptions = {}): SimRuntime {
    if (!(nodeName !== "" && nodeName !== WORLD_NODE)) fail(`invalid sim node name "${nodeName}"`);
    if (this.runtimes.has(nodeName)) fail(`sim node "${nodeName}" already exists`);
    const clock = new SimClock(this, options);
    const scheduler = new SimScheduler(this, clock);
    const runtime: SimRuntime = {
      nodeName,
      clock,
      scheduler,
      eventLoop: scheduler,
      random: new SeededRandom(nodeSeed(this.seed, nodeName)),
      logger: new SimLogger(this.logSink, nodeName),
    };
    this.runtimes.set(nodeName, runtime);
    return runtime;
  }

  /** The runtime of an existing node, if any. */
  getRuntime(nodeName: string): SimRuntime | undefined {
    return this.runtimes.get(nodeName);
  }

  /** Queues `fn` `delayMs` world-ms from now (for world-level machinery such as links). */
  schedule(delayMs: number, fn: () => void): Disposable {
    assert(!Number.isNaN(delayMs), "schedule delay must not be NaN");
    return this.scheduleAt(this.time + Math.max(0, delayMs), fn);
  }

  /** Queues `fn` at world time `timeMs`, which must not be in the past. */
  scheduleAt(timeMs: number, fn: () => void): Disposable {
    if (!(timeMs >= this.time)) fail(`cannot schedule in the past: ${timeMs} < ${this.time}`);
    return this.queue.push(timeMs, fn);
  }

  /** Adds a fact to the trace; non-string details are serialized as JSON. */
  record(node: string, kind: string, detail: unknown): void {
    this.traceLog.add({ t: this.time, node, kind, detail: toDetail(detail) });
  }

  /** Fingerprint of the trace so far (16 hex digits). */
  traceHash(): string {
    return this.traceLog.hash();
  }

  /** `seed=<n> t=<ms>`, for failure messages. */
  describe(): string {
    return `seed=${this.seed} t=${this.time}`;
  }

  /** Runs the next event and lets its microtasks settle. False when nothing is queued. */
  async step(): Promise<boolean> {
    this.enterRun();
    try {
      return await this.runNext();
    } finally {
      this.running = false;
    }
  }

  /**
   * Runs events in order until `predicate` holds (checked before each event and after
   * the last) or the next event lies beyond now + limitMs; in the latter case world time
   * ends at exactly now + limitMs. Returns whether the predicate held.
   */
  async runUntil(predicate: () => boolean, limitMs: number): Promise<boolean> {
    if (!(Number.isFinite(limitMs) && limitMs >= 0))
      fail(`limitMs must be finite, >= 0: ${limitMs}`);
    const deadline = this.time + limitMs;
    this.enterRun();
    try {
      return await this.runLoop(predicate, deadline);
    } finally {
      this.running = false;
    }
  }

  /** Runs every event due within `ms`, then sets world time to now + ms. */
  async advance(ms: number): Promise<void> {
    await this.runUntil(() => false, ms);
  }

  /** Runs until no event is queued, within `limitMs`. Returns whether it became idle. */
  async runUntilIdle(limitMs: number): Promise<boolean> {
    return this.runUntil(() => this.queue.size === 0, limitMs);
  }

  /**
   * The run loop, one event per host turn. Written with callbacks, not `await`: an
   * awaiting loop allocated two promises, a closure and an async frame per event, and
   * at hundreds of simulated members those were a quarter of everything allocated. The
   * order is the same: each event runs in its own turn, after the microtasks of the one
   * before have settled.
   *
   * The turns are queued HOST_TURNS_PER_BATCH at a time: Node runs the immediates queued
   * before a check phase in one pass of its event loop and drains the microtask queue
   * after each of them, so each event still runs alone in its turn, after everything the
   * one before started, but one pass of the host's loop (timers, polling for IO) serves
   * many events instead of one. Each turn takes whatever event is next when it runs;
   * turns left over when the run ends do nothing.
   */
  private runLoop(predicate: () => boolean, deadline: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      let budget = this.stepsPerRunMax;
      let queuedTurns = 0;
      let finished = false;
      const finish = (outcome: () => void): void => {
        finished = true;
        outcome();
      };
      const queueTurns = (): void => {
        queuedTurns += HOST_TURNS_PER_BATCH;
        for (let i = 0; i < HOST_TURNS_PER_BATCH; i++) onNextHostTurn(turn);
      };
      const turn = (): void => {
        queuedTurns--;
        if (finished) return;
        try {
          if (predicate()) {
            finish(() => resolve(true));
            return;
          }
          const next = this.queue.peekTime();
          if (next === undefined || next > deadline) {
            this.time = deadline;
            const held = predicate();
            finish(() => resolve(held));
            return;
          }
          if (budget-- === 0) {
            finish(() => reject(this.stepLimitError()));
            return;
          }
          this.runOne();
          if (queuedTurns === 0) queueTurns();
        } catch (error) {
          finish(() => reject(error));
        }
      };
      // Work started outside the simulator (a test's tell, a resolved promise) may still
      // be in the microtask queue and may schedule events: let it settle before looking.
      queueTurns();
    });
  }

  /** Runs the next event, if any (its microtasks settle after the caller yields). */
  private runOne(): boolean {
    const event = this.queue.pop();
    if (event === undefined) return false;
    this.time = event.time;
    this.steps++;
    event.item();
    return true;
  }

  private async runNext(): Promise<boolean> {
    if (!this.runOne()) return false;
    await yieldToHost();
    return true;
  }

  private enterRun(): void {
    assert(!this.running, "SimWorld is already running: step/runUntil/advance are not re-entrant");
    this.running = true;
  }

  private stepLimitError(): SimStepsExceededError {
    return new SimStepsExceededError(
      `simulation ran ${this.stepsPerRunMax} events in one run without reaching its goal (${this.describe()})`,
      { seed: this.seed, timeMs: this.time, stepsPerRunMax: this.stepsPerRunMax },
    );
  }

  private onLog(node: string, level: LogLevel, message: string, fields: LogFields): void {
    const json = Object.keys(fields).length === 0 ? "" : ` ${detailJson(fields)}`;
    this.record(node, "log", `${level} ${message}${json}`);
    if (levelRank(level) >= this.printRank) {
      this.write(`[sim ${this.describe()} ${node}] ${level.toUpperCase()} ${message}${json}`);
    }
  }
}
