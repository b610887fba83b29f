/**
 * Commands of the region's scripted interaction tests (test/core/region/scripts/*.txt,
 * format of ../script-runner.ts: a command, then the `>` lines it must print).
 *
 * The world plays the driver of one RegionMachine: region `A` on member `a` (or proxy
 * `P` on member `p` after `config proxy=true`), a virtual clock and the running timers
 * (started / cancelled by the outputs, fired in due order by `advance`). The world fails
 * the script when the machine breaks a driver-visible rule: a timer started while it
 * runs, a second `start-shard` for a shard that still has an actor, a shard started by a
 * proxy, `deliver-local` to a shard that is not up.
 *
 * Names: coordinators `C1`, `C2`; other regions upper-case (`B`); shards and entities are
 * free words; a message is `entity:payload` (`entity:payload@sender` with a sender).
 * `from=` defaults to the coordinator the region currently knows.
 *
 * Setup (silent): `config key=value...` (new machine; `proxy=true` for a proxy,
 * `role=` (default `worker`) and `coordinatorRole=` (default: none given), any
 * RegionSettings key), `verbose on|off` (print log texts and debug logs).
 * Inputs (print the outputs, `ok` when none):
 *   start                       coordinator <C|->              ack [from=C]
 *   home <shard> <region>       homes <region>:<s,s>...        host <shard>
 *   begin <shard> <id>          hand-off <shard> <id>          (all three take from=C)
 *   deliver <shard> <entity:msg[@sender]>... [forwarded=yes]   started <shard>
 *   return <shard> <entity:msg,...|->                          stopped <shard>
 *   terminated <region>         advance <ms>                   fire <timer>
 *   graceful-shutdown           downed                         stop
 * Queries: `show` (phase, coordinator, homes, local shards, buffers), `stats`, `timers`,
 * `route <shard>...` (the routing decision per shard: `1 -> local`, `1 -> B`, `1 -> wait`).
 *
 * Output lines: `C1 <- register A a shards=1,2`, `C1 <- register-proxy P p`,
 * `C1 <- get-shard-home 1`, `C1 <- shard-started 1`, `C1 <- begin-hand-off-ack 1 #3`,
 * `C1 <- shard-stopped 1 #3`, `C1 <- graceful-shutdown-req`, `C1 <- region-stopped`,
 * `forward B 1 e:m`, `local 1 e:m`, `start-shard 1`, `stop-shard 1`,
 * `hand-off-shard 1 #3`, `dead-letter 1 e:m <reason>`, `start-timer key ms`,
 * `cancel-timer key`, `log <level> <event>[: text]`, `stopped`. `advance` prints
 * `timer <key> at=<ms>` before the outputs of each timer it fires.
 */
import { RegionMachine } from "../../../src/core/region/region-machine.js";
import type { RegionSettings } from "../../../src/core/region/region-settings.js";
import type {
  RegionEnvelope,
  RegionInput,
  RegionOutput,
} from "../../../src/core/region/region-types.js";
import type { CoordinatorCommand, RegionCommand } from "../../../src/protocol/sharding.js";
import type { Args, Command } from "../script-runner.js";

interface Timer {
  readonly due: number;
  readonly seq: number;
}

/** Mutable state of one script run. */
export interface RegionWorld {
  machine: RegionMachine<string>;
  proxy: boolean;
  self: string;
  verbose: boolean;
  now: number;
  timers: Map<string, Timer>;
  timerSeq: number;
  /** Local shard actors as the driver sees them: shard -> up. */
  shards: Map<string, boolean>;
}

interface Roles {
  readonly role: string;
  readonly coordinatorRole?: string;
}

function build(
  proxy: boolean,
  settings: Partial<RegionSettings>,
  roles: Roles = { role: "worker" },
): RegionMachine<string> {
  return new RegionMachine<string>({
    self: proxy ? "P" : "A",
    member: proxy ? "p" : "a",
    typeName: "Cart",
    proxy,
    settings,
    ...roles,
  });
}

/** A fresh world: region A on member a, default settings. */
export function newRegionWorld(): RegionWorld {
  return {
    machine: build(false, {}),
    proxy: false,
    self: "A",
    verbose: false,
    now: 0,
    timers: new Map(),
    timerSeq: 0,
    shards: new Map(),
  };
}

// ---- formatting ----------------------------------------------------------------------------

function formatEnvelope(e: RegionEnvelope<string>): string {
  return `${e.entityId}:${e.message}${e.sender === undefined ? "" : `@${String(e.sender)}`}`;
}

function formatCommand(m: CoordinatorCommand): string {
  switch (m.type) {
    case "register":
      return `register ${m.region} ${m.member} shards=${m.hostedShards.join(",") || "-"}`;
    case "register-proxy":
      return `register-proxy ${m.proxy} ${m.member}`;
    case "get-shard-home":
      return `get-shard-home ${m.shard}`;
    case "shard-started":
      return `shard-started ${m.shard}`;
    case "begin-hand-off-ack":
      return `begin-hand-off-ack ${m.shard} #${m.handOffId}`;
    case "shard-stopped":
      return `shard-stopped ${m.shard} #${m.handOffId}`;
    case "graceful-shutdown-req":
      return "graceful-shutdown-req";
    case "region-stopped":
      return "region-stopped";
  }
}

function formatOutput(o: RegionOutput<string>, verbose: boolean): string | undefined {
  switch (o.type) {
    case "send-to-coordinator":
      return `${o.coordinator} <- ${formatCommand(o.message)}`;
    case "relay-to-coordinator":
      return `${o.coordinator} <- via ${o.via} ${formatCommand(o.message)}`;
    case "forward":
      return `forward ${o.region} ${o.shard} ${formatEnvelope(o.envelope)}`;
    case "deliver-local":
      return `local ${o.shard} ${formatEnvelope(o.envelope)}`;
    case "start-shard":
      return `start-shard ${o.shard}`;
    case "stop-shard":
      return `stop-shard ${o.shard}`;
    case "hand-off-shard":
      return `hand-off-shard ${o.shard} #${o.handOffId}`;
    case "dead-letter":
      return `dead-letter ${o.shard} ${formatEnvelope(o.envelope)} ${o.reason}`;
    case "start-timer":
      return `start-timer ${o.key} ${o.delayMs}`;
    case "cancel-timer":
      return `cancel-timer ${o.key}`;
    case "log":
      if (o.level === "debug" && !verbose) return undefined;
      return verbose ? `log ${o.level} ${o.event}: ${o.text}` : `log ${o.level} ${o.event}`;
    case "stopped":
      return "stopped";
  }
}

// ---- driving -------------------------------------------------------------------------------

function apply(w: RegionWorld, o: RegionOutput<string>): void {
  switch (o.type) {
    case "start-timer":
      if (w.timers.has(o.key)) throw new Error(`timer ${o.key} started while running`);
      w.timers.set(o.key, { due: w.now + o.delayMs, seq: w.timerSeq++ });
      return;
    case "cancel-timer":
      w.timers.delete(o.key);
      return;
    case "start-shard":
      if (w.proxy) throw new Error(`proxy started shard ${o.shard}`);
      if (w.shards.has(o.shard)) throw new Error(`second actor for shard ${o.shard}`);
      w.shards.set(o.shard, false);
      return;
    case "deliver-local":
      if (w.shards.get(o.shard) !== true) throw new Error(`deliver-local to ${o.shard}: not up`);
      return;
    default:
      return;
  }
}

/** Feeds one input, applies the outputs to the world, returns the printed lines. */
export function feed(w: RegionWorld, input: RegionInput<string>): string[] {
  const lines: string[] = [];
  for (const o of w.machine.handle(input, w.now)) {
    apply(w, o);
    const line = formatOutput(o, w.verbose);
    if (line !== undefined) lines.push(line);
  }
  return lines;
}

function advance(w: RegionWorld, ms: number): string[] {
  const until = w.now + ms;
  const lines: string[] = [];
  for (;;) {
    let next: [string, Timer] | undefined;
    for (const entry of w.timers) {
      const t = entry[1];
      if (t.due > until) continue;
      if (
        next === undefined ||
        t.due < next[1].due ||
        (t.due === next[1].due && t.seq < next[1].seq)
      )
        next = entry;
    }
    if (next === undefined) break;
    const [key, t] = next;
    w.timers.delete(key);
    w.now = t.due;
    lines.push(`timer ${key} at=${t.due}`, ...feed(w, { type: "timer", key }));
  }
  w.now = until;
  return lines;
}

function pos(args: Args, i: number, what: string): string {
  const v = args.pos[i];
  if (v === undefined) throw new Error(`missing ${what}`);
  return v;
}

function parseEnvelope(spec: string): RegionEnvelope<string> {
  const at = spec.indexOf("@");
  const body = at < 0 ? spec : spec.slice(0, at);
  const colon = body.indexOf(":");
  if (colon <= 0) throw new Error(`bad message "${spec}" (entity:payload[@sender])`);
  const entityId = body.slice(0, colon);
  const message = body.slice(colon + 1);
  return at < 0 ? { entityId, message } : { entityId, message, sender: spec.slice(at + 1) };
}

function fromCoordinator(w: RegionWorld, args: Args, message: RegionCommand): string[] {
  const from = args.kv.get("from") ?? w.machine.view().coordinator;
  if (from === undefined) throw new Error("no coordinator known: give from=");
  return feed(w, { type: "coordinator-message", from, message });
}

function show(w: RegionWorld): string[] {
  const v = w.machine.view();
  const coord = `${v.coordinator ?? "-"}${v.registered ? " registered" : ""}`;
  const lines = [`${v.phase} coordinator=${coord}`];
  if (v.homes.length > 0)
    lines.push(`homes ${v.homes.map((h) => `${h.shard}@${h.region}`).join(" ")}`);
  if (v.localShards.length > 0)
    lines.push(`local ${v.localShards.map((l) => `${l.shard}:${l.state}`).join(" ")}`);
  if (v.buffered.length > 0)
    lines.push(`buffered ${v.buffered.map((b) => `${b.shard}:${b.count}`).join(" ")}`);
  return lines;
}

function configure(w: RegionWorld, args: Args): undefined {
  const settings: Record<string, number> = {};
  let proxy = false;
  let roles: Roles = { role: "worker" };
  for (const [k, v] of args.kv) {
    if (k === "proxy") proxy = v === "true";
    else if (k === "role") roles = { ...roles, role: v };
    else if (k === "coordinatorRole") roles = { ...roles, coordinatorRole: v };
    else settings[k] = Number(v);
  }
  w.proxy = proxy;
  w.self = proxy ? "P" : "A";
  w.machine = build(proxy, settings as Partial<RegionSettings>, roles);
  w.timers.clear();
  w.shards.clear();
  return undefined;
}

/** The commands (see the module comment). */
export const REGION_COMMANDS: Readonly<Record<string, Command<RegionWorld>>> = {
  config: configure,
  verbose: (w, args) => {
    w.verbose = args.pos[0] === "on";
    return undefined;
  },
  start: (w) => feed(w, { type: "start" }),
  route: (w, args) =>
    args.pos.map((shard) => {
      const to = w.machine.route(shard);
      return `${shard} -> ${to === undefined ? "wait" : to === w.machine.id ? "local" : to}`;
    }),
  coordinator: (w, args) => {
    const c = pos(args, 0, "coordinator");
    return feed(w, { type: "coordinator-changed", coordinator: c === "-" ? undefined : c });
  },
  ack: (w, args) =>
    fromCoordinator(w, args, {
      type: "register-ack",
      coordinator: args.kv.get("from") ?? w.machine.view().coordinator ?? "?",
    }),
  home: (w, args) =>
    fromCoordinator(w, args, {
      type: "shard-home",
      shard: pos(args, 0, "shard"),
      region: pos(args, 1, "region"),
    }),
  homes: (w, args) =>
    fromCoordinator(w, args, {
      type: "shard-homes",
      homes: args.pos.map((spec) => {
        const [region, shards] = spec.split(":") as [string, string | undefined];
        return { region, shards: (shards ?? "").split(",").filter((s) => s !== "") };
      }),
    }),
  host: (w, args) => fromCoordinator(w, args, { type: "host-shard", shard: pos(args, 0, "shard") }),
  begin: (w, args) =>
    fromCoordinator(w, args, {
      type: "begin-hand-off",
      shard: pos(args, 0, "shard"),
      handOffId: Number(pos(args, 1, "handOffId")),
    }),
  "hand-off": (w, args) =>
    fromCoordinator(w, args, {
      type: "hand-off",
      shard: pos(args, 0, "shard"),
      handOffId: Number(pos(args, 1, "handOffId")),
    }),
  deliver: (w, args) => {
    const shard = pos(args, 0, "shard");
    if (args.pos.length < 2) throw new Error("missing message");
    return args.pos.slice(1).flatMap((spec) => {
      const e = parseEnvelope(spec);
      const forwarded = args.kv.get("forwarded") === "yes";
      return feed(w, { type: "deliver", shard, ...e, ...(forwarded ? { forwarded } : {}) });
    });
  },
  started: (w, args) => {
    const shard = pos(args, 0, "shard");
    if (w.shards.has(shard)) w.shards.set(shard, true);
    return feed(w, { type: "shard-started-local", shard });
  },
  return: (w, args) => {
    const shard = pos(args, 0, "shard");
    const text = pos(args, 1, "messages");
    const messages = text === "-" ? [] : text.split(",").map(parseEnvelope);
    return feed(w, { type: "return-to-region", shard, messages });
  },
  stopped: (w, args) => {
    const shard = pos(args, 0, "shard");
    w.shards.delete(shard);
    return feed(w, { type: "local-shard-stopped", shard });
  },
  terminated: (w, args) => feed(w, { type: "region-terminated", region: pos(args, 0, "region") }),
  advance: (w, args) => advance(w, Number(pos(args, 0, "ms"))),
  fire: (w, args) => {
    const key = pos(args, 0, "timer");
    w.timers.delete(key);
    return feed(w, { type: "timer", key });
  },
  "graceful-shutdown": (w) => feed(w, { type: "graceful-shutdown" }),
  downed: (w) => feed(w, { type: "self-downed" }),
  stop: (w) => feed(w, { type: "stop" }),
  show: (w) => show(w),
  stats: (w) => {
    const s = w.machine.stats;
    return [
      `buffered=${s.bufferedMessages} overflow=${s.overflowCount} dead-letters=${s.deadLetters} registrations=${s.registrationAttempts}`,
    ];
  },
  timers: (w) => {
    const running = w.machine.runningTimers();
    return [running.length === 0 ? "(none)" : running.join(" ")];
  },
};
