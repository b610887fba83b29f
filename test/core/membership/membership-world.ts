/**
 * A scripted world of MembershipMachines (src/core/membership/membership-machine.ts) for
 * interaction tests: a virtual clock, nodes named by one word (host `<name>`, port 2552,
 * uid = position + 1; leader order is the name order), a network that delivers every
 * message at once in send order unless the link is cut, and the periodic ticks the driver
 * would run (every tick kind every 1000 ms at the same phase, nodes in name order). It
 * plays the driver: it feeds inputs, performs the outputs (sends go to the queue, seed
 * timers to the timer table) and records every output as a line of the trace:
 *
 *   `a -> b Gossip`            a message (kind name; `!` after the kind when urgent)
 *   `a: member-up b`           an event a published (`leader-changed a`, ...)
 *   `a: DOWN b,c (reason)`     a downing decision of a's resolver or auto-down (`nothing`
 *                              when the formation gate withheld every node)
 *   `a: quarantine b`          a removed incarnation quarantined (`after <ms>` when delayed)
 *   `a: acquire-lease <ms>`    lease-majority asks for the lease
 *   `a: self-removed (reason)` a is removed and stops: its machine gets no more inputs
 *   `a: <level> <message>`     a log line (debug lines are left out)
 *
 * Seed timers, `state-changed` and heartbeat traffic are left out of the trace unless
 * `traceHeartbeats` is set. A node can be paused (`pause`): it gets no inputs and its
 * messages wait until `resume`, which then feeds its reaper the lateness of the stall. A
 * node stops at once on `self-removed` (as with a driver whose onSelfRemoved stops it).
 */
import type { SbrSettingsOverrides } from "../../../src/core/downing/sbr-settings.js";
import { resolveSbrSettings } from "../../../src/core/downing/sbr-settings.js";
import type { PhiAccrualSettings } from "../../../src/core/failure-detector/phi-accrual-settings.js";
import { type Address, addressOf } from "../../../src/core/membership/address.js";
import type { ClusterEvent } from "../../../src/core/membership/cluster-events.js";
import {
  type ClusterSettings,
  resolveClusterSettings,
} from "../../../src/core/membership/cluster-settings.js";
import {
  type MembershipInput,
  MembershipMachine,
  type MembershipOutput,
} from "../../../src/core/membership/membership-machine.js";
import {
  MembershipKind,
  type MembershipMessage,
} from "../../../src/core/membership/membership-messages.js";
import { selfMember } from "../../../src/core/membership/membership-state.js";
import type { SeedJoinTimer } from "../../../src/core/membership/seed-join.js";
import {
  type UniqueAddress,
  uniqueAddressOf,
} from "../../../src/core/membership/unique-address.js";

/** Tick interval of every periodic task in the world (the settings' defaults). */
export const TICK_MS = 1000;

const KIND_NAMES = new Map<number, string>(
  Object.entries(MembershipKind).map(([name, kind]) => [kind, name]),
);

interface WorldNode {
  readonly name: string;
  readonly ua: UniqueAddress;
  readonly machine: MembershipMachine;
  readonly seedTimers: Map<SeedJoinTimer, number>;
  stopped: boolean;
  pausedAt: number | undefined;
}

interface InFlight {
  readonly from: string;
  readonly to: string;
  readonly message: MembershipMessage;
}

export interface WorldOptions {
  readonly settings?: Partial<ClusterSettings>;
  readonly downing?: SbrSettingsOverrides;
  /** Seed nodes by name (in order); empty: nodes join by `join`. */
  readonly seeds?: readonly string[];
  readonly hasLease?: boolean;
  /** Roles per node name; a node not named has none. */
  readonly roles?: Readonly<Record<string, readonly string[]>>;
  /** Failure detector settings of every node. */
  readonly failureDetector?: Partial<PhiAccrualSettings>;
  /** Downing overrides per node name, over `downing`. */
  readonly downingByNode?: Readonly<Record<string, SbrSettingsOverrides>>;
}

export class MembershipWorld {
  now = 0;
  readonly trace: string[] = [];
  /** The virtual time of each trace line. */
  readonly times: number[] = [];
  /** Every output as performed, with its node (for what the trace lines leave out). */
  readonly outputs: { readonly node: string; readonly output: MembershipOutput }[] = [];
  traceHeartbeats = false;
  private readonly nodes = new Map<string, WorldNode>();
  private readonly queue: InFlight[] = [];
  private readonly cut = new Set<string>();
  private readonly held: InFlight[] = [];

  constructor(private readonly options: WorldOptions = {}) {}

  /** Adds a node `name` (not started). */
  add(name: string): this {
    const ua = uniqueAddressOf(this.addressOf(name), this.nodes.size + 1);
    const machine = new MembershipMachine(
      {
        self: ua,
        roles: this.options.roles?.[name] ?? [],
        appVersion: "1.0.0",
        settings: resolveClusterSettings(this.options.settings),
        sbrSettings: resolveSbrSettings({
          ...this.options.downing,
          ...this.options.downingByNode?.[name],
        }),
        seedNodes: (this.options.seeds ?? []).map((s) => this.addressOf(s)),
        hasLease: this.options.hasLease ?? false,
        ...(this.options.failureDetector === undefined
          ? {}
          : { failureDetector: this.options.failureDetector }),
        // gossip targets: always the first candidate (the choice is not under test here)
        random: { next: () => 0, nextInt: () => 0 },
      },
      this.now,
    );
    this.nodes.set(name, {
      name,
      ua,
      machine,
      seedTimers: new Map(),
      stopped: false,
      pausedAt: undefined,
    });
    return this;
  }

  /** The incarnation (address and uid) of `name`. */
  uniqueAddressOf(name: string): UniqueAddress {
    return this.node(name).ua;
  }

  machine(name: string): MembershipMachine {
    return this.node(name).machine;
  }

  /** The status of `member` as `observer` sees it ("-" when not a member). */
  statusOf(observer: string, member: string): string {
    const ua = this.node(member).ua;
    const m = this.machine(observer).state.latestGossip.members.find(
      (x) => x.uniqueAddress.uid === ua.uid,
    );
    return m?.status ?? "-";
  }

  /** Statuses of all members as `observer` sees them: `a=up b=up`. */
  view(observer: string): string {
    return this.machine(observer)
      .state.latestGossip.members.map((m) => `${m.uniqueAddress.address.host}=${m.status}`)
      .join(" ");
  }

  /** The time of the first trace line equal to `line` (undefined if none). */
  when(line: string): number | undefined {
    const i = this.trace.indexOf(line);
    return i < 0 ? undefined : this.times[i];
  }

  isStopped(name: string): boolean {
    return this.node(name).stopped;
  }

  isMember(name: string): boolean {
    return selfMember(this.machine(name).state) !== undefined;
  }

  /** Feeds one input to `name` and returns the trace lines it produced. */
  feed(name: string, input: MembershipInput): string[] {
    const n = this.node(name);
    if (n.stopped || n.pausedAt !== undefined) return [];
    const start = this.trace.length;
    for (const o of n.machine.handle(input, this.now)) this.perform(n, o);
    return this.trace.slice(start);
  }

  /** Delivers messages until none is in flight; returns the trace lines of the deliveries. */
  deliver(): string[] {
    const start = this.trace.length;
    for (let i = 0; this.queue.length > 0; i++) {
      if (i > 100_000) throw new Error("messages never stop");
      const m = this.queue.shift() as InFlight;
      const to = this.node(m.to);
      if (to.pausedAt !== undefined) {
        this.held.push(m);
        continue;
      }
      this.feed(m.to, { type: "received", from: this.node(m.from).ua, message: m.message });
    }
    return this.trace.slice(start);
  }

  /** Cuts both directions between every node of `left` and every node of `right`. */
  partition(left: readonly string[], right: readonly string[]): void {
    for (const l of left) for (const r of right) this.cut.add(linkKey(l, r));
  }

  heal(left?: readonly string[], right?: readonly string[]): void {
    if (left === undefined || right === undefined) this.cut.clear();
    else for (const l of left) for (const r of right) this.cut.delete(linkKey(l, r));
  }

  /** `name` stops getting inputs (its timers and deliveries wait) until `resume`. */
  pause(name: string): void {
    this.node(name).pausedAt = this.now;
  }

  /**
   * Ends a pause: a reaper tick late by the pause (`reportStall` false: as if the driver
   * had not measured it), then the held messages arrive.
   */
  resume(name: string, reportStall = true): string[] {
    const n = this.node(name);
    const pausedAt = n.pausedAt ?? this.now;
    n.pausedAt = undefined;
    const start = this.trace.length;
    this.queue.push(...this.held.splice(0));
    this.feed(name, {
      type: "reaper-tick",
      latenessMs: reportStall ? Math.max(0, this.now - pausedAt - TICK_MS) : 0,
      loopDelayMs: 0,
    });
    this.deliver();
    return this.trace.slice(start);
  }

  /**
   * Advances the clock by `ms` in steps of 100 ms; at every multiple of TICK_MS each
   * live node gets its heartbeat, reaper, gossip and leader ticks (nodes in name order,
   * messages delivered after each node's ticks); seed timers fire when due.
   */
  run(ms: number): string[] {
    const start = this.trace.length;
    const end = this.now + ms;
    while (this.now < end) {
      this.now += 100;
      for (const n of this.nodes.values()) {
        for (const [timer, due] of [...n.seedTimers]) {
          if (due > this.now || n.pausedAt !== undefined) continue;
          n.seedTimers.delete(timer);
          this.feed(n.name, { type: "seed-timeout", timer });
        }
      }
      this.deliver();
      if (this.now % TICK_MS !== 0) continue;
      for (const name of [...this.nodes.keys()].sort()) {
        this.feed(name, { type: "heartbeat-tick" });
        this.feed(name, { type: "reaper-tick", latenessMs: 0, loopDelayMs: 0 });
        this.feed(name, { type: "gossip-tick" });
        this.feed(name, { type: "leader-tick" });
        this.deliver();
      }
    }
    return this.trace.slice(start);
  }

  /** Runs until `done()` holds (checked after every 100 ms), at most `maxMs`. */
  runUntil(done: () => boolean, maxMs: number): void {
    const end = this.now + maxMs;
    while (!done()) {
      if (this.now >= end) throw new Error(`not done after ${maxMs} ms`);
      this.run(100);
    }
  }

  /**
   * Starts every node with the seed conversation, runs until all are up everywhere, then
   * 5 s more so that every monitor has heard its peers for a while.
   */
  formCluster(names: readonly string[], maxMs = 30_000): void {
    for (const n of names) this.add(n);
    for (const n of names) this.feed(n, { type: "start" });
    this.deliver();
    this.runUntil(
      () => names.every((o) => names.every((m) => this.statusOf(o, m) === "up")),
      maxMs,
    );
    this.run(5 * TICK_MS);
  }

  private perform(n: WorldNode, o: MembershipOutput): void {
    const me = n.name;
    this.outputs.push({ node: me, output: o });
    switch (o.type) {
      case "send": {
        const to = o.to.host;
        const kind = KIND_NAMES.get(o.message.kind) ?? String(o.message.kind);
        const heartbeat =
          o.message.kind === MembershipKind.Heartbeat ||
          o.message.kind === MembershipKind.HeartbeatRsp;
        if (!heartbeat || this.traceHeartbeats)
          this.record(`${me} -> ${to} ${kind}${o.urgent ? "!" : ""}`);
        if (!this.cut.has(linkKey(me, to)) && this.nodes.has(to))
          this.queue.push({ from: me, to, message: o.message });
        return;
      }
      case "state-changed":
        return;
      case "publish":
        this.record(`${me}: ${describeEvent(o.event)}`);
        return;
      case "quarantine":
        this.record(
          `${me}: quarantine ${o.node.address.host}${o.afterMs === undefined ? "" : ` after ${o.afterMs}`}`,
        );
        return;
      case "downing":
        this.record(
          `${me}: DOWN ${o.nodes.map((x) => x.address.host).join(",") || "nothing"} (${o.reason})`,
        );
        return;
      case "acquire-lease":
        this.record(`${me}: acquire-lease ${o.delayMs}`);
        return;
      case "start-seed-timer":
        n.seedTimers.set(o.timer, this.now + o.delayMs);
        return;
      case "cancel-seed-timer":
        n.seedTimers.delete(o.timer);
        return;
      case "cancel-seed-timers":
        n.seedTimers.clear();
        return;
      case "self-removed":
        this.record(`${me}: self-removed (${o.reason})`);
        n.stopped = true;
        return;
      case "log":
        if (o.level !== "debug") this.record(`${me}: ${o.level} ${o.message}`);
        return;
    }
  }

  private record(line: string): void {
    this.trace.push(line);
    this.times.push(this.now);
  }

  private node(name: string): WorldNode {
    const n = this.nodes.get(name);
    if (n === undefined) throw new Error(`no node ${name}`);
    return n;
  }

  private addressOf(name: string): Address {
    return addressOf("shardkit", "sk", name, 2552);
  }
}

function linkKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

function describeEvent(e: ClusterEvent): string {
  switch (e.type) {
    case "leader-changed":
      return `leader-changed ${e.leader?.address.host ?? "-"}`;
    case "member-removed":
      return `member-removed ${e.member.uniqueAddress.address.host} (was ${e.previousStatus})`;
    default:
      return "member" in e ? `${e.type} ${e.member.uniqueAddress.address.host}` : e.type;
  }
}
