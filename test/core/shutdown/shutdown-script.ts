/**
 * Interpreter of the scripted interaction tests of the shutdown machine
 * (test/core/shutdown/scripts/*.txt), in the etcd/raft "datadriven" style used by
 * test/core/scripts: a command line, then the lines it must print, each prefixed `>`.
 * `#` lines and blank lines are comments. Every command prints at least one line
 * (`ok` when the machine produced nothing).
 *
 * Commands:
 * - `phases <spec>...` builds a machine from phase specs and prints the run order.
 *   A spec is `name[>dep,dep][:t=<timeoutMs>][:norecover][:disabled]`.
 * - `builtin [key=value...]` builds a machine from resolveShutdownSettings with
 *   `timeout.<phase>=`, `recover.<phase>=`, `enabled.<phase>=`, `after.<phase>=a,b`
 *   overrides (new phase names add phases) and prints `name timeout[ norecover][ disabled]`.
 * - `task <id> <phase> <name>` registers a task (prints `added` or the rejection).
 * - `remove <id>` unregisters a task (prints `removed` or `kept`).
 * - `run <reason>`, `done <id>`, `fail <id> <error>`, `timeout <phase>` feed inputs and
 *   print the outputs, one per line.
 * - `plan` prints each phase with its task names; `state` prints the machine status.
 */
import { orderPhases } from "../../../src/core/shutdown/phase-order.js";
import {
  type ShutdownInput,
  ShutdownMachine,
  type ShutdownOutput,
} from "../../../src/core/shutdown/shutdown-machine.js";
import type { PhaseDefinition } from "../../../src/core/shutdown/shutdown-phases.js";
import {
  type PhaseOverride,
  resolveShutdownSettings,
} from "../../../src/core/shutdown/shutdown-settings.js";

interface World {
  machine: ShutdownMachine | undefined;
}

/** Runs `text` (named `file` in errors); throws on the first mismatch. */
export function runShutdownScript(file: string, text: string): void {
  const lines = text.split("\n");
  const world: World = { machine: undefined };
  let i = 0;
  while (i < lines.length) {
    const line = (lines[i] as string).trim();
    const lineNo = i + 1;
    i++;
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith(">"))
      throw new Error(`${file}:${lineNo}: expected output without a command`);
    const expected: string[] = [];
    while (i < lines.length && (lines[i] as string).trim().startsWith(">")) {
      expected.push((lines[i] as string).trim().slice(1).trim());
      i++;
    }
    let actual: string[];
    try {
      actual = execute(world, line);
    } catch (error) {
      actual = [`error: ${error instanceof Error ? error.message : String(error)}`];
    }
    if (actual.join("\n") !== expected.join("\n"))
      throw new Error(
        `${file}:${lineNo}: ${line}\n--- expected\n${expected.join("\n")}\n--- actual\n${actual.join("\n")}`,
      );
  }
}

function execute(world: World, line: string): string[] {
  const [cmd, ...args] = line.split(/\s+/) as [string, ...string[]];
  switch (cmd) {
    case "phases":
      return buildFromSpecs(world, args);
    case "builtin":
      return buildBuiltin(world, args);
    default: {
      const m = world.machine;
      if (m === undefined) throw new Error("no machine: start with `phases` or `builtin`");
      return onMachine(m, cmd, args);
    }
  }
}

function onMachine(m: ShutdownMachine, cmd: string, args: string[]): string[] {
  switch (cmd) {
    case "task": {
      const r = m.addTask({ id: Number(args[0]), phase: String(args[1]), name: String(args[2]) });
      return [r.ok ? "added" : `rejected ${r.rejection}`];
    }
    case "remove":
      return [m.removeTask(Number(args[0])) ? "removed" : "kept"];
    case "plan":
      return m
        .plan()
        .map(
          (p) => `${p.name}: ${p.tasks.length === 0 ? "-" : p.tasks.map((t) => t.name).join(",")}`,
        );
    case "state": {
      const s = m.state;
      return [
        s.type === "idle"
          ? "idle"
          : s.type === "completed"
            ? `completed ${s.reason}`
            : `${s.type} ${s.reason} ${s.phase}`,
      ];
    }
    default: {
      const out = m.handle(inputOf(cmd, args));
      return out.length === 0 ? ["ok"] : out.map(formatOutput);
    }
  }
}

function inputOf(cmd: string, args: string[]): ShutdownInput {
  switch (cmd) {
    case "run":
      return { type: "run", reason: String(args[0]) };
    case "done":
      return { type: "task-done", id: Number(args[0]) };
    case "fail":
      return { type: "task-failed", id: Number(args[0]), error: String(args[1]) };
    case "timeout":
      return { type: "phase-timeout", phase: String(args[0]) };
    default:
      throw new Error(`unknown command ${cmd}`);
  }
}

function names(tasks: readonly { name: string }[]): string {
  return tasks.length === 0 ? "-" : tasks.map((t) => t.name).join(",");
}

/** One line per output. */
export function formatOutput(o: ShutdownOutput): string {
  switch (o.type) {
    case "shutdown-started":
      return `shutdown-started ${o.reason}`;
    case "phase-skipped":
      return `phase-skipped ${o.phase} tasks=${names(o.tasks)}`;
    case "phase-started":
      return `phase-started ${o.phase} timeout=${o.timeoutMs} tasks=${names(o.tasks)}`;
    case "start-timer":
      return `start-timer ${o.phase} ${o.delayMs}`;
    case "cancel-timer":
      return `cancel-timer ${o.phase}`;
    case "run-task":
      return `run-task ${o.task.name}`;
    case "task-failed":
      return `task-failed ${o.task.name} error=${String(o.error)} recover=${o.recover}`;
    case "phase-timed-out":
      return `phase-timed-out ${o.phase} pending=${names(o.pending)} recover=${o.recover}`;
    case "phase-completed":
      return `phase-completed ${o.phase} ${o.outcome}`;
    case "shutdown-completed":
      return `shutdown-completed ${o.reason}`;
    case "shutdown-aborted":
      return `shutdown-aborted ${o.reason} phase=${o.phase} cause=${o.cause}${
        o.error === undefined ? "" : ` error=${String(o.error)}`
      }`;
  }
}

function buildFromSpecs(world: World, specs: string[]): string[] {
  const phases = specs.map(parseSpec);
  const r = orderPhases(phases);
  if (!r.ok) {
    world.machine = undefined;
    const p = r.problem;
    return [
      p.type === "cycle"
        ? `cycle ${p.cycle.join(">")}`
        : p.type === "unknown-dependency"
          ? `unknown-dependency ${p.phase}>${p.dependency}`
          : `duplicate-phase ${p.phase}`,
    ];
  }
  world.machine = new ShutdownMachine(r.order);
  return [`order ${r.order.map((p) => p.name).join(",")}`];
}

function parseSpec(spec: string): PhaseDefinition {
  const [head, ...flags] = spec.split(":") as [string, ...string[]];
  const [name, deps] = head.split(">") as [string, string | undefined];
  let timeoutMs = 1_000;
  let recover = true;
  let enabled = true;
  for (const f of flags) {
    if (f.startsWith("t=")) timeoutMs = Number(f.slice(2));
    else if (f === "norecover") recover = false;
    else if (f === "disabled") enabled = false;
    else throw new Error(`bad phase flag ${f}`);
  }
  return {
    name,
    dependsOn: deps === undefined ? [] : deps.split(","),
    timeoutMs,
    recover,
    enabled,
  };
}

function buildBuiltin(world: World, args: string[]): string[] {
  const phases: Record<string, Record<string, unknown>> = {};
  for (const a of args) {
    const eq = a.indexOf("=");
    const [kind, phase] = a.slice(0, eq).split(".") as [string, string];
    const v = a.slice(eq + 1);
    const o = phases[phase] ?? {};
    phases[phase] = o;
    if (kind === "timeout") o.timeoutMs = Number(v);
    else if (kind === "recover") o.recover = v === "true";
    else if (kind === "enabled") o.enabled = v === "true";
    else if (kind === "after") o.dependsOn = v === "" ? [] : v.split(",");
    else throw new Error(`bad builtin override ${a}`);
  }
  const s = resolveShutdownSettings({ phases: phases as Record<string, PhaseOverride> });
  world.machine = new ShutdownMachine(s.phases);
  return s.phases.map(
    (p) =>
      `${p.name} ${p.timeoutMs}${p.recover ? "" : " norecover"}${p.enabled ? "" : " disabled"}`,
  );
}
