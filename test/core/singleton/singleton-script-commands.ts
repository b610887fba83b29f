/**
 * Commands of the singleton scripted interaction tests (test/core/singleton/scripts/*.txt),
 * run by the shared runner in ../script-runner.ts (format and node names are described
 * there: `a` is shardkit://sys@a:2552 uid 1, `a#2` the same host:port with uid 2).
 *
 * Manager (one machine per script, created by `manager`):
 *   manager self=b [role=r] [lease=on] [retryMs=N] [minRetries=N] [marginMs=N] [logs=on]
 *     [unreachableTakeOver=on]
 *   members a:up:1@r b:leaving:2@r [removed=c,d] [unreachable=a]
 *                                                    member spec name:status:upNumber@roles
 *   recv hand-over-to-me|hand-over-in-progress|hand-over-done|takeover-from-me from=a
 *   terminated | lease ok|refused | lease-lost [reason] | timer KEY | self-downed |
 *   self-removed | shutdown | state
 * Each action prints the outputs, one per line (logs only with logs=on), then `=> State`
 * when the state changed. Timer keys `removal-margin:a` name the node by its short name.
 *
 * Proxy (created by `proxy [role=r] [bufferMax=N] [intervalMs=N] [skipUnreachable=on]`):
 *   p-members SPECS [unreachable=a] | p-send m1 [m2 ...] | p-identified a found|not-found |
 *   p-terminated a | p-timer KEY | p-stop | p-stats
 */
import { memberFrom } from "../../../src/core/membership/member.js";
import { isMemberStatus } from "../../../src/core/membership/member-status.js";
import {
  parseUniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";
import {
  REMOVAL_MARGIN_TIMER_PREFIX,
  SINGLETON_MANAGER_MESSAGE_TYPES,
  type SingletonManagerInput,
  SingletonManagerMachine,
  type SingletonManagerMessage,
  type SingletonManagerOutput,
  type SingletonManagerSettings,
  SingletonProxyMachine,
  type SingletonProxyOutput,
} from "../../../src/core/singleton/index.js";
import type { Args, Command } from "../script-runner.js";
import { list, nameOf, node, num, req } from "../script-runner.js";

/** Mutable state of one script run. */
export interface SingletonWorld {
  manager: SingletonManagerMachine<string> | undefined;
  logs: boolean;
  proxy: SingletonProxyMachine<string> | undefined;
}

/** A fresh world. */
export function newSingletonWorld(): SingletonWorld {
  return { manager: undefined, logs: false, proxy: undefined };
}

/** `a:up:1@r1,r2` -> a member (upNumber defaults to unassigned, roles to none). */
function parseMember(spec: string) {
  const [head, roles] = spec.split("@");
  const [name, status, up] = (head as string).split(":");
  if (name === undefined || status === undefined || !isMemberStatus(status))
    throw new Error(`bad member spec "${spec}"`);
  return memberFrom({
    uniqueAddress: node(name),
    status,
    roles: roles === undefined ? [] : roles.split(","),
    ...(up === undefined ? {} : { upNumber: Number(up) }),
  });
}

function shortKey(key: string): string {
  if (!key.startsWith(REMOVAL_MARGIN_TIMER_PREFIX)) return key;
  const n = parseUniqueAddress(key.slice(REMOVAL_MARGIN_TIMER_PREFIX.length));
  return `${REMOVAL_MARGIN_TIMER_PREFIX}${nameOf(n)}`;
}

function longKey(key: string): string {
  if (!key.startsWith(REMOVAL_MARGIN_TIMER_PREFIX)) return key;
  const n = node(key.slice(REMOVAL_MARGIN_TIMER_PREFIX.length));
  return `${REMOVAL_MARGIN_TIMER_PREFIX}${uniqueAddressToString(n)}`;
}

function formatManagerOutput(o: SingletonManagerOutput<string>): string {
  switch (o.type) {
    case "start-instance":
    case "acquire-lease":
    case "release-lease":
    case "done":
      return o.type;
    case "stop-instance":
      return `stop-instance ${o.stopMessage}`;
    case "send":
      return `send ${nameOf(o.to)} ${o.message.type}`;
    case "start-timer":
      return `start-timer ${shortKey(o.key)} ${o.delayMs}`;
    case "cancel-timer":
      return `cancel-timer ${shortKey(o.key)}`;
    case "log":
      return `log ${o.level} ${o.text}`;
    case "stuck-error": {
      const peers = o.error.waitingFor.map((k) => nameOf(parseUniqueAddress(k)));
      return `stuck-error ${o.error.code} phase=${o.error.phase} waiting-for=${
        peers.join(",") || "-"
      } retries=${o.error.retries}`;
    }
  }
}

function manager(w: SingletonWorld): SingletonManagerMachine<string> {
  if (w.manager === undefined) throw new Error("no manager: use `manager self=...` first");
  return w.manager;
}

/** Feeds one input and prints the outputs plus the state change. */
function feed(w: SingletonWorld, input: SingletonManagerInput): string[] {
  const m = manager(w);
  const before = m.state;
  const lines = m
    .handle(input)
    .filter((o) => w.logs || o.type !== "log")
    .filter((o) => o.type !== "log" || o.level !== "debug")
    .map(formatManagerOutput);
  if (m.state !== before) lines.push(`=> ${m.state}`);
  return lines;
}

function settingsOf(args: Args): Partial<SingletonManagerSettings> {
  const s: Record<string, number | boolean> = {};
  if (args.kv.get("unreachableTakeOver") === "on") s.takeOverFromUnreachable = true;
  if (args.kv.has("retryMs")) s.handOverRetryIntervalMs = num(args, "retryMs", 0);
  if (args.kv.has("minRetries")) s.minNumberOfHandOverRetries = num(args, "minRetries", 0);
  if (args.kv.has("marginMs")) s.removalMarginMs = num(args, "marginMs", 0);
  if (args.kv.has("leaseRetryMs")) s.leaseRetryIntervalMs = num(args, "leaseRetryMs", 0);
  return s;
}

function recv(w: SingletonWorld, args: Args): string[] {
  const type = args.pos[0] as SingletonManagerMessage["type"];
  if (!SINGLETON_MANAGER_MESSAGE_TYPES.includes(type)) throw new Error(`unknown message ${type}`);
  return feed(w, { type, from: node(req(args, "from")) });
}

function proxy(w: SingletonWorld): SingletonProxyMachine<string> {
  if (w.proxy === undefined) throw new Error("no proxy: use `proxy` first");
  return w.proxy;
}

function formatProxyOutput(o: SingletonProxyOutput<string>): string {
  switch (o.type) {
    case "identify":
      return `identify ${nameOf(o.to)}`;
    case "deliver":
      return `deliver ${nameOf(o.to)} ${o.message}`;
    case "dead-letter":
      return `dead-letter ${o.message} ${o.reason}`;
    case "start-timer":
      return `start-timer ${o.key} ${o.delayMs}`;
    case "cancel-timer":
      return `cancel-timer ${o.key}`;
    case "log":
      return `log ${o.level} ${o.text}`;
  }
}

function printProxy(w: SingletonWorld, outputs: SingletonProxyOutput<string>[]): string[] {
  return outputs.filter((o) => w.logs || o.type !== "log").map(formatProxyOutput);
}

const MANAGER_COMMANDS: Record<string, Command<SingletonWorld>> = {
  manager: (w, args) => {
    w.logs = args.kv.get("logs") === "on";
    w.manager = new SingletonManagerMachine<string>({
      self: node(req(args, "self")),
      role: args.kv.get("role"),
      useLease: args.kv.get("lease") === "on",
      stopMessage: args.kv.get("stop") ?? "stop",
      settings: settingsOf(args),
    });
    return undefined;
  },
  members: (w, args) =>
    feed(w, {
      type: "members",
      oldestFirst: args.pos.map(parseMember),
      removed: list(args, "removed").map(node),
      unreachable: list(args, "unreachable").map(node),
    }),
  recv,
  terminated: (w) => feed(w, { type: "instance-terminated" }),
  lease: (w, args) => feed(w, { type: "lease-acquired", ok: args.pos[0] === "ok" }),
  "lease-lost": (w, args) =>
    feed(
      w,
      args.pos[0] === undefined
        ? { type: "lease-lost" }
        : { type: "lease-lost", reason: args.pos[0] },
    ),
  timer: (w, args) => feed(w, { type: "timer", key: longKey(args.pos[0] ?? "") }),
  "self-downed": (w) => feed(w, { type: "self-downed" }),
  "self-removed": (w) => feed(w, { type: "self-removed" }),
  shutdown: (w) => feed(w, { type: "shutdown" }),
  state: (w) => {
    const s = manager(w).snapshot;
    const oldest = s.oldest === undefined ? "-" : nameOf(s.oldest);
    const timers = s.timers.map(shortKey).join(",") || "-";
    return [
      `state ${s.state} instance=${s.instance} lease=${s.lease} oldest=${oldest} timers=${timers}`,
    ];
  },
};

const PROXY_COMMANDS: Record<string, Command<SingletonWorld>> = {
  proxy: (w, args) => {
    w.logs = args.kv.get("logs") === "on";
    const settings: Record<string, number | boolean> = {};
    if (args.kv.get("skipUnreachable") === "on") settings.skipUnreachable = true;
    if (args.kv.has("bufferMax")) settings.bufferSizeMax = num(args, "bufferMax", 0);
    if (args.kv.has("intervalMs"))
      settings.singletonIdentificationIntervalMs = num(args, "intervalMs", 0);
    w.proxy = new SingletonProxyMachine<string>({ role: args.kv.get("role"), settings });
    return undefined;
  },
  "p-members": (w, args) =>
    printProxy(
      w,
      proxy(w).handle({
        type: "members",
        oldestFirst: args.pos.map(parseMember),
        unreachable: list(args, "unreachable").map(node),
      }),
    ),
  "p-send": (w, args) =>
    args.pos.flatMap((message) => printProxy(w, proxy(w).handle({ type: "send", message }))),
  "p-identified": (w, args) =>
    printProxy(
      w,
      proxy(w).handle({
        type: "identify-result",
        from: node(args.pos[0] ?? ""),
        found: args.pos[1] === "found",
      }),
    ),
  "p-terminated": (w, args) =>
    printProxy(w, proxy(w).handle({ type: "singleton-terminated", at: node(args.pos[0] ?? "") })),
  "p-timer": (w, args) => printProxy(w, proxy(w).handle({ type: "timer", key: args.pos[0] ?? "" })),
  "p-stop": (w) => printProxy(w, proxy(w).handle({ type: "stop" })),
  "p-stats": (w) => {
    const s = proxy(w).stats;
    const at = proxy(w).location;
    return [
      `buffered=${s.buffered} dropped=${s.droppedCount} delivered=${s.deliveredCount} located=${
        at === undefined ? "-" : nameOf(at)
      }`,
    ];
  },
};

/** Every command of the singleton scripts. */
export const SINGLETON_COMMANDS: Readonly<Record<string, Command<SingletonWorld>>> = {
  ...MANAGER_COMMANDS,
  ...PROXY_COMMANDS,
};
