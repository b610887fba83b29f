/**
 * The cluster singleton manager of one node, as a sans-IO state machine: inputs in,
 * outputs out, no clock (time passes only through `timer` inputs the driver feeds for
 * timers the machine started). One machine per node and singleton name.
 *
 * The instance belongs on the oldest ELIGIBLE member in scope (singleton-members.ts).
 *
 * SAFETY, the rule everything here serves: the machine outputs `start-instance` only
 * when self is the oldest eligible member and every OLDER member in scope is cleared:
 * removed (and its removal margin has passed), or it answered HandOverDone. Older
 * members are the only ones that can hold the instance: a younger member could only
 * have been the oldest eligible while self was not eligible, and eligibility is never
 * regained. A member answers HandOverDone only when it holds no instance and has
 * entered End, from which it never starts one. It may do so in any state, because
 * HandOverToMe is only ever sent to members the sender sees as leaving, exiting or
 * down, which is permanent, so the receiver is bound to learn it is out anyway.
 *
 * - Hand-over (older member leaving): the new oldest sends HandOverToMe (BecomingOldest,
 *   retried every handOverRetryIntervalMs; stuck error after maxHandOverRetries); the
 *   old one answers HandOverInProgress, stops its instance with the stop message, and
 *   after `instance-terminated` answers HandOverDone and ends. Only then does the new
 *   one start (after acquiring the lease, when one is used).
 * - Take-over (older member downed): no conversation; the new oldest waits (TakeOver)
 *   until the downed member is removed and the removal margin has passed.
 * - Self downed, removed or shut down: the instance is stopped and the machine ends.
 * - Lease-guarded take-over (`takeOverFromUnreachable`, only with a lease): an older
 *   member that is unreachable or down is passed over, both as the oldest and as a
 *   blocker, so the oldest reachable member goes straight to acquiring the lease. The
 *   LEASE is then what keeps two instances apart: the old holder, if it still runs, keeps
 *   renewing and the lease is refused; if it crashed or lost the store, its lease
 *   expires (its own lease stops its instance before that) and the acquisition
 *   succeeds. When an older member is reachable again, the holder stops its instance and
 *   releases the lease (no conversation: the lease orders it), and the older member
 *   acquires it.
 *
 * Why outputs instead of callbacks: the driver performs them in order on a real node or
 * in the simulator, and tests read them as a trace.
 */
import { fail } from "../../base/assert.js";
import { ConfigError } from "../../base/errors.js";
import type { SingletonManagerMessage } from "../../protocol/singleton.js";
import type { Member } from "../membership/member.js";
import { DEFAULT_DATA_CENTER } from "../membership/member.js";
import { compareByAge } from "../membership/member-ordering.js";
import {
  type UniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
} from "../membership/unique-address.js";
import { SingletonManagerStuckError } from "./singleton-errors.js";
import {
  REMOVAL_MARGIN_TIMER_PREFIX,
  type SingletonInstanceStatus,
  type SingletonLeaseStatus,
  type SingletonLogLevel,
  type SingletonManagerConfig,
  type SingletonManagerInput,
  type SingletonManagerOutput,
  type SingletonManagerSnapshot,
  SingletonManagerState,
  SingletonTimer,
} from "./singleton-manager-types.js";
import {
  findNode,
  isEligible,
  oldestEligible,
  type SingletonScope,
  singletonMembersOf,
} from "./singleton-members.js";
import {
  maxHandOverRetries,
  maxTakeOverRetries,
  resolveSingletonManagerSettings,
  type SingletonManagerSettings,
} from "./singleton-settings.js";

const S = SingletonManagerState;
const key = uniqueAddressToString;

/** States without an instance in which the machine decides where it stands. */
const DECIDING: ReadonlySet<SingletonManagerState> = new Set([
  S.Start,
  S.Younger,
  S.BecomingOldest,
  S.TakeOver,
]);

/** The singleton manager of one node (see the module comment). */
export class SingletonManagerMachine<StopMessage = unknown> {
  /** Validated settings. */
  readonly settings: Readonly<SingletonManagerSettings>;
  private readonly self: UniqueAddress;
  private readonly scope: SingletonScope;
  private current: SingletonManagerState = S.Start;
  /** Members in scope, oldest first (self included when listed). */
  private members: Member[] = [];
  /** Unreachable members by node key (kept only with takeOverFromUnreachable). */
  private unreachable = new Set<string>();
  /** Lease refusals in this AcquiringLease episode (the first one is logged as a warning). */
  private leaseRefusals = 0;
  /** Removed members whose removal margin has not passed yet, by node key. */
  private readonly pendingRemoval = new Map<string, Member>();
  /** Older members that answered HandOverDone, by node key. */
  private readonly handedOver = new Set<string>();
  /** True once this manager started the instance (see HandOverDone's wasOldest). */
  private hasRunInstance = false;
  /** HandOverToMe already sent in this BecomingOldest/TakeOver episode, by node key. */
  private readonly asked = new Set<string>();
  /** Members waiting for our HandOverDone (HandingOver / Stopping). */
  private requesters: UniqueAddress[] = [];
  /** Members sent HandOverDone (tellYoungerEnded does not repeat it). */
  private readonly toldDone = new Set<string>();
  /** WasOldest: where the instance should go. */
  private newOldest: UniqueAddress | undefined;
  private retries = 0;
  private readonly timers = new Set<string>();
  private instance: SingletonInstanceStatus = "none";
  private lease: SingletonLeaseStatus = "none";
  /** Stopping: what follows `instance-terminated`. */
  private afterStop: "end" | "decide" = "end";
  /** Self was downed or removed, or the node is shutting down. */
  private leavingForGood = false;
  private out: SingletonManagerOutput<StopMessage>[] = [];

  constructor(private readonly config: SingletonManagerConfig<StopMessage>) {
    this.settings = resolveSingletonManagerSettings(config.settings);
    if (this.settings.takeOverFromUnreachable && !config.useLease)
      throw new ConfigError(
        "singleton.takeOverFromUnreachable",
        true,
        "only with a lease (the lease keeps two instances apart)",
      );
    this.self = config.self;
    this.scope = { role: config.role, dataCenter: config.dataCenter ?? DEFAULT_DATA_CENTER };
  }

  /** The current state. */
  get state(): SingletonManagerState {
    return this.current;
  }

  /** A read-only view for drivers, metrics and tests. */
  get snapshot(): SingletonManagerSnapshot {
    return {
      state: this.current,
      instance: this.instance,
      lease: this.lease,
      oldest: this.oldest()?.uniqueAddress,
      timers: [...this.timers].sort(),
    };
  }

  /** Feeds one input; returns the outputs to perform, in order. */
  handle(input: SingletonManagerInput): SingletonManagerOutput<StopMessage>[] {
    this.out = [];
    this.dispatch(input);
    const out = this.out;
    this.out = [];
    return out;
  }

  private dispatch(input: SingletonManagerInput): void {
    switch (input.type) {
      case "members":
        if (this.settings.takeOverFromUnreachable)
          this.unreachable = new Set((input.unreachable ?? []).map(key));
        this.onMembers(input.oldestFirst, input.removed ?? []);
        break;
      case "hand-over-to-me":
        this.onHandOverToMe(input.from);
        break;
      case "hand-over-in-progress":
        this.onHandOverInProgress(input.from);
        break;
      case "hand-over-done":
        this.onHandOverDone(input.from, input.wasOldest === true);
        break;
      case "takeover-from-me":
        this.onTakeOverFromMe(input.from);
        break;
      case "instance-terminated":
        this.onInstanceTerminated();
        break;
      case "lease-acquired":
        this.onLeaseAcquired(input.ok);
        break;
      case "lease-lost":
        this.onLeaseLost(input.reason);
        break;
      case "timer":
        this.onTimer(input.key);
        break;
      case "self-downed":
        this.onSelfGone("self downed");
        break;
      case "self-removed":
        this.onSelfGone("self removed");
        break;
      case "shutdown":
        this.onSelfGone("shutdown");
        break;
    }
  }

  // ---- membership ----------------------------------------------------------------------

  private onMembers(all: readonly Member[], removed: readonly UniqueAddress[]): void {
    if (this.current === S.End) return;
    const removedKeys = new Set(removed.map(key));
    const next = singletonMembersOf(all, this.scope).filter(
      (m) => !removedKeys.has(key(m.uniqueAddress)),
    );
    const nextKeys = new Set(next.map((m) => key(m.uniqueAddress)));
    const gone = this.members.filter((m) => !nextKeys.has(key(m.uniqueAddress)));
    this.members = next;
    let selfRemoved = removedKeys.has(key(this.self));
    for (const m of gone) {
      if (uniqueAddressEquals(m.uniqueAddress, this.self)) selfRemoved = true;
      else this.noteRemoved(m);
    }
    this.pruneHandedOver();
    if (selfRemoved) {
      this.onSelfGone("self removed");
      return;
    }
    if (findNode(next, this.self)?.status === "down") {
      this.onSelfGone("self downed");
      return;
    }
    this.onMembershipChanged();
  }

  private noteRemoved(m: Member): void {
    const margin = this.settings.removalMarginMs;
    if (margin === 0) return;
    const k = key(m.uniqueAddress);
    if (this.pendingRemoval.has(k)) return;
    this.pendingRemoval.set(k, m);
    this.startTimer(`${REMOVAL_MARGIN_TIMER_PREFIX}${k}`, margin);
  }

  private pruneHandedOver(): void {
    const known = new Set([...this.members.map((m) => key(m.uniqueAddress))]);
    for (const k of this.pendingRemoval.keys()) known.add(k);
    for (const k of this.handedOver) if (!known.has(k)) this.handedOver.delete(k);
  }

  private onMembershipChanged(): void {
    switch (this.current) {
      case S.Start:
      case S.Younger:
      case S.BecomingOldest:
      case S.TakeOver:
        this.decide();
        return;
      case S.AcquiringLease:
        if (!this.selfIsOldest()) {
          this.cancelTimer(SingletonTimer.LeaseRetry);
          this.decide();
        }
        return;
      case S.Oldest:
        if (this.selfIsOldest()) return;
        if (this.settings.takeOverFromUnreachable && this.selfEligible()) this.handBack();
        else this.becomeWasOldest();
        return;
      case S.WasOldest:
        this.onWasOldestMembers();
        return;
      case S.HandingOver:
      case S.Stopping:
      case S.End:
        return;
    }
  }

  /** Where the instance belongs, as this node sees it (see the module comment). */
  private oldest(): Member | undefined {
    return oldestEligible(this.members, (m) => this.passedOver(m));
  }

  /**
   * With the lease-guarded take-over: another member that is unreachable, down or
   * removed. It neither counts as the oldest nor holds up the take-over.
   */
  private passedOver(m: Member): boolean {
    if (!this.settings.takeOverFromUnreachable) return false;
    const k = key(m.uniqueAddress);
    if (k === key(this.self)) return false;
    return this.unreachable.has(k) || m.status === "down" || this.pendingRemoval.has(k);
  }

  private selfIsOldest(): boolean {
    const oldest = this.oldest();
    return oldest !== undefined && uniqueAddressEquals(oldest.uniqueAddress, this.self);
  }

  /** Older members that may still hold the instance (see the module comment). */
  private blockers(me: Member): Member[] {
    const older = new Map<string, Member>();
    for (const m of [...this.members, ...this.pendingRemoval.values()]) {
      const k = key(m.uniqueAddress);
      if (compareByAge(m, me) < 0 && !this.handedOver.has(k) && !this.passedOver(m))
        older.set(k, m);
    }
    return [...older.values()].sort(compareByAge);
  }

  /**
   * Blockers that can answer HandOverToMe: those not down, including a member removed
   * after leaving gracefully (last seen leaving or exiting, now within its removal
   * margin): its process usually still runs for a while (remoting quarantines a member
   * that left only some seconds after its removal), and its HandOverDone clears it at
   * once instead of after the margin. In a rolling restart the margin of a younger
   * member that left just before the oldest would otherwise hold up the take-over.
   */
  private answerable(blockers: readonly Member[]): Member[] {
    return blockers.filter((m) =>
      this.pendingRemoval.has(key(m.uniqueAddress))
        ? m.status === "leaving" || m.status === "exiting"
        : m.status !== "down",
    );
  }

  /** Where does a node without an instance stand? Start, Younger, Becoming, TakeOver. */
  private decide(): void {
    const me = findNode(this.members, this.self);
    if (me === undefined) return; // Start: self not listed yet
    const oldest = this.oldest();
    if (!isEligible(me)) this.becomeEnd(`self is ${me.status}`);
    else if (oldest !== me) this.becomeYounger(oldest);
    else {
      const blockers = this.blockers(me);
      const answerable = this.answerable(blockers);
      if (blockers.length === 0) this.becomeOldest();
      else if (answerable.length > 0) this.becomeBecomingOldest(answerable);
      else this.becomeTakeOver(blockers);
    }
  }

  // ---- becoming the oldest -------------------------------------------------------------

  private becomeYounger(oldest: Member | undefined): void {
    this.cancelTimer(SingletonTimer.HandOverRetry);
    this.asked.clear();
    if (this.current !== S.Younger)
      this.log("info", `younger; oldest is ${oldest ? key(oldest.uniqueAddress) : "(none)"}`);
    this.setState(S.Younger);
  }

  private becomeBecomingOldest(answerable: readonly Member[]): void {
    if (this.current !== S.BecomingOldest) {
      this.setState(S.BecomingOldest);
      this.retries = 0;
      this.startTimer(SingletonTimer.HandOverRetry, this.settings.handOverRetryIntervalMs);
    }
    for (const m of answerable) {
      const k = key(m.uniqueAddress);
      if (this.asked.has(k)) continue;
      this.asked.add(k);
      this.send(m.uniqueAddress, { type: "hand-over-to-me" });
    }
  }

  private becomeTakeOver(blockers: readonly Member[]): void {
    this.cancelTimer(SingletonTimer.HandOverRetry);
    if (this.current !== S.TakeOver)
      this.log("info", `waiting for removal of ${names(blockers)} before taking over`);
    this.setState(S.TakeOver);
  }

  private becomeOldest(): void {
    this.cancelTimer(SingletonTimer.HandOverRetry);
    this.asked.clear();
    if (!this.config.useLease || this.lease === "held") {
      this.startInstance();
      return;
    }
    if (this.current !== S.AcquiringLease) this.leaseRefusals = 0;
    this.setState(S.AcquiringLease);
    if (this.lease === "none") this.acquireLease(); // else an earlier request is still out
  }

  private acquireLease(): void {
    this.lease = "acquiring";
    this.emit({ type: "acquire-lease" });
  }

  private startInstance(): void {
    if (this.instance !== "none") fail(`singleton start while instance is ${this.instance}`);
    this.instance = "running";
    this.setState(S.Oldest);
    this.hasRunInstance = true;
    this.emit({ type: "start-instance" });
  }

  private onHandOverRetry(): void {
    const me = findNode(this.members, this.self);
    const answerable = me === undefined ? [] : this.answerable(this.blockers(me));
    if (answerable.length === 0) {
      this.decide();
      return;
    }
    this.retries++;
    const max = maxHandOverRetries(this.settings);
    if (this.retries > max) {
      this.stuck("hand-over", answerable, max);
      this.retries = 0;
    }
    for (const m of answerable) this.send(m.uniqueAddress, { type: "hand-over-to-me" });
    this.startTimer(SingletonTimer.HandOverRetry, this.settings.handOverRetryIntervalMs);
  }

  private onHandOverInProgress(from: UniqueAddress): void {
    if (this.current === S.BecomingOldest)
      this.log("info", `hand-over in progress at ${key(from)}`);
  }

  private onHandOverDone(from: UniqueAddress, wasOldest: boolean): void {
    const k = key(from);
    const sender = findNode(this.members, from) ?? this.pendingRemoval.get(k);
    if (sender === undefined) return;
    this.handedOver.add(k);
    // The sender once ran the instance, so everyone older than it had already given it
    // up: they need not be waited for (e.g. in a rolling restart).
    if (wasOldest)
      for (const m of [...this.members, ...this.pendingRemoval.values()])
        if (compareByAge(m, sender) < 0) this.handedOver.add(key(m.uniqueAddress));
    if (DECIDING.has(this.current)) {
      this.log("info", `hand-over done by ${k}`);
      this.decide();
    }
  }

  private onTakeOverFromMe(from: UniqueAddress): void {
    if (this.current !== S.BecomingOldest && this.current !== S.TakeOver) return;
    const me = findNode(this.members, this.self);
    if (me === undefined) return;
    const blocker = this.blockers(me).find((m) => uniqueAddressEquals(m.uniqueAddress, from));
    if (blocker === undefined) return;
    this.asked.add(key(from));
    this.send(from, { type: "hand-over-to-me" });
  }

  // ---- lease ---------------------------------------------------------------------------

  private onLeaseAcquired(ok: boolean): void {
    if (this.lease !== "acquiring") return;
    if (this.current === S.AcquiringLease) {
      if (ok) {
        this.lease = "held";
        this.startInstance();
        return;
      }
      this.lease = "none";
      this.log(this.leaseRefusals++ === 0 ? "warn" : "debug", "lease not acquired; retrying");
      this.startTimer(SingletonTimer.LeaseRetry, this.settings.leaseRetryIntervalMs);
      return;
    }
    this.lease = "none"; // no longer wanted
    if (ok) this.emit({ type: "release-lease" });
  }

  private onLeaseLost(reason: string | undefined): void {
    if (this.lease !== "held") return;
    this.lease = "none";
    this.log("warn", `lease lost${reason === undefined ? "" : `: ${reason}`}`);
    if (this.current === S.Oldest && this.instance === "running") this.becomeStopping("decide");
    else if (this.current === S.Oldest) this.becomeOldest();
    else if (this.current === S.WasOldest) this.becomeStopping("end");
  }

  private releaseLeaseIfHeld(): void {
    if (this.lease !== "held") return;
    this.lease = "none";
    this.emit({ type: "release-lease" });
  }

  // ---- giving the instance up ----------------------------------------------------------

  private becomeWasOldest(): void {
    this.setState(S.WasOldest);
    this.newOldest = undefined;
    this.onWasOldestMembers();
  }

  private onWasOldestMembers(): void {
    if (this.selfIsOldest()) {
      this.cancelTimer(SingletonTimer.TakeOverRetry);
      this.setState(S.Oldest);
      return;
    }
    const oldest = this.oldest()?.uniqueAddress;
    const changed =
      oldest === undefined || this.newOldest === undefined
        ? oldest !== this.newOldest
        : !uniqueAddressEquals(oldest, this.newOldest);
    if (changed) {
      this.newOldest = oldest;
      this.retries = 0;
      if (oldest === undefined) this.cancelTimer(SingletonTimer.TakeOverRetry);
      else {
        this.send(oldest, { type: "takeover-from-me" });
        this.startTimer(SingletonTimer.TakeOverRetry, this.settings.handOverRetryIntervalMs);
      }
    }
    if (this.newOldest === undefined && this.selfExiting())
      this.becomeStopping("end", "exiting with no successor");
  }

  /**
   * Lease-guarded take-over: an older member is reachable again. Stop the instance, then
   * release the lease, which the older member acquires (see the module comment).
   */
  private handBack(): void {
    if (this.instance !== "none") {
      this.becomeStopping("decide", "an older member is reachable again");
      return;
    }
    this.releaseLeaseIfHeld();
    this.setState(S.Younger);
    this.decide();
  }

  private selfEligible(): boolean {
    const me = findNode(this.members, this.self);
    return me !== undefined && isEligible(me);
  }

  private selfExiting(): boolean {
    return findNode(this.members, this.self)?.status === "exiting";
  }

  private onTakeOverRetry(): void {
    const to = this.newOldest;
    if (to === undefined) return;
    this.retries++;
    const max = maxTakeOverRetries(this.settings);
    if (this.retries > max) {
      if (this.selfExiting()) {
        this.becomeStopping("end", `no hand-over request from ${key(to)}`);
        return;
      }
      const waitingFor = findNode(this.members, to);
      this.stuck("take-over", waitingFor ? [waitingFor] : [], max);
      this.retries = 0;
    }
    this.send(to, { type: "takeover-from-me" });
    this.startTimer(SingletonTimer.TakeOverRetry, this.settings.handOverRetryIntervalMs);
  }

  private onHandOverToMe(from: UniqueAddress): void {
    switch (this.current) {
      case S.Oldest:
      case S.WasOldest:
        if (this.instance === "running") {
          this.becomeHandingOver(from);
          return;
        }
        this.requesters = [from];
        this.finishStopped(`handed over to ${key(from)} (instance already stopped)`);
        return;
      case S.HandingOver:
      case S.Stopping:
        if (!this.requesters.some((r) => uniqueAddressEquals(r, from))) this.requesters.push(from);
        this.send(from, { type: "hand-over-in-progress" });
        return;
      case S.End:
        this.send(from, { type: "hand-over-done", wasOldest: this.hasRunInstance });
        return;
      case S.Start:
      case S.Younger:
      case S.BecomingOldest:
      case S.TakeOver:
      case S.AcquiringLease:
        this.requesters = [from];
        this.finishStopped(`handed over to ${key(from)} (held no instance)`);
        return;
    }
  }

  private becomeHandingOver(to: UniqueAddress): void {
    this.cancelTimer(SingletonTimer.TakeOverRetry);
    this.requesters = [to];
    this.setState(S.HandingOver);
    this.log("info", `handing over to ${key(to)}`);
    this.send(to, { type: "hand-over-in-progress" });
    this.stopInstance();
  }

  private becomeStopping(then: "end" | "decide", why?: string): void {
    if (this.instance === "none") {
      this.finishStopped(why ?? "no instance to stop");
      return;
    }
    this.afterStop = then;
    this.cancelTimer(SingletonTimer.TakeOverRetry);
    this.setState(S.Stopping);
    if (why !== undefined) this.log("info", `stopping the instance: ${why}`);
    if (this.instance === "running") this.stopInstance();
  }

  private stopInstance(): void {
    this.instance = "stopping";
    this.emit({ type: "stop-instance", stopMessage: this.config.stopMessage });
  }

  private onInstanceTerminated(): void {
    if (this.instance === "none") return;
    const expected = this.instance === "stopping";
    this.instance = "none";
    if (this.current === S.HandingOver || this.current === S.Stopping) {
      this.finishStopped("instance stopped");
      return;
    }
    if (!expected) this.log("warn", "the instance terminated by itself; it is not restarted");
    if (this.current === S.WasOldest) this.onWasOldestMembers();
  }

  /** No instance any more: release, answer the requesters, then end (or decide anew). */
  private finishStopped(why: string): void {
    const requesters = this.requesters;
    this.requesters = [];
    const decideAgain =
      this.current === S.Stopping &&
      this.afterStop === "decide" &&
      requesters.length === 0 &&
      !this.leavingForGood;
    if (decideAgain) {
      this.releaseLeaseIfHeld();
      this.setState(S.Younger);
      this.decide();
      return;
    }
    this.releaseLeaseIfHeld();
    for (const r of requesters)
      this.send(r, { type: "hand-over-done", wasOldest: this.hasRunInstance });
    this.becomeEnd(why);
  }

  private onSelfGone(why: string): void {
    this.leavingForGood = true;
    switch (this.current) {
      case S.Oldest:
      case S.WasOldest:
        this.becomeStopping("end", why);
        return;
      case S.Stopping:
        this.afterStop = "end";
        return;
      case S.HandingOver:
      case S.End:
        return;
      case S.Start:
      case S.Younger:
      case S.BecomingOldest:
      case S.TakeOver:
      case S.AcquiringLease:
        this.becomeEnd(why);
        return;
    }
  }

  private becomeEnd(why: string): void {
    if (this.instance !== "none") fail(`singleton manager ends with instance ${this.instance}`);
    this.tellYoungerEnded();
    for (const t of [...this.timers].sort()) this.cancelTimer(t);
    this.pendingRemoval.clear();
    this.releaseLeaseIfHeld();
    this.log("info", `end: ${why}`);
    this.setState(S.End);
    this.emit({ type: "done" });
  }

  /**
   * Entering End, this node holds no instance and never will: it says so (HandOverDone)
   * to the younger eligible members it has not answered yet, each of which may become
   * the oldest and would otherwise have to ask it, or wait out its removal margin when
   * it is gone by then (a rolling restart reuses its address for a new incarnation).
   */
  private tellYoungerEnded(): void {
    const me = findNode(this.members, this.self);
    if (me === undefined) return;
    for (const m of this.members) {
      if (compareByAge(me, m) >= 0 || !isEligible(m)) continue;
      if (this.toldDone.has(key(m.uniqueAddress))) continue;
      this.send(m.uniqueAddress, { type: "hand-over-done", wasOldest: this.hasRunInstance });
    }
  }

  // ---- timers and plumbing -------------------------------------------------------------

  private onTimer(timerKey: string): void {
    if (!this.timers.delete(timerKey)) return; // cancelled or never started
    if (timerKey.startsWith(REMOVAL_MARGIN_TIMER_PREFIX)) {
      this.pendingRemoval.delete(timerKey.slice(REMOVAL_MARGIN_TIMER_PREFIX.length));
      this.pruneHandedOver();
      if (DECIDING.has(this.current)) this.decide();
      return;
    }
    switch (timerKey) {
      case SingletonTimer.HandOverRetry:
        if (this.current === S.BecomingOldest) this.onHandOverRetry();
        return;
      case SingletonTimer.TakeOverRetry:
        if (this.current === S.WasOldest) this.onTakeOverRetry();
        return;
      case SingletonTimer.LeaseRetry:
        if (this.current === S.AcquiringLease && this.lease === "none") this.acquireLease();
        return;
    }
  }

  private stuck(phase: "hand-over" | "take-over", peers: readonly Member[], max: number): void {
    const error = new SingletonManagerStuckError(
      key(this.self),
      phase,
      peers.map((m) => key(m.uniqueAddress)),
      max,
    );
    this.log("error", error.message);
    this.emit({ type: "stuck-error", error });
  }

  private setState(next: SingletonManagerState): void {
    if (next === this.current) return;
    this.log("debug", `${this.current} -> ${next}`);
    this.current = next;
  }

  private startTimer(timerKey: string, delayMs: number): void {
    this.timers.add(timerKey);
    this.emit({ type: "start-timer", key: timerKey, delayMs });
  }

  private cancelTimer(timerKey: string): void {
    if (this.timers.delete(timerKey)) this.emit({ type: "cancel-timer", key: timerKey });
  }

  private send(to: UniqueAddress, message: SingletonManagerMessage): void {
    if (message.type === "hand-over-done") this.toldDone.add(key(to));
    this.emit({ type: "send", to, message });
  }

  private log(level: SingletonLogLevel, text: string): void {
    this.emit({ type: "log", level, text });
  }

  private emit(output: SingletonManagerOutput<StopMessage>): void {
    this.out.push(output);
  }
}

function names(members: readonly Member[]): string {
  return members.map((m) => key(m.uniqueAddress)).join(", ");
}
