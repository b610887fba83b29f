/**
 * The commands of the scripted interaction tests (see script-runner.ts for the format).
 *
 * The world holds named gossips ("views"). Editing commands change the CURRENT view
 * (`use NAME` switches, default "main"); node-to-node commands (`gossip a->b`,
 * `status a->b`, `welcome a->b`) use the view named after each node, with that node as
 * self. Seed-join machines and the SBR stability tracker live beside the views.
 *
 * Setup (silent): use, copy-to, members, set, add, seen, unreachable, reachable,
 * terminated, version, bump, remove, tombstone, seed-machine, sbr-tracker, sbr-applied.
 * Actions (print): show, convergence, leader, leader-actions, compare, gossip, status,
 * select-target, rounds, join, welcome, init-join, seed, seed-phase, sbr, sbr-observe,
 * sbr-tick, sbr-stats.
 */

import { decideDowning } from "../../src/core/downing/downing-decision.js";
import type { DowningStrategy } from "../../src/core/downing/downing-strategy.js";
import { SbrStabilityTracker } from "../../src/core/downing/sbr-stability.js";
import {
  sbrViewOf,
  unreachableMembersOf,
  unreachableUpTogetherOf,
} from "../../src/core/downing/sbr-view.js";
import {
  addMember,
  clockKeyOf,
  emptyGossip,
  findMember,
  type Gossip,
  gossipOf,
  incrementVersion,
  markAsDown,
  removeMember,
  updateMembers,
  withOnlySeen,
  withReachability,
} from "../../src/core/membership/gossip.js";
import {
  compareIncomingGossip,
  gossipRoundsPerInterval,
  gossipStatusOf,
  receiveGossip,
  receiveGossipStatus,
  selectGossipTarget,
} from "../../src/core/membership/gossip-logic.js";
import { onInitJoin, onJoin, onWelcome } from "../../src/core/membership/join.js";
import { leaderActions } from "../../src/core/membership/leader-actions.js";
import { memberFrom } from "../../src/core/membership/member.js";
import { isMemberStatus } from "../../src/core/membership/member-status.js";
import {
  convergence,
  leader,
  type MembershipState,
  membershipStateOf,
} from "../../src/core/membership/membership-state.js";
import {
  markReachable,
  markTerminated,
  markUnreachable,
  type Reachability,
} from "../../src/core/membership/reachability.js";
import { SeedJoinMachine, type SeedJoinOutput } from "../../src/core/membership/seed-join.js";
import {
  compareUniqueAddresses,
  type UniqueAddress,
} from "../../src/core/membership/unique-address.js";
import { vectorClockOf } from "../../src/core/membership/vector-clock.js";
import {
  type Args,
  address as addressNamed,
  type Command,
  formatEvent,
  formatMember,
  list,
  nameOf,
  names,
  node,
  num,
  req,
} from "./script-runner.js";

/** Mutable state of one script run. */
export interface World {
  readonly views: Map<string, Gossip>;
  current: string;
  readonly seeds: Map<string, SeedJoinMachine>;
  tracker: SbrStabilityTracker | undefined;
}

/** A fresh world. */
export function newWorld(): World {
  return {
    views: new Map([["main", emptyGossip]]),
    current: "main",
    seeds: new Map(),
    tracker: undefined,
  };
}

function view(w: World, name = w.current): Gossip {
  return w.views.get(name) ?? emptyGossip;
}

function setView(w: World, g: Gossip, name = w.current): void {
  w.views.set(name, g);
}

function stateOf(g: Gossip, self: string): MembershipState {
  return membershipStateOf({ latestGossip: g, selfUniqueAddress: node(self) });
}

/** `a:up:1@r1,r2` -> member fields. */
function parseMember(spec: string, existing?: Gossip) {
  const [main, roleText] = spec.split("@");
  const [name, status, up] = (main as string).split(":");
  if (!isMemberStatus(status)) throw new Error(`bad member status in "${spec}"`);
  const n = node(name as string);
  const old = existing === undefined ? undefined : findMember(existing, n);
  return memberFrom({
    uniqueAddress: n,
    status,
    roles: roleText === undefined ? (old?.roles ?? []) : roleText.split(","),
    upNumber: up === undefined ? old?.upNumber : Number(up),
  });
}

function rebuilt(g: Gossip, parts: Partial<Parameters<typeof gossipOf>[0]>): Gossip {
  return gossipOf({
    members: g.members,
    seen: g.overview.seen,
    reachability: g.overview.reachability,
    version: g.version,
    tombstones: g.tombstones,
    ...parts,
  });
}

function edges(args: Args): [UniqueAddress, UniqueAddress][] {
  return args.pos.map((p) => {
    const [o, s] = p.split("->");
    if (o === undefined || s === undefined) throw new Error(`expected observer->subject, got ${p}`);
    return [node(o), node(s)];
  });
}

function reachabilityCommand(
  mark: (r: Reachability, o: UniqueAddress, s: UniqueAddress) => Reachability,
): Command<World> {
  return (w, args) => {
    let g = view(w);
    for (const [o, s] of edges(args)) g = withReachability(g, mark(g.overview.reachability, o, s));
    setView(w, g);
    return undefined;
  };
}

function fromTo(args: Args): [string, string] {
  const [from, to] = (args.pos[0] ?? "").split("->");
  if (from === undefined || to === undefined) throw new Error("expected FROM->TO");
  return [from, to];
}

const setupCommands: Record<string, Command<World>> = {
  use: (w, a) => {
    w.current = a.pos[0] ?? "main";
    return undefined;
  },
  "copy-to": (w, a) => {
    for (const name of a.pos) setView(w, view(w), name);
    return undefined;
  },
  members: (w, a) => {
    setView(w, gossipOf({ members: a.pos.map((s) => parseMember(s)) }));
    return undefined;
  },
  set: (w, a) => {
    let g = view(w);
    for (const spec of a.pos) {
      const m = parseMember(spec, g);
      g = m.status === "down" ? markAsDown(g, m.uniqueAddress) : updateMembers(g, [m]);
    }
    setView(w, g);
    return undefined;
  },
  add: (w, a) => {
    setView(
      w,
      a.pos.reduce((g, s) => addMember(g, parseMember(s)), view(w)),
    );
    return undefined;
  },
  seen: (w, a) => {
    setView(w, rebuilt(view(w), { seen: a.pos.map(node) }));
    return undefined;
  },
  unreachable: reachabilityCommand(markUnreachable),
  reachable: reachabilityCommand(markReachable),
  terminated: reachabilityCommand(markTerminated),
  version: (w, a) => {
    const entries = [...a.kv].map(([k, v]) => [clockKeyOf(node(k)), Number(v)] as const);
    setView(w, rebuilt(view(w), { version: vectorClockOf(entries) }));
    return undefined;
  },
  bump: (w, a) => {
    const n = node(a.pos[0] ?? "");
    setView(w, withOnlySeen(incrementVersion(view(w), clockKeyOf(n)), n));
    return undefined;
  },
  remove: (w, a) => {
    setView(w, removeMember(view(w), node(a.pos[0] ?? ""), num(a, "at", 0)));
    return undefined;
  },
  tombstone: (w, a) => {
    const g = view(w);
    const t = { node: node(a.pos[0] ?? ""), removedAtMs: num(a, "at", 0) };
    setView(w, rebuilt(g, { tombstones: [...g.tombstones, t] }));
    return undefined;
  },
};

function showPart(g: Gossip, part: string): string {
  switch (part) {
    case "members":
      return `members ${g.members.length === 0 ? "-" : g.members.map(formatMember).join(" ")}`;
    case "seen":
      return `seen ${g.overview.seen.length === 0 ? "-" : g.overview.seen.map(nameOf).join(" ")}`;
    case "version": {
      const short = new Map(
        g.members.map((m) => [clockKeyOf(m.uniqueAddress), nameOf(m.uniqueAddress)]),
      );
      const text = g.version.entries.map(([k, v]) => `${short.get(k) ?? k}=${v}`).join(" ");
      return `version ${text === "" ? "-" : text}`;
    }
    case "reachability": {
      const rows = g.overview.reachability.records.map(
        (r) => `${nameOf(r.observer)}->${nameOf(r.subject)}:${r.status}`,
      );
      return `reachability ${rows.length === 0 ? "-" : rows.join(" ")}`;
    }
    case "tombstones":
      return `tombstones ${names(g.tombstones.map((t) => t.node))}`;
    default:
      throw new Error(`unknown part ${part}`);
  }
}

function weaklyUpOption(a: Args): { allowWeaklyUp: boolean; weaklyUpDelayElapsed: boolean } {
  const v = a.kv.get("weakly-up") ?? "off";
  if (v === "off") return { allowWeaklyUp: false, weaklyUpDelayElapsed: false };
  if (v === "waiting") return { allowWeaklyUp: true, weaklyUpDelayElapsed: false };
  if (v === "elapsed") return { allowWeaklyUp: true, weaklyUpDelayElapsed: true };
  throw new Error(`weakly-up must be off, waiting or elapsed, got ${v}`);
}

function roleMins(a: Args): Record<string, number> {
  return Object.fromEntries(
    list(a, "role-min").map((s) => {
      const [role, n] = s.split(":");
      return [role as string, Number(n)];
    }),
  );
}

const membershipCommands: Record<string, Command<World>> = {
  show: (w, a) =>
    (a.pos.length === 0 ? ["members", "seen", "version"] : a.pos).map((p) => showPart(view(w), p)),
  convergence: (w, a) => [
    `${convergence(stateOf(view(w), req(a, "self")), list(a, "confirmed").map(node))}`,
  ],
  leader: (w, a) => {
    const l = leader(stateOf(view(w), req(a, "self")));
    return [`leader ${l === undefined ? "none" : nameOf(l)}`];
  },
  "leader-actions": (w, a) => {
    const result = leaderActions(stateOf(view(w), req(a, "self")), {
      minNrOfMembers: num(a, "min", 1),
      roleMinNrOfMembers: roleMins(a),
      ...weaklyUpOption(a),
      exitingConfirmed: list(a, "confirmed").map(node),
      nowMs: num(a, "now", 0),
    });
    if (result.type === "none") return [`none reason=${result.reason}`];
    setView(w, result.state.latestGossip);
    const out = result.events.map(formatEvent);
    if (result.exitingGossipTargets.length > 0)
      out.push(`gossip-to ${names(result.exitingGossipTargets)}`);
    if (result.removedExitingConfirmed.length > 0)
      out.push(`forget-confirmed ${names(result.removedExitingConfirmed)}`);
    return out;
  },
};

/** A Random that replays the `random=` list: next() returns it, nextInt(n) floor(x*n). */
function scriptedRandom(values: number[]) {
  const take = () => {
    const v = values.shift();
    if (v === undefined) throw new Error("scripted random exhausted");
    return v;
  };
  return { next: take, nextInt: (n: number) => Math.floor(take() * n) };
}

const gossipCommands: Record<string, Command<World>> = {
  compare: (w, a) => [compareIncomingGossip(view(w, a.pos[0]), view(w, a.pos[1]))],
  gossip: (w, a) => {
    const [from, to] = fromTo(a);
    const envelope = {
      from: node(from),
      to: node(a.kv.get("to") ?? to),
      gossip: view(w, from),
      sentAtMs: num(a, "sent", 0),
    };
    const result = receiveGossip(stateOf(view(w, to), to), envelope, num(a, "now", 0), {
      gossipTimeToLiveMs: num(a, "ttl", 2000),
      exitingTasksInProgress: a.pos.includes("exiting-tasks"),
    });
    if (result.type === "ignored") return [`ignored reason=${result.reason}`];
    setView(w, result.state.latestGossip, to);
    const reply = result.replyTo === undefined ? [] : [`reply to=${nameOf(result.replyTo)}`];
    return [`accepted ${result.comparison}`, ...reply, ...result.events.map(formatEvent)];
  },
  status: (w, a) => {
    const [from, to] = fromTo(a);
    const reply = receiveGossipStatus(
      stateOf(view(w, to), to),
      gossipStatusOf(stateOf(view(w, from), from)),
    );
    switch (reply.type) {
      case "ignored":
        return [`ignored reason=${reply.reason}`];
      case "none":
        return ["none"];
      case "send-gossip":
      case "send-status":
      case "send-seen":
        return [`${reply.type} to=${nameOf(reply.to)}`];
    }
  },
  "select-target": (w, a) => {
    const target = selectGossipTarget(
      stateOf(view(w), req(a, "self")),
      scriptedRandom(list(a, "random").map(Number)),
      {
        gossipDifferentViewProbability: num(a, "p", 0.8),
        reduceGossipDifferentViewProbabilityAboveMembers: num(a, "reduce-above", 400),
      },
    );
    return [
      target === undefined ? "no-target" : `target ${nameOf(target.node)} send=${target.send}`,
    ];
  },
  rounds: (w, a) => [`rounds ${gossipRoundsPerInterval(stateOf(view(w), req(a, "self")))}`],
};

const joinCommands: Record<string, Command<World>> = {
  join: (w, a) => {
    const self = req(a, "self");
    const joiner = node(a.pos[0] ?? "");
    const request = {
      node: {
        ...joiner,
        address: { ...joiner.address, system: a.kv.get("system") ?? joiner.address.system },
      },
      roles: list(a, "roles"),
    };
    const outcome = onJoin(stateOf(view(w), self), request);
    switch (outcome.type) {
      case "refused":
        return [`refused reason=${outcome.reason}`];
      case "welcome-again":
        return [`welcome-again to=${nameOf(joiner)}`];
      case "downed-old-incarnation":
        setView(w, outcome.state.latestGossip);
        return [
          `downed-old-incarnation ${nameOf(outcome.old)}`,
          ...outcome.events.map(formatEvent),
        ];
      case "joined": {
        setView(w, outcome.state.latestGossip);
        const how = outcome.welcome === undefined ? "self" : `welcome to=${nameOf(joiner)}`;
        const formed = outcome.formedNewCluster ? " formed-new-cluster" : "";
        return [`joined ${how}${formed}`, ...outcome.events.map(formatEvent)];
      }
    }
  },
  welcome: (w, a) => {
    const [from, to] = fromTo(a);
    const joinedWith = addressNamed(a.kv.get("join-with") ?? node(from).address.host);
    const outcome = onWelcome(
      stateOf(view(w, to), to),
      { from: node(from), gossip: view(w, from) },
      joinedWith,
    );
    if (outcome.type === "ignored") return [`ignored reason=${outcome.reason}`];
    setView(w, outcome.state.latestGossip, to);
    const reply = outcome.replyTo === undefined ? [] : [`reply to=${nameOf(outcome.replyTo)}`];
    return ["welcomed", ...reply, ...outcome.events.map(formatEvent)];
  },
  "init-join": (w, a) => {
    const reply = onInitJoin(stateOf(view(w), req(a, "self")));
    return [`${reply.type === "init-join-ack" ? "ack" : "nack"} from=${reply.from.host}`];
  },
};

function formatSeedOutput(o: SeedJoinOutput): string {
  switch (o.type) {
    case "send-init-join":
      return `send-init-join ${o.to.map((x) => x.host).join(",")}`;
    case "send-join":
      return `send-join ${o.to.host}`;
    case "join-self":
      return "join-self";
    case "start-timer":
      return `start-timer ${o.timer} ${o.delayMs}`;
    case "cancel-timer":
      return `cancel-timer ${o.timer}`;
    case "joined":
      return `joined via=${o.via.host}`;
  }
}

function seedMachine(w: World, name: string): SeedJoinMachine {
  const m = w.seeds.get(name);
  if (m === undefined) throw new Error(`no seed machine ${name}`);
  return m;
}

const seedCommands: Record<string, Command<World>> = {
  "seed-machine": (w, a) => {
    const name = a.pos[0] ?? "";
    const config = {
      self: addressNamed(name),
      seedNodes: list(a, "seeds").map(addressNamed),
      seedNodeTimeoutMs: num(a, "timeout", 5000),
      seedNodeInitJoinResendIntervalMs: num(a, "resend", 1000),
      retryUnsuccessfulJoinAfterMs: num(a, "retry", 10_000),
    };
    w.seeds.set(name, new SeedJoinMachine(config));
    return undefined;
  },
  seed: (w, a) => {
    const [name, input, arg] = a.pos;
    const m = seedMachine(w, name ?? "");
    const outputs = (() => {
      switch (input) {
        case "start":
          return m.handle({ type: "start" });
        case "ack":
          return m.handle({ type: "init-join-ack", from: addressNamed(arg ?? "") });
        case "nack":
          return m.handle({ type: "init-join-nack", from: addressNamed(arg ?? "") });
        case "welcome":
          return m.handle({ type: "welcome", from: addressNamed(arg ?? "") });
        case "timeout":
          return m.handle({ type: "timeout", timer: arg as "seed-node-timeout" });
        default:
          throw new Error(`unknown seed input ${input}`);
      }
    })();
    return outputs.map(formatSeedOutput);
  },
  "seed-phase": (w, a) => {
    const p = seedMachine(w, a.pos[0] ?? "").phase;
    switch (p.type) {
      case "idle":
        return ["idle"];
      case "first-seed-probing":
        return [`first-seed-probing remaining=${p.remaining.map((x) => x.host).join(",") || "-"}`];
      case "probing":
        return [`probing attempt=${p.attempt}`];
      case "joining":
        return [`joining to=${p.to.host}`];
      case "joined":
        return [`joined via=${p.via.host}`];
    }
  },
};

function strategyOf(a: Args): DowningStrategy {
  const role = a.kv.get("role");
  const type = req(a, "strategy");
  switch (type) {
    case "keep-majority":
      return { type, role };
    case "static-quorum":
      return { type, quorumSize: num(a, "quorum", 0), role };
    case "keep-oldest":
      return { type, downIfAlone: a.kv.get("down-if-alone") !== "false", role };
    case "down-all":
      return { type };
    case "lease-majority":
      return { type, acquireLeaseDelayForMinorityMs: num(a, "delay", 2000), role };
    default:
      throw new Error(`unknown strategy ${type}`);
  }
}

function tracker(w: World): SbrStabilityTracker {
  if (w.tracker === undefined) throw new Error("no sbr-tracker");
  return w.tracker;
}

const sbrCommands: Record<string, Command<World>> = {
  sbr: (w, a) => {
    const lease = a.kv.get("lease");
    const leaseAcquired = lease === undefined ? undefined : lease === "acquired";
    const outcome = decideDowning(strategyOf(a), sbrViewOf(stateOf(view(w), req(a, "self"))), {
      leaseAcquired,
    });
    switch (outcome.type) {
      case "no-decision":
        return [`no-decision reason=${outcome.reason}`];
      case "acquire-lease":
        return [`acquire-lease delay=${outcome.delayMs}`];
      case "down": {
        const self = outcome.selfDowned ? " self-downed" : "";
        const ic =
          outcome.indirectlyConnected.length > 0
            ? ` indirect=${names(outcome.indirectlyConnected)}`
            : "";
        return [`${outcome.decision} down=${names(outcome.down)}${self}${ic}`];
      }
    }
  },
  "sbr-tracker": (w, a) => {
    w.tracker = new SbrStabilityTracker({
      stableAfterMs: num(a, "stable-after", 20_000),
      downAllWhenUnstableMs: num(a, "down-all-when-unstable", 15_000),
    });
    return undefined;
  },
  "sbr-observe": (w, a) => {
    // from the current view (self=), or listed as name[:status] (status default up)
    const members = a.kv.has("self")
      ? unreachableMembersOf(sbrViewOf(stateOf(view(w), req(a, "self"))))
      : a.pos.map((p) => parseMember(p.includes(":") ? p : `${p}:up`));
    // relevant=d,e (or relevant=-): the subset that counts towards instability
    const rel = a.kv.get("relevant");
    const relevant =
      rel === undefined
        ? a.kv.has("self")
          ? unreachableUpTogetherOf(sbrViewOf(stateOf(view(w), req(a, "self"))))
          : undefined
        : members.filter((m) => rel.split(",").includes(m.uniqueAddress.address.host));
    const changed = tracker(w).observe(members, num(a, "now", 0), relevant);
    const listed = names(members.map((m) => m.uniqueAddress).sort(compareUniqueAddresses));
    return [`${changed ? "changed" : "unchanged"} ${listed}`];
  },
  "sbr-excuse": (w, a) => {
    tracker(w).excuse(num(a, "pause", 0), num(a, "now", 0));
    return undefined;
  },
  "sbr-stats": (w) => {
    const { changeCount, firstChangeAtMs, latestChangeAtMs } = tracker(w).stats;
    return [
      `changes=${changeCount} first=${firstChangeAtMs ?? "-"} latest=${latestChangeAtMs ?? "-"}`,
    ];
  },
  "sbr-tick": (w, a) => {
    const t = tracker(w).tick(num(a, "now", 0), a.kv.get("leader") !== "false");
    switch (t.type) {
      case "idle":
      case "decide":
        return [t.type];
      case "wait":
        return [t.reason === "unstable" ? `wait unstable until=${t.untilMs}` : "wait not-leader"];
      case "down-all-unstable":
        return [`down-all-unstable after=${t.unstableForMs}`];
    }
  },
  "sbr-applied": (w, a) => {
    tracker(w).decisionApplied(num(a, "now", 0));
    return undefined;
  },
};

/** Every command, by verb. */
export const COMMANDS: Readonly<Record<string, Command<World>>> = {
  ...setupCommands,
  ...membershipCommands,
  ...gossipCommands,
  ...joinCommands,
  ...seedCommands,
  ...sbrCommands,
};
