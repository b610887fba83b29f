/**
 * CoordinatedShutdown: the driver of the shutdown machine (core/shutdown). Components
 * register tasks per phase with `addTask`; `run(reason)` walks the phases in order, runs
 * the tasks of a phase in parallel, bounds each phase by its timeout on the Scheduler
 * port, logs every phase, and resolves with the reason once the last phase is over.
 *
 * Invariants:
 * - `run` is idempotent: every call returns the promise of the first one, and the reason
 *   of the first call is the reason (`shutdownReason`).
 * - The promise resolves after the last phase, also when phases with `recover: true`
 *   failed or timed out (they are logged); it rejects with ShutdownAbortedError only when
 *   a phase with `recover: false` failed or timed out (no later phase ran).
 * - Task completions reach the machine through promise callbacks, never synchronously
 *   from inside `perform`, so the machine is never re-entered while its outputs are
 *   performed; a task that throws synchronously counts as failed.
 * - A task whose phase timed out is told so through its AbortSignal; what it does later
 *   is ignored. No timer outlives the running phase.
 */

import { assert, assertNever, fail } from "../../base/assert.js";
import type { Disposable } from "../../base/disposable.js";
import { AbortError } from "../../base/errors.js";
import {
  ShutdownAbortedError,
  ShutdownPhaseStartedError,
  UnknownShutdownPhaseError,
} from "../../core/shutdown/shutdown-errors.js";
import {
  type PlannedPhase,
  type ShutdownInput,
  ShutdownMachine,
  type ShutdownOutput,
  type ShutdownStatus,
  type ShutdownTaskInfo,
  type TaskId,
} from "../../core/shutdown/shutdown-machine.js";
import type { ShutdownReason } from "../../core/shutdown/shutdown-reason.js";
import {
  resolveShutdownSettings,
  type ShutdownSettings,
  type ShutdownSettingsOverrides,
} from "../../core/shutdown/shutdown-settings.js";
import type { Logger } from "../../ports/logger.js";
import type { Runtime } from "../../ports/runtime.js";

/** What a task learns when it runs. */
export interface ShutdownTaskContext {
  readonly reason: ShutdownReason;
  readonly phase: string;
  readonly task: string;
  /** Aborted when the phase times out (or the shutdown aborts): stop waiting then. */
  readonly signal: AbortSignal;
}

/** A shutdown task: done when its promise settles (a rejection is a failure). */
export type ShutdownTask = (context: ShutdownTaskContext) => Promise<unknown> | undefined | void;

/** Options of {@link CoordinatedShutdown}. */
export interface CoordinatedShutdownOptions {
  /** Scheduler (phase timers), clock (durations in logs) and logger. */
  readonly runtime: Pick<Runtime, "scheduler" | "clock" | "logger">;
  readonly settings?: ShutdownSettingsOverrides;
}

/** Ordered, timed, logged shutdown of one node (see the module comment). */
export class CoordinatedShutdown {
  readonly settings: ShutdownSettings;
  private readonly machine: ShutdownMachine;
  private readonly log: Logger;
  private readonly tasks = new Map<TaskId, ShutdownTask>();
  private readonly timers = new Map<string, Disposable>();
  private nextTaskId = 1;
  private promise: Promise<ShutdownReason> | undefined;
  private settle: { resolve(r: ShutdownReason): void; reject(e: Error): void } | undefined;
  private startedAt = 0;
  private phaseStartedAt = 0;
  private phaseTaskCount = 0;
  private phaseController: AbortController | undefined;

  constructor(private readonly options: CoordinatedShutdownOptions) {
    this.settings = resolveShutdownSettings(options.settings);
    this.machine = new ShutdownMachine(this.settings.phases);
    this.log = options.runtime.logger.child({ component: "coordinated-shutdown" });
  }

  /** The reason of the run, once `run` has been called. */
  get shutdownReason(): ShutdownReason | undefined {
    return this.machine.reason;
  }

  /** Where the shutdown is (idle, running a phase, completed, aborted). */
  get state(): ShutdownStatus {
    return this.machine.state;
  }

  /** Phase names in run order. */
  get phaseNames(): readonly string[] {
    return this.machine.phaseNames;
  }

  /** Every phase in run order, with its settings and registered task names. */
  plan(): readonly PlannedPhase[] {
    return this.machine.plan();
  }

  /**
   * Registers `task` to run in `phase` under `name` (for logs). Dispose the result to
   * unregister it (no effect once its phase has started). Throws
   * UnknownShutdownPhaseError for an unknown phase and ShutdownPhaseStartedError when the
   * phase has already started or the shutdown is over.
   */
  addTask(phase: string, name: string, task: ShutdownTask): Disposable {
    assert(typeof name === "string" && name !== "", "a shutdown task needs a name");
    assert(typeof task === "function", "a shutdown task must be a function");
    const id = this.nextTaskId++;
    const added = this.machine.addTask({ id, phase, name });
    if (!added.ok) {
      if (added.rejection === "unknown-phase")
        throw new UnknownShutdownPhaseError(phase, this.machine.phaseNames);
      throw new ShutdownPhaseStartedError(phase, name);
    }
    this.tasks.set(id, task);
    return {
      dispose: () => {
        if (this.machine.removeTask(id)) this.tasks.delete(id);
      },
    };
  }

  /**
   * Runs the shutdown (once; later calls return the same promise). Resolves with the
   * reason of the first call; rejects with ShutdownAbortedError if a phase with
   * `recover: false` failed or timed out.
   */
  run(reason: ShutdownReason = "unknown"): Promise<ShutdownReason> {
    if (this.promise !== undefined) return this.promise;
    this.promise = new Promise<ShutdownReason>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.startedAt = this.now();
    this.feed({ type: "run", reason });
    return this.promise;
  }

  // ------------------------------------------------------------------ machine

  private feed(input: ShutdownInput): void {
    this.perform(this.machine.handle(input));
  }

  private perform(outputs: readonly ShutdownOutput[]): void {
    for (const o of outputs) {
      switch (o.type) {
        case "start-timer":
          this.timers.set(
            o.phase,
            this.options.runtime.scheduler.schedule(o.delayMs, () => {
              this.timers.delete(o.phase);
              this.feed({ type: "phase-timeout", phase: o.phase });
            }),
          );
          break;
        case "cancel-timer":
          this.timers.get(o.phase)?.dispose();
          this.timers.delete(o.phase);
          break;
        case "run-task":
          this.runTask(o.task);
          break;
        case "phase-started":
          this.phaseStartedAt = this.now();
          this.phaseTaskCount = o.tasks.length;
          this.phaseController = new AbortController();
          this.logPhaseStarted(o);
          break;
        case "phase-timed-out":
          this.phaseController?.abort(
            new AbortError(`shutdown phase ${o.phase} (timed out after ${o.timeoutMs} ms)`),
          );
          this.logOutput(o);
          break;
        case "shutdown-started":
        case "phase-skipped":
        case "task-failed":
        case "phase-completed":
          this.logOutput(o);
          break;
        case "shutdown-completed":
          this.logOutput(o);
          this.settle?.resolve(o.reason);
          break;
        case "shutdown-aborted":
          this.phaseController?.abort(new AbortError(`coordinated shutdown (${o.reason})`));
          this.logOutput(o);
          this.settle?.reject(new ShutdownAbortedError(o.reason, o.phase, o.cause, o.error));
          break;
        default:
          assertNever(o, "shutdown output");
      }
    }
  }

  private runTask(task: ShutdownTaskInfo): void {
    const fn = this.tasks.get(task.id);
    if (fn === undefined) fail(`no function for shutdown task ${task.id}`);
    const signal = (this.phaseController as AbortController).signal;
    const context: ShutdownTaskContext = {
      reason: this.machine.reason as ShutdownReason,
      phase: task.phase,
      task: task.name,
      signal,
    };
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(fn(context));
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      () => this.feed({ type: "task-done", id: task.id }),
      (error: unknown) => this.feed({ type: "task-failed", id: task.id, error }),
    );
  }

  // ------------------------------------------------------------------ logging

  private logPhaseStarted(o: Extract<ShutdownOutput, { type: "phase-started" }>): void {
    if (o.tasks.length === 0) {
      if (this.log.isEnabled("debug"))
        this.log.debug("shutdown phase (no tasks)", { phase: o.phase });
      return;
    }
    this.log.info("shutdown phase started", {
      phase: o.phase,
      tasks: o.tasks.map((t) => t.name),
      timeoutMs: o.timeoutMs,
    });
  }

  private logOutput(o: ShutdownOutput): void {
    switch (o.type) {
      case "shutdown-started":
        this.log.info("coordinated shutdown started", { reason: o.reason });
        return;
      case "phase-skipped":
        this.log.info("shutdown phase disabled, its tasks are skipped", {
          phase: o.phase,
          tasks: o.tasks.map((t) => t.name),
        });
        return;
      case "task-failed":
        (o.recover ? this.log.warn : this.log.error).call(this.log, "shutdown task failed", {
          phase: o.task.phase,
          task: o.task.name,
          error: o.error,
          recover: o.recover,
        });
        return;
      case "phase-timed-out":
        (o.recover ? this.log.warn : this.log.error).call(this.log, "shutdown phase timed out", {
          phase: o.phase,
          timeoutMs: o.timeoutMs,
          pendingTasks: o.pending.map((t) => t.name),
          recover: o.recover,
        });
        return;
      case "phase-completed":
        if (this.phaseTaskCount > 0)
          this.log.info("shutdown phase completed", {
            phase: o.phase,
            outcome: o.outcome,
            durationMs: this.now() - this.phaseStartedAt,
          });
        return;
      case "shutdown-completed":
        this.log.info("coordinated shutdown completed", {
          reason: o.reason,
          durationMs: this.now() - this.startedAt,
        });
        return;
      case "shutdown-aborted":
        this.log.error("coordinated shutdown aborted", {
          reason: o.reason,
          phase: o.phase,
          cause: o.cause,
          ...(o.error !== undefined ? { error: o.error } : {}),
        });
        return;
      default:
        return;
    }
  }

  private now(): number {
    return this.options.runtime.clock.now();
  }
}
