/**
 * Child-process harness for real-process tests and benchmarks: starts TypeScript
 * scripts as separate Node processes (`node --import tsx <script>`, one process, no
 * tsx wrapper that could orphan a grandchild) and talks to them with JSON lines:
 * the child prints one JSON object per stdout line (`{"event":"ready",...}`), the
 * parent writes commands as JSON lines to its stdin. stderr is captured line by line
 * (logs), for assertions and for failure messages.
 *
 * Invariants:
 * - Every spawned child is tracked until it exits; `killAll()` SIGKILLs the rest and
 *   resolves when all are gone. Test files call it from afterEach/afterAll (see
 *   `installChildTeardown` in ./child-teardown.ts), and a process 'exit' hook kills
 *   whatever is left if the parent itself goes away early. Children also exit when their
 *   stdin closes (see `onParentGone`), so even a SIGKILLed parent leaks nothing.
 * - Every wait has a timeout, and fails early (with the child's stderr tail) if the
 *   child exits first.
 *
 * No vitest import here, so bench/ can use it too.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";

/** Repository root (children run with it as cwd so `--import tsx` resolves). */
export const ROOT = resolve(import.meta.dirname, "../..");

/** The environment variable naming the compiled mirror (./compiled-children.ts). */
export const CHILDREN_DIR_ENV = "SHARDKIT_TEST_CHILDREN_DIR";
/** `tsx`: start every child through tsx, even with a mirror. */
export const CHILDREN_MODE_ENV = "SHARDKIT_TEST_CHILDREN";
/** The source trees the mirror holds (examples start through tsx, as users start them). */
export const MIRRORED_TREES = ["src", "test"] as const;

/**
 * The node arguments that run `script` (relative to `root`): its compiled copy when a
 * mirror is named and holds it, `--import tsx <script>` otherwise.
 */
export function childCommand(root: string, script: string): readonly string[] {
  const dir = process.env[CHILDREN_DIR_ENV];
  const rel = relative(root, resolve(root, script));
  const inMirror =
    dir !== undefined &&
    dir !== "" &&
    process.env[CHILDREN_MODE_ENV] !== "tsx" &&
    rel.endsWith(".ts") &&
    MIRRORED_TREES.some((t) => rel.startsWith(`${t}/`));
  return inMirror
    ? [join(dir, rel.replace(/\.ts$/, ".js"))]
    : ["--import", "tsx", resolve(root, rel)];
}

/** One JSON line printed by a child. */
export type ChildEvent = Readonly<Record<string, unknown>> & { readonly event?: unknown };

export interface SpawnOptions {
  /** Extra environment variables (added to the parent's). */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra Node flags, e.g. `--expose-gc`, `--cpu-prof`. */
  readonly execArgv?: readonly string[];
  /** Label used in error messages. */
  readonly name?: string;
  /** Run inside this network namespace (`ip netns exec <netns> node ...`; needs root). */
  readonly netns?: string;
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running (or exited) child node. */
export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly pid: number;
  /** Every JSON line printed on stdout so far, in order. */
  readonly events: ChildEvent[];
  /** Every stderr line so far. */
  readonly stderr: string[];
  /** Non-JSON stdout lines (kept for diagnostics). */
  readonly stdoutNoise: string[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<ExitInfo>;
  /** Set once the process has exited. */
  exit: ExitInfo | undefined;
  /** Writes one command as a JSON line to the child's stdin. */
  send(command: Readonly<Record<string, unknown>>): void;
}

/** How many trailing stderr lines go into failure messages. */
const STDERR_TAIL_LINES = 30;
/** How long `kill` waits for the exit event before giving up. */
const KILL_WAIT_MS = 10_000;

const live = new Set<Child>();
type Waiter = () => void;
const waiters = new Map<Child, Set<Waiter>>();

process.once("exit", () => {
  for (const c of live) c.process.kill("SIGKILL");
});

/**
 * Starts `node [execArgv] --import tsx <script> [args]` with cwd at the repository root
 * (or the script's compiled copy without tsx, in a test run: ./compiled-children.ts).
 */
export function spawnNode(
  script: string,
  args: readonly string[] = [],
  options: SpawnOptions = {},
): Child {
  const nodeArgs = [...(options.execArgv ?? []), ...childCommand(ROOT, script), ...args];
  // `ip netns exec` execs node in place: the pid is node's, signals reach it directly.
  const proc = spawn(
    options.netns === undefined ? process.execPath : "ip",
    options.netns === undefined
      ? nodeArgs
      : ["netns", "exec", options.netns, process.execPath, ...nodeArgs],
    {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  if (proc.pid === undefined) throw new Error(`cannot spawn ${script}`);
  let onExit: (info: ExitInfo) => void = () => {};
  const exited = new Promise<ExitInfo>((r) => {
    onExit = r;
  });
  const child: Child = {
    name: options.name ?? `${script}#${proc.pid}`,
    process: proc,
    pid: proc.pid,
    events: [],
    stderr: [],
    stdoutNoise: [],
    exited,
    exit: undefined,
    send(command) {
      if (child.exit !== undefined || !proc.stdin.writable) return;
      proc.stdin.write(`${JSON.stringify(command)}\n`);
    },
  };
  live.add(child);
  waiters.set(child, new Set());
  // A child killed while we write to it must not crash the parent with EPIPE.
  proc.stdin.on("error", () => {});
  createInterface({ input: proc.stdout }).on("line", (line) => {
    const event = parseJsonLine(line);
    if (event === undefined) child.stdoutNoise.push(line);
    else child.events.push(event);
    notify(child);
  });
  createInterface({ input: proc.stderr }).on("line", (line) => {
    child.stderr.push(line);
    notify(child);
  });
  proc.on("exit", (code, signal) => {
    child.exit = { code, signal };
    live.delete(child);
    onExit(child.exit);
    notify(child);
  });
  return child;
}

function parseJsonLine(line: string): ChildEvent | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === "object" && v !== null ? (v as ChildEvent) : undefined;
  } catch {
    return undefined;
  }
}

function notify(child: Child): void {
  for (const w of [...(waiters.get(child) ?? [])]) w();
}

/** The last stderr lines of `child`, for failure messages. */
export function stderrTail(child: Child, lines = STDERR_TAIL_LINES): string {
  return child.stderr.slice(-lines).join("\n");
}

/**
 * Waits until `check()` returns a value other than undefined, re-evaluating on every line
 * `child` prints; rejects after `timeoutMs` or when the child exits first.
 */
function waitUntil<T>(
  child: Child,
  check: () => T | undefined,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return new Promise<T>((done, fail) => {
    const set = waiters.get(child) ?? new Set<Waiter>();
    const finish = (): void => {
      clearTimeout(timer);
      set.delete(waiter);
    };
    const waiter: Waiter = () => {
      const v = check();
      if (v !== undefined) {
        finish();
        done(v);
      } else if (child.exit !== undefined) {
        finish();
        fail(
          new Error(
            `${child.name} exited (${JSON.stringify(child.exit)}) while waiting for ${what}\n${stderrTail(child)}`,
          ),
        );
      }
    };
    const timer = setTimeout(() => {
      set.delete(waiter);
      fail(
        new Error(
          `${child.name}: timed out after ${timeoutMs} ms waiting for ${what}\n${stderrTail(child)}`,
        ),
      );
    }, timeoutMs);
    set.add(waiter);
    waiter();
  });
}

/** Resolves with the first event (already printed or future) matching `predicate`. */
export function waitFor(
  child: Child,
  predicate: (event: ChildEvent) => boolean,
  timeoutMs: number,
  what = "a matching event",
): Promise<ChildEvent> {
  return waitUntil(child, () => child.events.find(predicate), timeoutMs, what);
}

/** Resolves with the first stderr line (already printed or future) matching `pattern`. */
export function waitForStderr(child: Child, pattern: RegExp, timeoutMs: number): Promise<string> {
  return waitUntil(
    child,
    () => child.stderr.find((l) => pattern.test(l)),
    timeoutMs,
    `stderr ${pattern}`,
  );
}

let nextRequestId = 1;

/**
 * Sends `command` with a fresh `id` and resolves with the child's
 * `{"event":"reply","id":...}` line; rejects when the reply has `ok: false`.
 */
export async function request(
  child: Child,
  command: Readonly<Record<string, unknown>>,
  timeoutMs: number,
): Promise<ChildEvent> {
  const id = nextRequestId++;
  child.send({ ...command, id });
  const reply = await waitFor(
    child,
    (e) => e.event === "reply" && e.id === id,
    timeoutMs,
    `the reply to ${JSON.stringify(command)}`,
  );
  if (reply.ok !== true)
    throw new Error(`${child.name}: ${String(command.cmd)} failed: ${JSON.stringify(reply)}`);
  return reply;
}

/** Sends `signal` (default SIGKILL) and resolves when the child has exited. */
export async function kill(child: Child, signal: NodeJS.Signals = "SIGKILL"): Promise<ExitInfo> {
  if (child.exit !== undefined) return child.exit;
  child.process.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new Error(`${child.name} did not exit within ${KILL_WAIT_MS} ms of ${signal}`)),
      KILL_WAIT_MS,
    );
  });
  try {
    return await Promise.race([child.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGKILLs every child still running and resolves when they have all exited. */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((c) => kill(c, "SIGKILL")));
}

/** Children that have not exited yet. */
export function liveChildren(): readonly Child[] {
  return [...live];
}
