/**
 * The coordinated shutdown as a sans-IO state machine: phases in run order, tasks
 * registered per phase, and the inputs "run", "task done", "task failed" and "phase timed
 * out" in; the outputs (run these tasks, start/cancel the phase timer, phase and shutdown
 * outcomes for the log) out, as plain data. The driver (cluster/shutdown) owns the task
 * functions, the timer and the promise; it performs the outputs in order.
 *
 * Invariants:
 * - Phases run one at a time, in the order of `settings.phases`; all tasks of a phase
 *   start together and the phase ends when each has finished, failed, or the phase timer
 *   fired. A phase without tasks ends at once; a disabled phase is skipped.
 * - A failure or a timeout in a phase with `recover: false` aborts: no later phase runs.
 * - A phase's task set is fixed when it starts: adding to a running or finished phase is
 *   rejected (as a value), and removing a task of a started phase does nothing.
 * - Inputs that no longer apply (a task finishing after its phase timed out, a timer
 *   firing for a phase already over) are ignored, so the driver needs no bookkeeping.
 */
import { fail } from "../../base/assert.js";
import type { PhaseDefinition } from "./shutdown-phases.js";
import type { ShutdownReason } from "./shutdown-reason.js";

/** Identifies a registered task (the driver picks unique ids). */
export type TaskId = number;

/** A registered task, as the machine knows it. */
export interface ShutdownTaskInfo {
  readonly id: TaskId;
  readonly phase: string;
  readonly name: string;
}

/** A phase of the plan with the tasks registered for it. */
export interface PlannedPhase extends PhaseDefinition {
  readonly tasks: readonly ShutdownTaskInfo[];
}

/** Why a task could not be added. */
export type AddTaskResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly rejection: "unknown-phase" | "phase-started" };

/** Inputs of the machine. */
export type ShutdownInput =
  | { readonly type: "run"; readonly reason: ShutdownReason }
  | { readonly type: "task-done"; readonly id: TaskId }
  | { readonly type: "task-failed"; readonly id: TaskId; readonly error: unknown }
  | { readonly type: "phase-timeout"; readonly phase: string };

/** How a phase ended. */
export type PhaseOutcome = "ok" | "tasks-failed" | "timed-out";

/** Outputs of the machine, to be performed in order. */
export type ShutdownOutput =
  | { readonly type: "shutdown-started"; readonly reason: ShutdownReason }
  | {
      readonly type: "phase-skipped";
      readonly phase: string;
      readonly tasks: readonly ShutdownTaskInfo[];
    }
  | {
      readonly type: "phase-started";
      readonly phase: string;
      readonly timeoutMs: number;
      readonly tasks: readonly ShutdownTaskInfo[];
    }
  | { readonly type: "start-timer"; readonly phase: string; readonly delayMs: number }
  | { readonly type: "cancel-timer"; readonly phase: string }
  | { readonly type: "run-task"; readonly task: ShutdownTaskInfo }
  | {
      readonly type: "task-failed";
      readonly task: ShutdownTaskInfo;
      readonly error: unknown;
      readonly recover: boolean;
    }
  | {
      readonly type: "phase-timed-out";
      readonly phase: string;
      readonly timeoutMs: number;
      readonly pending: readonly ShutdownTaskInfo[];
      readonly recover: boolean;
    }
  | { readonly type: "phase-completed"; readonly phase: string; readonly outcome: PhaseOutcome }
  | { readonly type: "shutdown-completed"; readonly reason: ShutdownReason }
  | {
      readonly type: "shutdown-aborted";
      readonly reason: ShutdownReason;
      readonly phase: string;
      readonly cause: "task-failed" | "timeout";
      readonly error?: unknown;
    };

/** Where the machine is. */
export type ShutdownStatus =
  | { readonly type: "idle" }
  | { readonly type: "running"; readonly reason: ShutdownReason; readonly phase: string }
  | { readonly type: "completed"; readonly reason: ShutdownReason }
  | { readonly type: "aborted"; readonly reason: ShutdownReason; readonly phase: string };

interface Running {
  readonly reason: ShutdownReason;
  readonly index: number;
  readonly pending: Set<TaskId>;
  failed: boolean;
}

/** The coordinated shutdown machine (see the module comment). */
export class ShutdownMachine {
  private readonly phases: readonly PhaseDefinition[];
  private readonly indexOf = new Map<string, number>();
  private readonly tasks = new Map<TaskId, ShutdownTaskInfo>();
  private status: ShutdownStatus = { type: "idle" };
  private running: Running | undefined;

  /** `phases` in run order (as resolveShutdownSettings returns them). */
  constructor(phases: readonly PhaseDefinition[]) {
    this.phases = phases;
    phases.forEach((p, i) => {
      if (this.indexOf.has(p.name)) fail(`duplicate shutdown phase ${p.name}`);
      this.indexOf.set(p.name, i);
    });
  }

  /** Where the machine is (plain data). */
  get state(): ShutdownStatus {
    return this.status;
  }

  /** The reason of the run, once started. */
  get reason(): ShutdownReason | undefined {
    return this.status.type === "idle" ? undefined : this.status.reason;
  }

  /** Phase names in run order. */
  get phaseNames(): readonly string[] {
    return this.phases.map((p) => p.name);
  }

  /** The execution plan: every phase in run order with its tasks in registration order. */
  plan(): readonly PlannedPhase[] {
    return this.phases.map((p) => ({ ...p, tasks: this.tasksOf(p.name) }));
  }

  /** Registers a task; rejected for unknown phases and phases that have started. */
  addTask(task: ShutdownTaskInfo): AddTaskResult {
    if (this.tasks.has(task.id)) fail(`duplicate shutdown task id ${task.id}`);
    const index = this.indexOf.get(task.phase);
    if (index === undefined) return { ok: false, rejection: "unknown-phase" };
    if (this.hasStarted(index)) return { ok: false, rejection: "phase-started" };
    this.tasks.set(task.id, task);
    return { ok: true };
  }

  /** Unregisters a task whose phase has not started; returns whether it was removed. */
  removeTask(id: TaskId): boolean {
    const task = this.tasks.get(id);
    if (task === undefined || this.hasStarted(this.indexOf.get(task.phase) as number)) return false;
    return this.tasks.delete(id);
  }

  /** Feeds one input; returns the outputs to perform, in order. */
  handle(input: ShutdownInput): ShutdownOutput[] {
    switch (input.type) {
      case "run":
        return this.onRun(input.reason);
      case "task-done":
        return this.onTaskFinished(input.id, undefined, false);
      case "task-failed":
        return this.onTaskFinished(input.id, input.error, true);
      case "phase-timeout":
        return this.onPhaseTimeout(input.phase);
    }
  }

  private hasStarted(index: number): boolean {
    switch (this.status.type) {
      case "idle":
        return false;
      case "running":
        return index <= (this.running as Running).index;
      case "completed":
      case "aborted":
        return true;
    }
  }

  private tasksOf(phase: string): ShutdownTaskInfo[] {
    const out: ShutdownTaskInfo[] = [];
    for (const t of this.tasks.values()) if (t.phase === phase) out.push(t);
    return out.sort((a, b) => a.id - b.id);
  }

  private onRun(reason: ShutdownReason): ShutdownOutput[] {
    if (this.status.type !== "idle") return [];
    const out: ShutdownOutput[] = [{ type: "shutdown-started", reason }];
    this.becomePhase(reason, 0, out);
    return out;
  }

  /** Starts the first phase at or after `from` that has work; completes after the last. */
  private becomePhase(reason: ShutdownReason, from: number, out: ShutdownOutput[]): void {
    for (let i = from; i < this.phases.length; i++) {
      const p = this.phases[i] as PhaseDefinition;
      const tasks = this.tasksOf(p.name);
      // Status first, so a task added while this phase runs is judged against it.
      this.status = { type: "running", reason, phase: p.name };
      this.running = { reason, index: i, pending: new Set(), failed: false };
      if (!p.enabled) {
        out.push({ type: "phase-skipped", phase: p.name, tasks });
        continue;
      }
      out.push({ type: "phase-started", phase: p.name, timeoutMs: p.timeoutMs, tasks });
      if (tasks.length === 0) {
        out.push({ type: "phase-completed", phase: p.name, outcome: "ok" });
        continue;
      }
      for (const t of tasks) this.running.pending.add(t.id);
      out.push({ type: "start-timer", phase: p.name, delayMs: p.timeoutMs });
      for (const task of tasks) out.push({ type: "run-task", task });
      return;
    }
    this.running = undefined;
    this.status = { type: "completed", reason };
    out.push({ type: "shutdown-completed", reason });
  }

  private onTaskFinished(id: TaskId, error: unknown, failed: boolean): ShutdownOutput[] {
    const r = this.running;
    if (r === undefined || !r.pending.delete(id)) return [];
    const phase = this.phases[r.index] as PhaseDefinition;
    const out: ShutdownOutput[] = [];
    if (failed) {
      const task = this.tasks.get(id) as ShutdownTaskInfo;
      out.push({ type: "task-failed", task, error, recover: phase.recover });
      if (!phase.recover) {
        out.push({ type: "cancel-timer", phase: phase.name });
        this.becomeAborted(phase.name, "task-failed", error, out);
        return out;
      }
      r.failed = true;
    }
    if (r.pending.size > 0) return out;
    out.push({ type: "cancel-timer", phase: phase.name });
    out.push({
      type: "phase-completed",
      phase: phase.name,
      outcome: r.failed ? "tasks-failed" : "ok",
    });
    this.becomePhase(r.reason, r.index + 1, out);
    return out;
  }

  private onPhaseTimeout(phaseName: string): ShutdownOutput[] {
    const r = this.running;
    if (r === undefined || this.phases[r.index]?.name !== phaseName || r.pending.size === 0)
      return [];
    const phase = this.phases[r.index] as PhaseDefinition;
    const pending = [...r.pending].map((id) => this.tasks.get(id) as ShutdownTaskInfo);
    r.pending.clear();
    const out: ShutdownOutput[] = [
      {
        type: "phase-timed-out",
        phase: phase.name,
        timeoutMs: phase.timeoutMs,
        pending,
        recover: phase.recover,
      },
    ];
    if (!phase.recover) {
      this.becomeAborted(phase.name, "timeout", undefined, out);
      return out;
    }
    out.push({ type: "phase-completed", phase: phase.name, outcome: "timed-out" });
    this.becomePhase(r.reason, r.index + 1, out);
    return out;
  }

  private becomeAborted(
    phase: string,
    cause: "task-failed" | "timeout",
    error: unknown,
    out: ShutdownOutput[],
  ): void {
    const reason = (this.running as Running).reason;
    this.running = undefined;
    this.status = { type: "aborted", reason, phase };
    out.push({
      type: "shutdown-aborted",
      reason,
      phase,
      cause,
      ...(error !== undefined ? { error } : {}),
    });
  }
}
