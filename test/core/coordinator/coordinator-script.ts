/**
 * Commands of the coordinator's scripted interaction tests (test/core/coordinator/scripts,
 * format of test/core/script-runner.ts: a command, then the `>` lines it must print).
 *
 * The world is one CoordinatorMachine plus what a driver would keep: the virtual clock,
 * the running timers (started / cancelled by the outputs, fired by `advance`), the batch
 * being written, the journal of durable events (so `restart` can recover from it) and the
 * id of the latest hand-off attempt per shard (so `ack` and `stopped` can echo it).
 *
 * Names: members are `a`, `b`, `a#2` (a new incarnation of a); regions and proxies are
 * upper-case (`A`, `P`). Member spec: `name:status[:appVersion][@role,role][~]`, `~` =
 * unreachable, default appVersion 1.0.0. `members ... removed=a@1000,b@0`: the members this
 * node saw removed and when (virtual ms), for the removal margin.
 *
 * Setup (silent): config, custom-allocate (shard=region pins, `clear`; the region
 * `requester` answers the requester, `none` answers no region, `throw` throws),
 * custom-rebalance (the shards the next rebalance proposes; `throw`: it throws),
 * start, restart, `verbose on|off` (print log messages and fields, and debug logs).
 * Actions (print): members, register, proxy, get, persisted, persist-failed, started,
 * ack, ack-all, stopped, shutdown, region-stopped, terminated, proxy-terminated, tick,
 * advance, fire (a timer input for `key` now, running or not: a timer that fired before
 * its cancellation reached the driver), show, journal, stats (the counters of
 * CoordinatorStats).
 * Output lines: `A <- message`, `persist #n: events`, `start-timer key ms`,
 * `cancel-timer key`, `save-snapshot`, `log level event` (debug logs are not printed);
 * verbose: `log level event: message {fields as JSON}`.
 */
import { assert } from "../../../src/base/assert.js";
import type {
  CoordinatorInput,
  CoordinatorMember,
  CoordinatorOutput,
} from "../../../src/core/coordinator/coordinator-io.js";
import {
  CoordinatorMachine,
  type CoordinatorRecovery,
} from "../../../src/core/coordinator/coordinator-machine.js";
import type { CoordinatorSettings } from "../../../src/core/coordinator/coordinator-settings.js";
import {
  type CoordinatorAllocationStrategy,
  consistentHashingStrategy,
  leastShardStrategy,
  thresholdStrategy,
} from "../../../src/core/coordinator/coordinator-strategy.js";
import { isMemberStatus } from "../../../src/core/membership/member-status.js";
import type { CoordinatorEvent, RegionCommand } from "../../../src/protocol/sharding.js";
import type { Args, Command } from "../script-runner.js";

/** Mutable state of one script run. */
export interface CoordinatorWorld {
  machine: CoordinatorMachine | undefined;
  settings: Partial<Record<keyof CoordinatorSettings, number | boolean>>;
  strategyName: string;
  mode: CoordinatorRecovery["mode"];
  role: string | undefined;
  now: number;
  /** key -> [due time, start sequence] */
  timers: Map<string, [number, number]>;
  timerSeq: number;
  writing: { batchId: number; events: readonly CoordinatorEvent[] } | undefined;
  journal: CoordinatorEvent[];
  handOffIds: Map<string, { id: number; recipients: string[] }>;
  customAllocate: Map<string, string>;
  customRebalance: string[];
  verbose: boolean;
}

export function newCoordinatorWorld(): CoordinatorWorld {
  return {
    machine: undefined,
    settings: {},
    strategyName: "least-shard",
    mode: "persistent",
    role: undefined,
    now: 0,
    timers: new Map(),
    timerSeq: 0,
    writing: undefined,
    journal: [],
    handOffIds: new Map(),
    customAllocate: new Map(),
    customRebalance: [],
    verbose: false,
  };
}

/** The scripted custom strategy: pinned shards, else the LAST candidate; listed rebalance. */
function customStrategy(w: CoordinatorWorld): CoordinatorAllocationStrategy {
  return {
    allocateShard: (requester, shard, regions) => {
      const pin = w.customAllocate.get(shard);
      if (pin === "requester") return requester;
      if (pin === "none") return undefined;
      if (pin === "throw") throw new Error(`no home for ${shard}`);
      return pin ?? regions[regions.length - 1]?.regionId;
    },
    rebalance: () => {
      const out = w.customRebalance;
      w.customRebalance = [];
      if (out.length === 1 && out[0] === "throw") throw new Error("no rebalance");
      return out;
    },
  };
}

function strategyOf(w: CoordinatorWorld): CoordinatorAllocationStrategy {
  switch (w.strategyName) {
    case "least-shard":
      return leastShardStrategy({ absoluteLimit: 20, relativeLimit: 1 });
    case "threshold":
      return thresholdStrategy();
    case "consistent-hashing":
      return consistentHashingStrategy();
    case "custom":
      return customStrategy(w);
    default:
      throw new Error(`unknown strategy ${w.strategyName}`);
  }
}

function build(w: CoordinatorWorld, recovery: CoordinatorRecovery): void {
  w.machine = new CoordinatorMachine({
    self: "coordinator",
    strategy: strategyOf(w),
    recovery,
    settings: w.settings as Partial<CoordinatorSettings>,
    ...(w.role === undefined ? {} : { role: w.role }),
  });
  w.timers.clear();
  w.writing = undefined;
  w.handOffIds.clear();
}

function machine(w: CoordinatorWorld): CoordinatorMachine {
  if (w.machine === undefined) build(w, recoveryOf(w));
  return w.machine as CoordinatorMachine;
}

function recoveryOf(w: CoordinatorWorld): CoordinatorRecovery {
  return w.mode === "regions"
    ? { mode: "regions" }
    : { mode: "persistent", events: [...w.journal] };
}

// ---- formatting ----------------------------------------------------------------------------

export function formatEvent(e: CoordinatorEvent): string {
  switch (e.type) {
    case "shard-region-registered":
      return `registered ${e.region}@${e.member}`;
    case "shard-region-proxy-registered":
      return `proxy-registered ${e.proxy}@${e.member}`;
    case "shard-home-allocated":
      return `allocated ${e.shard}@${e.region}`;
    case "shard-home-deallocated":
      return `deallocated ${e.shard}`;
    case "shard-region-terminated":
      return `region-terminated ${e.region}`;
    case "shard-region-proxy-terminated":
      return `proxy-terminated ${e.proxy}`;
  }
}

function formatMessage(m: RegionCommand): string {
  switch (m.type) {
    case "register-ack":
      return `register-ack ${m.coordinator}`;
    case "shard-home":
      return `shard-home ${m.shard}@${m.region}`;
    case "shard-homes":
      return `shard-homes ${m.homes.map((h) => `${h.shards.join(",")}@${h.region}`).join(" ")}`;
    case "host-shard":
      return `host-shard ${m.shard}`;
    case "begin-hand-off":
      return `begin-hand-off ${m.shard} #${m.handOffId}`;
    case "hand-off":
      return `hand-off ${m.shard} #${m.handOffId}`;
  }
}

function formatOutput(o: CoordinatorOutput, verbose: boolean): string | undefined {
  switch (o.type) {
    case "send":
      return `${o.to} <- ${formatMessage(o.message)}`;
    case "persist":
      return `persist #${o.batchId}: ${o.events.map(formatEvent).join(", ")}`;
    case "save-snapshot":
      return "save-snapshot";
    case "start-timer":
      return `start-timer ${o.key} ${o.delayMs}`;
    case "cancel-timer":
      return `cancel-timer ${o.key}`;
    case "log":
      if (!verbose) return o.level === "debug" ? undefined : `log ${o.level} ${o.event}`;
      return `log ${o.level} ${o.event}: ${o.message} ${JSON.stringify(o.fields)}`;
  }
}

// ---- driving -------------------------------------------------------------------------------

/** Feeds one input, tracks timers, writes and hand-off ids; returns the printed lines. */
export function feed(w: CoordinatorWorld, input: CoordinatorInput): string[] {
  const outputs = machine(w).handle(input, w.now);
  const lines: string[] = [];
  for (const o of outputs) {
    track(w, o);
    const line = formatOutput(o, w.verbose);
    if (line !== undefined) lines.push(line);
  }
  return lines;
}

function track(w: CoordinatorWorld, o: CoordinatorOutput): void {
  if (o.type === "start-timer") w.timers.set(o.key, [w.now + o.delayMs, w.timerSeq++]);
  else if (o.type === "cancel-timer") w.timers.delete(o.key);
  else if (o.type === "persist") {
    assert(w.writing === undefined || w.writing.batchId === o.batchId, "two writes at once");
    w.writing = { batchId: o.batchId, events: o.events };
  } else if (o.type === "send" && o.message.type === "begin-hand-off") {
    const known = w.handOffIds.get(o.message.shard);
    if (known?.id === o.message.handOffId) known.recipients.push(o.to);
    else w.handOffIds.set(o.message.shard, { id: o.message.handOffId, recipients: [o.to] });
  }
}

function parseMember(spec: string): CoordinatorMember {
  let s = spec;
  const reachable = !s.endsWith("~");
  if (!reachable) s = s.slice(0, -1);
  const [main, roleList] = s.split("@") as [string, string | undefined];
  const [name, status, appVersion] = main.split(":");
  if (name === undefined || name === "" || !isMemberStatus(status))
    throw new Error(`bad member spec "${spec}"`);
  return {
    uniqueAddress: name,
    address: name.split("#")[0] as string,
    status,
    appVersion: appVersion ?? "1.0.0",
    reachable,
    roles: roleList === undefined ? [] : roleList.split(","),
  };
}

function pos(args: Args, i: number, what: string): string {
  const v = args.pos[i];
  if (v === undefined) throw new Error(`missing ${what}`);
  return v;
}

function handOffIdOf(w: CoordinatorWorld, args: Args, shard: string): number {
  const explicit = args.kv.get("id");
  if (explicit !== undefined) return Number(explicit);
  const known = w.handOffIds.get(shard);
  if (known === undefined) throw new Error(`no hand-off of ${shard} seen`);
  return known.id;
}

function advance(w: CoordinatorWorld, ms: number): string[] {
  const until = w.now + ms;
  const lines: string[] = [];
  for (;;) {
    const due = [...w.timers].filter(([, [at]]) => at <= until);
    if (due.length === 0) break;
    due.sort(([, a], [, b]) => a[0] - b[0] || a[1] - b[1]);
    const [key, [at]] = due[0] as [string, [number, number]];
    w.timers.delete(key);
    w.now = at;
    lines.push(`timer ${key}`, ...feed(w, { type: "timer", key }));
  }
  w.now = until;
  return lines;
}

function show(w: CoordinatorWorld): string[] {
  const v = machine(w).view();
  const regions = v.regions.map(
    (r) => `${r.region}@${r.member}:${r.shards.join(",") || "-"}${r.shuttingDown ? "!" : ""}`,
  );
  const lines = [`regions ${regions.join(" ") || "-"}`];
  if (v.proxies.length > 0) lines.push(`proxies ${v.proxies.join(" ")}`);
  if (v.handOffs.length > 0)
    lines.push(`hand-offs ${v.handOffs.map((h) => `${h.shard}:${h.phase}`).join(" ")}`);
  if (v.waitingShards.length > 0) lines.push(`waiting ${v.waitingShards.join(",")}`);
  if (v.unallocatedShards.length > 0) lines.push(`unallocated ${v.unallocatedShards.join(",")}`);
  if (v.pendingEvents > 0) lines.push(`pending-events ${v.pendingEvents}`);
  const flags = [
    v.allocationOpen ? "allocation-open" : "allocation-closed",
    ...(v.recovering ? ["recovering"] : []),
    ...(v.persistFailing ? ["persist-failing"] : []),
  ];
  lines.push(flags.join(" "));
  return lines;
}

function configure(w: CoordinatorWorld, args: Args): undefined {
  for (const [k, v] of args.kv) {
    if (k === "strategy") w.strategyName = v;
    else if (k === "mode") w.mode = v === "regions" ? "regions" : "persistent";
    else if (k === "role") w.role = v;
    else
      (w.settings as Record<string, unknown>)[k] =
        v === "true" ? true : v === "false" ? false : Number(v);
  }
  return undefined;
}

/** The commands (see the module comment). */
export const COORDINATOR_COMMANDS: Readonly<Record<string, Command<CoordinatorWorld>>> = {
  config: configure,
  verbose: (w, args) => {
    w.verbose = args.pos[0] === "on";
    return undefined;
  },
  "custom-allocate": (w, args) => {
    if (args.pos.includes("clear")) w.customAllocate.clear();
    for (const [shard, region] of args.kv) w.customAllocate.set(shard, region);
    return undefined;
  },
  "custom-rebalance": (w, args) => {
    w.customRebalance = [...args.pos];
    return undefined;
  },
  start: (w) => {
    build(w, recoveryOf(w));
    return undefined;
  },
  restart: (w, args) => {
    if (args.kv.has("mode")) configure(w, args);
    build(w, recoveryOf(w));
    return undefined;
  },
  members: (w, args) => {
    const removed = args.kv.get("removed");
    return feed(w, {
      type: "membership",
      members: args.pos.map(parseMember),
      ...(removed === undefined
        ? {}
        : {
            removed: removed.split(",").map((r) => {
              const [uniqueAddress, at] = r.split("@") as [string, string];
              return { uniqueAddress, atMs: Number(at) };
            }),
          }),
    });
  },
  register: (w, args) =>
    feed(w, {
      type: "register",
      region: pos(args, 0, "region"),
      member: pos(args, 1, "member"),
      hostedShards: args.kv.get("shards")?.split(",") ?? [],
    }),
  proxy: (w, args) =>
    feed(w, {
      type: "register-proxy",
      proxy: pos(args, 0, "proxy"),
      member: pos(args, 1, "member"),
    }),
  get: (w, args) =>
    feed(w, { type: "get-shard-home", shard: pos(args, 0, "shard"), from: pos(args, 1, "from") }),
  persisted: (w, args) => {
    const batchId = Number(args.kv.get("id") ?? w.writing?.batchId ?? -1);
    const written = w.writing;
    if (written?.batchId === batchId) {
      w.writing = undefined;
      w.journal.push(...written.events);
    }
    return feed(w, { type: "persisted", batchId });
  },
  "persist-failed": (w, args) => {
    const batchId = Number(args.kv.get("id") ?? w.writing?.batchId ?? -1);
    if (w.writing?.batchId === batchId) w.writing = undefined;
    return feed(w, { type: "persist-failed", batchId, reason: "store unavailable" });
  },
  started: (w, args) =>
    feed(w, { type: "shard-started", shard: pos(args, 0, "shard"), from: pos(args, 1, "from") }),
  ack: (w, args) => {
    const shard = pos(args, 0, "shard");
    const handOffId = handOffIdOf(w, args, shard);
    return feed(w, { type: "begin-hand-off-ack", shard, handOffId, from: pos(args, 1, "from") });
  },
  "ack-all": (w, args) => {
    const shard = pos(args, 0, "shard");
    const known = w.handOffIds.get(shard);
    if (known === undefined) throw new Error(`no hand-off of ${shard} seen`);
    return known.recipients.flatMap((from) =>
      feed(w, { type: "begin-hand-off-ack", shard, handOffId: known.id, from }),
    );
  },
  stopped: (w, args) => {
    const shard = pos(args, 0, "shard");
    const handOffId = handOffIdOf(w, args, shard);
    return feed(w, { type: "shard-stopped", shard, handOffId, from: pos(args, 1, "from") });
  },
  shutdown: (w, args) => feed(w, { type: "graceful-shutdown-req", region: pos(args, 0, "region") }),
  "region-stopped": (w, args) =>
    feed(w, { type: "region-stopped", region: pos(args, 0, "region") }),
  terminated: (w, args) => feed(w, { type: "region-terminated", region: pos(args, 0, "region") }),
  "proxy-terminated": (w, args) =>
    feed(w, { type: "proxy-terminated", proxy: pos(args, 0, "proxy") }),
  tick: (w) => feed(w, { type: "rebalance-tick" }),
  advance: (w, args) => advance(w, Number(pos(args, 0, "ms"))),
  fire: (w, args) => {
    const key = pos(args, 0, "key");
    w.timers.delete(key);
    return feed(w, { type: "timer", key });
  },
  show: (w) => show(w),
  journal: (w) => (w.journal.length === 0 ? ["(empty)"] : w.journal.map(formatEvent)),
  stats: (w) => {
    const s = machine(w).view().stats;
    return [
      `dropped ${s.droppedRequests} persist-failures ${s.persistFailures} ` +
        `hand-off-timeouts ${s.handOffTimeouts} hand-offs-completed ${s.handOffsCompleted} ` +
        `moved-from-unreachable ${s.shardsMovedFromUnreachable}`,
    ];
  },
};
