/**
 * A tiny in-memory cluster for the singleton manager property test: N managers, a global
 * membership history, per-node (stale) views of it, an unordered message bus that may
 * delay, reorder, duplicate and lose messages, per-node virtual timers, and the instance
 * each node actually runs.
 *
 * What the model assumes of the real cluster (and what the driver must guarantee):
 * - Views are monotone: each node sees some past snapshot of the one global history, so
 *   a member that is up sees every older member as at least up.
 * - A member is removed only when it crashed, or its manager has reached End: for an
 *   exiting member the driver confirms exiting only after the manager's `done`; for a
 *   downed member that is still alive, the downing provider's margin gives its manager
 *   the time to learn it is down and stop the instance (G4) before removal.
 * - A crash kills the instance with the process.
 * - With `leaseGuarded` (the lease-guarded take-over, docs/singleton.md): one lease, held
 *   by at most one node; a request is answered later (a step of its own); a crashed
 *   holder's lease expires at a later step; views list crashed and "blipped" (alive but
 *   cut off) members as unreachable. `grantAlways` breaks the lease on purpose.
 *
 * Everything is deterministic given the choices; `trace` records what happened.
 */
import { type Member, memberFrom } from "../../../src/core/membership/member.js";
import {
  nodeOf,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";
import {
  oldestEligible,
  type SingletonManagerInput,
  SingletonManagerMachine,
  type SingletonManagerMessage,
  singletonMembersOf,
} from "../../../src/core/singleton/index.js";

const ROLE = "r";
const key = uniqueAddressToString;

interface Envelope {
  readonly from: UniqueAddress;
  readonly to: UniqueAddress;
  readonly message: SingletonManagerMessage;
}

interface SimNode {
  readonly id: UniqueAddress;
  readonly name: string;
  readonly manager: SingletonManagerMachine<string> | undefined;
  crashed: boolean;
  /** Removed from the cluster and stopped (alive or not). */
  gone: boolean;
  instance: "none" | "running" | "stopping";
  readonly timers: Map<string, number>;
  viewVersion: number;
  readonly removedSinceView: UniqueAddress[];
}

/** Membership changes the test applies (the cluster's own progress is separate). */
export const CHANGE_KINDS = [
  "join",
  "restart",
  "oldest-leaves",
  "two-oldest-leave",
  "oldest-crashes",
  "oldest-downed",
  "three-oldest-crash",
  "leave",
  "crash",
  "down",
] as const;

/** The changes of the lease-guarded runs: the same, plus an alive oldest cut off a while. */
export const LEASE_CHANGE_KINDS = [...CHANGE_KINDS, "blip-oldest", "blip-any"] as const;

/** A membership change the test applies. */
export type ChangeKind = (typeof LEASE_CHANGE_KINDS)[number];

/** Options of one run. */
export interface ClusterOptions {
  readonly initialSize: number;
  readonly removalMarginMs: number;
  /** Send the removed list with views (else removal is only seen as absence). */
  readonly announceRemovals: boolean;
  /** Test hook: rewrite what a manager is fed (to check that the checks can fail). */
  readonly mutateInput?: (input: SingletonManagerInput) => SingletonManagerInput;
  /** Managers use a lease and takeOverFromUnreachable (see the module comment). */
  readonly leaseGuarded?: boolean;
  /** Test hook: the lease grants every request (to check that the checks can fail). */
  readonly grantAlways?: boolean;
}

/** The simulated cluster. */
export class SingletonCluster {
  readonly trace: string[] = [];
  readonly violations: string[] = [];
  private readonly nodes: SimNode[] = [];
  private readonly members = new Map<string, Member>();
  private version = 0;
  private now = 0;
  private nextUpNumber = 1;
  private inFlight: Envelope[] = [];
  private readonly restarted = new Set<string>();
  maxAliveSeen = 0;
  stuckErrors = 0;
  /** Lease-guarded runs: the node holding the lease, pending requests, cut-off nodes. */
  private leaseHolder: string | undefined;
  private leaseRequests: SimNode[] = [];
  private readonly blipped = new Set<string>();
  /** Instances started while an older crashed member was still listed. */
  takeOversBeforeRemoval = 0;

  constructor(private readonly options: ClusterOptions) {
    for (let i = 0; i < options.initialSize; i++) this.join(`n${i}`, 1, true);
  }

  // ---- the random phase ----------------------------------------------------------------

  /** Performs one random step chosen by `choice`. */
  step(choice: number): void {
    const kinds = this.options.leaseGuarded === true ? 15 : 12;
    const kind = choice % kinds;
    const pick = Math.floor(choice / kinds);
    if (kind === 12) this.answerLease(pick);
    else if (kind === 13) this.expireCrashedLease();
    else if (kind === 14) this.healBlip(pick);
    else if (kind <= 2) this.deliverMessage(pick, false);
    else if (kind === 3) this.deliverMessage(pick, true);
    else if (kind === 4) this.loseMessage(pick);
    else if (kind <= 6) this.deliverView(pick);
    else if (kind <= 8) this.fireTimer(pick, false);
    else if (kind === 9) this.terminateInstance(pick);
    else this.progressMembership(pick);
  }

  /** Runs everything to rest: all messages, views, stops, removals and timers. */
  settle(maxSteps = 20_000): boolean {
    for (let i = 0; i < maxSteps; i++) {
      if (this.inFlight.length > 0) this.deliverMessage(0, false);
      else if (this.leaseRequests.length > 0) this.answerLease(0);
      else if (this.crashedHolder()) this.expireCrashedLease();
      else if (this.blipped.size > 0) this.healBlip(0);
      else if (this.staleNodes().length > 0) this.deliverView(0);
      else if (this.stoppingNodes().length > 0) this.terminateInstance(0);
      else if (this.progressCandidates().length > 0) this.progressMembership(0);
      else if (this.pendingTimers().length > 0) this.fireTimer(0, true);
      else return true;
    }
    return false;
  }

  /** Where the instance must run at rest: the oldest eligible member with the role. */
  expectedOldest(): UniqueAddress | undefined {
    const scope = { role: ROLE, dataCenter: "default" };
    return oldestEligible(singletonMembersOf([...this.members.values()], scope))?.uniqueAddress;
  }

  /** Nodes whose instance is alive, by name. */
  aliveInstances(): string[] {
    return this.nodes.filter((n) => !n.crashed && n.instance !== "none").map((n) => n.name);
  }

  /** State of the manager on `node`. */
  stateOf(node: UniqueAddress): string | undefined {
    return this.nodes.find((n) => key(n.id) === key(node))?.manager?.state;
  }

  /** Short name of a node. */
  nameOf(node: UniqueAddress): string {
    return this.nodes.find((n) => key(n.id) === key(node))?.name ?? key(node);
  }

  // ---- membership ----------------------------------------------------------------------

  private join(host: string, uid: number, hasRole: boolean): void {
    const id = nodeOf("shardkit", "sys", host, 2552, uid);
    const member = memberFrom({
      uniqueAddress: id,
      status: "up",
      roles: hasRole ? [ROLE] : [],
      upNumber: this.nextUpNumber++,
    });
    const manager = hasRole
      ? new SingletonManagerMachine<string>({
          self: id,
          role: ROLE,
          useLease: this.options.leaseGuarded === true,
          stopMessage: "stop",
          settings: {
            removalMarginMs: this.options.removalMarginMs,
            minNumberOfHandOverRetries: 3,
            takeOverFromUnreachable: this.options.leaseGuarded === true,
            leaseRetryIntervalMs: 500,
          },
        })
      : undefined;
    const name = `${host}${uid === 1 ? "" : `#${uid}`}${hasRole ? "" : "(no role)"}`;
    this.nodes.push({
      id,
      name,
      manager,
      crashed: false,
      gone: false,
      instance: "none",
      timers: new Map(),
      viewVersion: -1,
      removedSinceView: [],
    });
    this.setMember(member, `join ${name} up=${member.upNumber}`);
  }

  private setMember(m: Member, what: string): void {
    this.members.set(key(m.uniqueAddress), m);
    this.version++;
    this.trace.push(what);
  }

  private removeMember(node: SimNode): void {
    this.members.delete(key(node.id));
    this.version++;
    for (const n of this.nodes) n.removedSinceView.push(node.id);
    this.trace.push(`remove ${node.name}`);
    if (!node.crashed) this.feed(node, { type: "self-removed" });
    node.gone = true;
    node.timers.clear();
  }

  private member(node: SimNode): Member | undefined {
    return this.members.get(key(node.id));
  }

  /** Alive members with the role that are up: one of them must always stay. */
  private keepers(): SimNode[] {
    return this.nodes.filter(
      (n) => n.manager !== undefined && !n.crashed && this.member(n)?.status === "up",
    );
  }

  /** Applies one membership change of `kind`; `pick` chooses among candidates. */
  change(kind: ChangeKind, pick: number): void {
    const oldest = this.nodeOf(this.expectedOldest());
    const live = this.nodes.filter((n) => !n.gone && this.member(n) !== undefined);
    const any = live[pick % Math.max(1, live.length)];
    switch (kind) {
      case "join":
        if (this.nodes.length < 10) this.join(`n${this.nodes.length}`, 1, pick % 5 !== 0);
        return;
      case "restart":
        this.restartOne();
        return;
      case "oldest-leaves":
        this.leave(oldest);
        return;
      case "two-oldest-leave": {
        // The next oldest sees the first leave (and starts its hand-over) before it
        // leaves too: the rolling-restart race.
        this.leave(oldest);
        const next = this.nodeOf(this.expectedOldest());
        if (next !== undefined && this.staleNodes().includes(next)) this.viewTo(next);
        this.leave(next);
        return;
      }
      case "oldest-crashes":
        this.crash(oldest);
        return;
      case "oldest-downed":
        this.down(oldest);
        return;
      case "three-oldest-crash":
        for (let i = 0; i < 3; i++) this.crash(this.nodeOf(this.expectedOldest()));
        return;
      case "leave":
        this.leave(any);
        return;
      case "crash":
        this.crash(any);
        return;
      case "down":
        this.down(any);
        return;
      case "blip-oldest":
        this.blip(oldest);
        return;
      case "blip-any":
        this.blip(any);
        return;
    }
  }

  // ---- the lease (leaseGuarded runs) ---------------------------------------------------

  /** An alive member seen unreachable by the others (it still renews its lease). */
  private blip(node: SimNode | undefined): void {
    if (this.options.leaseGuarded !== true || node === undefined || node.crashed || node.gone)
      return;
    this.blipped.add(key(node.id));
    this.version++;
    this.trace.push(`blip ${node.name}`);
  }

  private healBlip(pick: number): void {
    const all = [...this.blipped];
    const k = all[pick % Math.max(1, all.length)];
    if (k === undefined) return;
    this.blipped.delete(k);
    this.version++;
    this.trace.push(`heal ${this.nameOf(this.idOf(k))}`);
  }

  private idOf(k: string): UniqueAddress {
    return (this.nodes.find((n) => key(n.id) === k) as SimNode).id;
  }

  private crashedHolder(): boolean {
    const h = this.leaseHolder;
    return h !== undefined && this.nodes.some((n) => key(n.id) === h && n.crashed);
  }

  /** The crashed holder's lease runs out (its ttl passed). */
  private expireCrashedLease(): void {
    if (!this.crashedHolder()) return;
    this.trace.push(`lease of ${this.nameOf(this.idOf(this.leaseHolder as string))} expired`);
    this.leaseHolder = undefined;
  }

  private answerLease(pick: number): void {
    if (this.leaseRequests.length === 0) return;
    const [node] = this.leaseRequests.splice(pick % this.leaseRequests.length, 1);
    if (node === undefined || node.crashed || node.gone) return;
    const k = key(node.id);
    const ok =
      this.options.grantAlways === true || this.leaseHolder === undefined || this.leaseHolder === k;
    if (ok) this.leaseHolder = k;
    this.trace.push(`lease ${ok ? "granted to" : "refused to"} ${node.name}`);
    this.feed(node, { type: "lease-acquired", ok });
  }

  private nodeOf(id: UniqueAddress | undefined): SimNode | undefined {
    return id === undefined ? undefined : this.nodes.find((n) => key(n.id) === key(id));
  }

  /** May `node` stop being an alive up member? One such member with the role must stay. */
  private spare(node: SimNode): boolean {
    const keepers = this.keepers();
    return keepers.length > 1 || !keepers.includes(node);
  }

  private restartOne(): void {
    const old = this.nodes.find(
      (n) => n.crashed && n.gone && n.id.uid === 1 && !this.restarted.has(n.name),
    );
    if (old === undefined || this.nodes.length >= 10) return;
    this.restarted.add(old.name);
    this.join(old.id.address.host, 2, old.manager !== undefined);
  }

  private leave(node: SimNode | undefined): void {
    const m = node && this.member(node);
    if (node && m && m.status === "up" && this.spare(node))
      this.setMember({ ...m, status: "leaving" }, `leave ${node.name}`);
  }

  private down(node: SimNode | undefined): void {
    const m = node && this.member(node);
    if (node && m && m.status !== "down" && this.spare(node))
      this.setMember(
        { ...m, status: "down" },
        `down ${node.name}${node.crashed ? "" : " (alive)"}`,
      );
  }

  private crash(node: SimNode | undefined): void {
    if (node === undefined || node.crashed || node.gone || !this.spare(node)) return;
    node.crashed = true;
    node.instance = "none";
    node.timers.clear();
    this.trace.push(`crash ${node.name}`);
  }

  /** Steps the cluster would take by itself: down crashed, exit leaving, remove. */
  private progressCandidates(): { node: SimNode; apply: () => void }[] {
    const out: { node: SimNode; apply: () => void }[] = [];
    for (const node of this.nodes) {
      const m = this.member(node);
      if (m === undefined || node.gone) continue;
      if (node.crashed && m.status !== "down")
        out.push({
          node,
          apply: () => this.setMember({ ...m, status: "down" }, `down ${node.name}`),
        });
      else if (m.status === "leaving")
        out.push({
          node,
          apply: () => this.setMember({ ...m, status: "exiting" }, `exit ${node.name}`),
        });
      else if ((m.status === "exiting" || m.status === "down") && this.removable(node))
        out.push({ node, apply: () => this.removeMember(node) });
    }
    return out;
  }

  private removable(node: SimNode): boolean {
    return node.crashed || node.manager === undefined || node.manager.state === "End";
  }

  private progressMembership(pick: number): void {
    const c = this.progressCandidates();
    if (c.length > 0) (c[pick % c.length] as { apply: () => void }).apply();
  }

  // ---- views, messages, timers, instances ----------------------------------------------

  private staleNodes(): SimNode[] {
    return this.nodes.filter(
      (n) => n.manager && !n.crashed && !n.gone && n.viewVersion < this.version,
    );
  }

  private deliverView(pick: number): void {
    const stale = this.staleNodes();
    const node = stale[pick % Math.max(1, stale.length)];
    if (node !== undefined) this.viewTo(node);
  }

  private viewTo(node: SimNode): void {
    node.viewVersion = this.version;
    const removed = node.removedSinceView.splice(0);
    // Any order: the machine sorts by age itself.
    const all = [...this.members.values()].reverse();
    const unreachable =
      this.options.leaseGuarded === true
        ? this.nodes
            .filter((n) => n !== node && (n.crashed || this.blipped.has(key(n.id))))
            .map((n) => n.id)
        : [];
    this.feed(node, {
      type: "members",
      oldestFirst: all,
      ...(this.options.announceRemovals ? { removed } : {}),
      ...(unreachable.length > 0 ? { unreachable } : {}),
    });
  }

  private deliverMessage(pick: number, duplicate: boolean): void {
    if (this.inFlight.length === 0) return;
    const i = pick % this.inFlight.length;
    const env = this.inFlight[i] as Envelope;
    if (!duplicate) this.inFlight.splice(i, 1);
    const node = this.nodes.find((n) => key(n.id) === key(env.to));
    if (node === undefined || node.crashed || node.gone) return;
    this.feed(node, { ...env.message, from: env.from });
  }

  private loseMessage(pick: number): void {
    if (this.inFlight.length === 0) return;
    const [env] = this.inFlight.splice(pick % this.inFlight.length, 1);
    if (env)
      this.trace.push(`lose ${env.message.type} ${this.nameOf(env.from)}->${this.nameOf(env.to)}`);
  }

  private pendingTimers(): { node: SimNode; key: string; due: number }[] {
    const out: { node: SimNode; key: string; due: number }[] = [];
    for (const node of this.nodes)
      if (!node.crashed && !node.gone)
        for (const [k, due] of node.timers) out.push({ node, key: k, due });
    return out;
  }

  private fireTimer(pick: number, earliest: boolean): void {
    const timers = this.pendingTimers();
    if (timers.length === 0) return;
    const t = earliest
      ? timers.reduce((a, b) => (b.due < a.due ? b : a))
      : (timers[pick % timers.length] as (typeof timers)[number]);
    this.now = Math.max(this.now, t.due);
    t.node.timers.delete(t.key);
    this.feed(t.node, { type: "timer", key: t.key });
  }

  private stoppingNodes(): SimNode[] {
    return this.nodes.filter((n) => !n.crashed && n.instance === "stopping");
  }

  private terminateInstance(pick: number): void {
    const stopping = this.stoppingNodes();
    const node = stopping[pick % Math.max(1, stopping.length)];
    if (node === undefined) return;
    node.instance = "none";
    this.trace.push(`instance stopped on ${node.name}`);
    this.feed(node, { type: "instance-terminated" });
  }

  private feed(node: SimNode, input: SingletonManagerInput): void {
    const manager = node.manager;
    if (manager === undefined) return;
    const fed = this.options.mutateInput ? this.options.mutateInput(input) : input;
    for (const o of manager.handle(fed)) {
      switch (o.type) {
        case "start-instance":
          if (node.instance !== "none") this.violate(`${node.name} started a second instance`);
          node.instance = "running";
          this.trace.push(`START on ${node.name}`);
          // started while an OLDER member that crashed is still listed (not yet removed)
          if (
            this.nodes.some(
              (n) =>
                n.crashed &&
                (this.member(n)?.upNumber ?? Number.POSITIVE_INFINITY) <
                  (this.member(node)?.upNumber ?? 0),
            )
          )
            this.takeOversBeforeRemoval++;
          this.checkAtMostOne();
          break;
        case "stop-instance":
          if (node.instance !== "running")
            this.violate(`${node.name} stopped a ${node.instance} instance`);
          node.instance = "stopping";
          this.trace.push(`stop on ${node.name}`);
          break;
        case "send":
          this.inFlight.push({ from: node.id, to: o.to, message: o.message });
          break;
        case "start-timer":
          node.timers.set(o.key, this.now + o.delayMs);
          break;
        case "cancel-timer":
          node.timers.delete(o.key);
          break;
        case "stuck-error":
          this.stuckErrors++;
          break;
        case "acquire-lease":
          if (this.options.leaseGuarded !== true)
            this.violate(`${node.name} used a lease it was not configured with`);
          else this.leaseRequests.push(node);
          break;
        case "release-lease":
          if (this.options.leaseGuarded !== true)
            this.violate(`${node.name} used a lease it was not configured with`);
          else if (this.leaseHolder === key(node.id)) {
            this.leaseHolder = undefined;
            this.trace.push(`lease released by ${node.name}`);
          }
          break;
        case "log":
        case "done":
          break;
      }
    }
  }

  private checkAtMostOne(): void {
    const alive = this.aliveInstances();
    this.maxAliveSeen = Math.max(this.maxAliveSeen, alive.length);
    if (alive.length > 1) this.violate(`two instances alive: ${alive.join(", ")}`);
  }

  private violate(what: string): void {
    this.violations.push(what);
    this.trace.push(`VIOLATION ${what}`);
  }
}
