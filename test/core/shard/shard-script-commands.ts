/**
 * Commands of the shard scripts (test/core/shard/scripts/*.txt), interpreted by the
 * shared runner (../script-runner.ts). The world plays the driver: it keeps the clock,
 * the running timers, the live entity actors and an in-memory remember store, and fails
 * the script when the machine breaks a driver-visible rule (a second live incarnation,
 * a timer started twice).
 *
 * Setup (prints nothing): `settings key=value...` (new machine), `debug on|off`.
 * Inputs (print the outputs, one line each, `ok` when none):
 *   deliver <entity> <msg>...      start-entity <entity>       started <entity>
 *   terminated <entity> [passivated] [failed] [stale]         passivate <entity> [stop=<msg>]
 *   fire <timer>   advance <ms>    hand-off [stop=<msg>]       ack <batch>   fail <batch>
 *   recovered <ids|->              limit <n|inf>               shutdown
 * Queries: `show entities|remembered|store|stats|timers|phase`.
 *
 * Output lines: `start a`, `send a m1`, `stop a reason=idle [msg=bye]`, `force-stop a`,
 * `overflow a m1`, `return a:m1,b:m2`, `write #1 started=a,b stopped=-`,
 * `timer-start key delayMs`, `timer-cancel key`, `shard-stopped`, `log <level> <text>`
 * (debug logs only after `debug on`). `advance` prints `fire <key> at=<ms>` before the
 * outputs of each timer it fires.
 */
import type { RememberEntitiesBatch } from "../../../src/core/shard/remember-entities.js";
import { applyRememberBatch } from "../../../src/core/shard/remember-entities.js";
import { ShardMachine } from "../../../src/core/shard/shard-machine.js";
import type { ShardSettings } from "../../../src/core/shard/shard-settings.js";
import type { ShardInput, ShardOutput } from "../../../src/core/shard/shard-types.js";
import type { Args, Command } from "../script-runner.js";

interface Timer {
  readonly deadline: number;
  readonly seq: number;
}

/** The driver a script talks through. */
export interface ShardWorld {
  machine: ShardMachine<string>;
  now: number;
  showDebug: boolean;
  timers: Map<string, Timer>;
  timerSeq: number;
  /** Entities with a live actor, as the driver sees them. */
  live: Set<string>;
  /** Remember store contents (written on ack). */
  store: Set<string>;
  writes: Map<number, RememberEntitiesBatch>;
}

function machineWith(settings: Partial<ShardSettings>): ShardMachine<string> {
  return new ShardMachine<string>({ shardId: "7", settings });
}

/** A fresh world with a default-settings machine. */
export function newShardWorld(): ShardWorld {
  return {
    machine: machineWith({}),
    now: 0,
    showDebug: false,
    timers: new Map(),
    timerSeq: 0,
    live: new Set(),
    store: new Set(),
    writes: new Map(),
  };
}

function list(ids: readonly string[]): string {
  return ids.length === 0 ? "-" : ids.join(",");
}

/** One output as a script line (undefined: hidden debug log). */
export function formatOutput(o: ShardOutput<string>, showDebug: boolean): string | undefined {
  switch (o.type) {
    case "start-entity-actor":
      return `start ${o.entityId}`;
    case "send-to-entity":
      return `send ${o.entityId} ${o.message}`;
    case "stop-entity-actor":
      return `stop ${o.entityId} reason=${o.reason}${o.stopMessage === undefined ? "" : ` msg=${o.stopMessage}`}`;
    case "force-stop-entity-actor":
      return `force-stop ${o.entityId}`;
    case "buffer-overflow":
      return `overflow ${o.entityId} ${o.message}`;
    case "return-to-region":
      return `return ${o.messages.map((m) => `${m.entityId}:${m.message}`).join(",")}`;
    case "write-remember":
      return `write #${o.batchId} started=${list(o.batch.started)} stopped=${list(o.batch.stopped)}`;
    case "start-timer":
      return `timer-start ${o.key} ${o.delayMs}`;
    case "cancel-timer":
      return `timer-cancel ${o.key}`;
    case "shard-stopped":
      return "shard-stopped";
    case "log":
      return o.level === "debug" && !showDebug ? undefined : `log ${o.level} ${o.text}`;
  }
}

/** Feeds one input, applies the outputs to the world, returns the printed lines. */
function feed(w: ShardWorld, input: ShardInput<string>): string[] {
  const lines: string[] = [];
  for (const o of w.machine.handle(input, w.now)) {
    apply(w, o);
    const line = formatOutput(o, w.showDebug);
    if (line !== undefined) lines.push(line);
  }
  return lines;
}

function apply(w: ShardWorld, o: ShardOutput<string>): void {
  switch (o.type) {
    case "start-entity-actor":
      if (w.live.has(o.entityId))
        throw new Error(`second live incarnation of ${o.entityId} started`);
      w.live.add(o.entityId);
      return;
    case "force-stop-entity-actor":
      w.live.delete(o.entityId);
      return;
    case "start-timer":
      if (w.timers.has(o.key)) throw new Error(`timer ${o.key} started while running`);
      w.timers.set(o.key, { deadline: w.now + o.delayMs, seq: w.timerSeq++ });
      return;
    case "cancel-timer":
      w.timers.delete(o.key);
      return;
    case "write-remember":
      w.writes.set(o.batchId, o.batch);
      return;
    default:
      return;
  }
}

function fireTimer(w: ShardWorld, key: string): string[] {
  w.timers.delete(key);
  return feed(w, { type: "timer", key });
}

/** The due timer with the earliest (deadline, seq), if any at or before `until`. */
function nextDue(w: ShardWorld, until: number): [string, Timer] | undefined {
  let best: [string, Timer] | undefined;
  for (const entry of w.timers) {
    const t = entry[1];
    if (t.deadline > until) continue;
    if (
      best === undefined ||
      t.deadline < best[1].deadline ||
      (t.deadline === best[1].deadline && t.seq < best[1].seq)
    )
      best = entry;
  }
  return best;
}

function parseValue(v: string): unknown {
  if (v === "true" || v === "false") return v === "true";
  if (v === "inf") return Number.POSITIVE_INFINITY;
  const n = Number(v);
  return Number.isFinite(n) && v.trim() !== "" ? n : v;
}

function entity(args: Args): string {
  const id = args.pos[0];
  if (id === undefined) throw new Error("missing entity id");
  return id;
}

function batchId(args: Args): number {
  const n = Number((args.pos[0] ?? "").replace(/^#/, ""));
  if (!Number.isInteger(n)) throw new Error("missing batch id");
  return n;
}

function show(w: ShardWorld, what: string): string[] {
  const m = w.machine;
  switch (what) {
    case "entities": {
      const lines = m.entityIds().map((id) => `${id} ${m.entityState(id)}`);
      return lines.length === 0 ? ["none"] : lines;
    }
    case "remembered":
      return [`remembered ${list(m.rememberedEntityIds())}`];
    case "store":
      return [`store ${list([...w.store].sort())}`];
    case "stats": {
      const s = m.stats;
      return [
        `live=${s.liveEntities} active=${s.activeEntities} buffered=${s.bufferedMessages} overflow=${s.overflowCount} limit=${s.activeLimit}`,
      ];
    }
    case "timers":
      return [`timers ${list(m.runningTimers())}`];
    case "phase":
      return [`phase ${m.phase}`];
    default:
      throw new Error(`show: unknown "${what}"`);
  }
}

/** The shard script commands. */
export const SHARD_COMMANDS: Readonly<Record<string, Command<ShardWorld>>> = {
  settings: (w, args) => {
    const s: Record<string, unknown> = {};
    for (const [k, v] of args.kv) s[k] = parseValue(v);
    // A new machine starts a new world: clock, timers, actors and store are reset.
    Object.assign(w, { ...newShardWorld(), showDebug: w.showDebug });
    w.machine = machineWith(s as Partial<ShardSettings>);
    return undefined;
  },
  debug: (w, args) => {
    w.showDebug = args.pos[0] !== "off";
    return undefined;
  },
  deliver: (w, args) => {
    const id = entity(args);
    if (args.pos.length < 2) throw new Error("deliver needs at least one message");
    return args.pos
      .slice(1)
      .flatMap((message) => feed(w, { type: "deliver", entityId: id, message }));
  },
  "start-entity": (w, args) => feed(w, { type: "start-entity", entityId: entity(args) }),
  started: (w, args) => feed(w, { type: "entity-started", entityId: entity(args) }),
  terminated: (w, args) => {
    const id = entity(args);
    const flags = new Set(args.pos.slice(1));
    if (!flags.has("stale") && !w.live.has(id)) throw new Error(`${id} has no live actor`);
    w.live.delete(id);
    return feed(w, {
      type: "entity-terminated",
      entityId: id,
      passivated: flags.has("passivated"),
      failed: flags.has("failed"),
    });
  },
  passivate: (w, args) =>
    feed(w, { type: "passivate", entityId: entity(args), stopMessage: args.kv.get("stop") }),
  fire: (w, args) => {
    const key = args.pos[0] ?? "";
    const t = w.timers.get(key);
    if (t === undefined) throw new Error(`timer ${key} is not running`);
    w.now = Math.max(w.now, t.deadline);
    return fireTimer(w, key);
  },
  advance: (w, args) => {
    const until = w.now + Number(args.pos[0]);
    if (!Number.isFinite(until)) throw new Error("advance <ms>");
    const lines: string[] = [];
    for (let due = nextDue(w, until); due !== undefined; due = nextDue(w, until)) {
      w.now = Math.max(w.now, due[1].deadline);
      lines.push(`fire ${due[0]} at=${w.now}`, ...fireTimer(w, due[0]));
    }
    w.now = until;
    return lines;
  },
  "hand-off": (w, args) => feed(w, { type: "hand-off", stopMessage: args.kv.get("stop") }),
  ack: (w, args) => {
    const id = batchId(args);
    const batch = w.writes.get(id);
    if (batch !== undefined) w.store = applyRememberBatch(w.store, batch);
    w.writes.delete(id);
    return feed(w, { type: "remember-store-ack", batchId: id });
  },
  fail: (w, args) => {
    const id = batchId(args);
    w.writes.delete(id);
    return feed(w, { type: "remember-store-failed", batchId: id });
  },
  recovered: (w, args) => {
    const ids = (args.pos[0] ?? "-") === "-" ? [] : (args.pos[0] as string).split(",");
    // The driver loaded them from the store: the store holds them.
    for (const id of ids) w.store.add(id);
    return feed(w, { type: "recovered-entities", entityIds: ids });
  },
  limit: (w, args) =>
    feed(w, { type: "set-active-limit", limit: parseValue(args.pos[0] ?? "") as number }),
  shutdown: (w) => feed(w, { type: "shutdown" }),
  show: (w, args) => args.pos.flatMap((what) => show(w, what)),
};
