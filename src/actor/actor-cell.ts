/**
 * ActorCell: one actor. It is at once the actor's ref, its context and its mailbox, so an
 * idle actor costs one object plus its entry in its parent's child map; everything rarely
 * used (watchers, timers, stash, receive timeout, supervision state) lives in a lazily
 * allocated `CellExtras`.
 *
 * Invariants:
 * - one message at a time: `run` is only called by the dispatcher, and while a handler's
 *   promise is pending (SUSPENDED) no user message is processed;
 * - system messages (create, stop, watch, child-terminated) are processed before user
 *   messages and are not subject to the mailbox bound;
 * - a cell stops its children first and terminates only when all of them have;
 * - after TERMINATED every message goes to dead letters and every watch is answered
 *   with Terminated at once.
 */

import type { Disposable } from "../base/disposable.js";
import {
  ConfigError,
  InvalidActorNameError,
  InvalidActorRefError,
  ShardkitError,
} from "../base/errors.js";
import type { Logger } from "../ports/logger.js";
import { ActorPath, validActorName } from "./actor-path.js";
import { type ActorRef, PoisonPill } from "./actor-ref.js";
import type {
  ActorContext,
  ActorSystemView,
  Behavior,
  BehaviorResult,
  HandlerResult,
  StashBuffer,
  TimerScheduler,
} from "./behavior.js";
import {
  InternalMessage,
  type InternalRef,
  isInternalRef,
  refKey,
  ScopedMessage,
  type SystemMessage,
  type SystemServices,
} from "./internal.js";
import type { Props } from "./props.js";
import { PostStop, type Signal } from "./signals.js";
import { ActorStash } from "./stash.js";
import { backoffDelayMs, type SupervisorStrategy } from "./supervision.js";
import { ActorTimers, TimerFire } from "./timers.js";

const SCHEDULED = 1;
const SUSPENDED = 2;
const STOPPING = 4;
const TERMINATED = 8;
const RESTARTING = 16;
const STARTED = 32;
const CONCURRENT = 64;
const FAILED = 128;
const BOUNDED = 256;
/**
 * Set on a child its parent watches with a plain `watch` (the common case: a parent that
 * supervises its children). That registration lives in this bit only, so it costs no
 * watcher maps, no ref keys and no CellExtras on either side; `watchWith`, and watchers
 * that are not the parent, use the maps.
 */
const WATCHED_BY_PARENT = 512;
/** Any of these means: do not process user messages now. */
const BLOCKED = SUSPENDED | STOPPING | TERMINATED | RESTARTING;

/** A Terminated signal travelling through the user mailbox (so it respects suspension). */
class TerminatedFire extends InternalMessage {
  constructor(
    readonly ref: InternalRef,
    readonly failed: boolean,
    readonly error: unknown,
  ) {
    super();
  }
}

/** A receive-timeout fire; accepted only if its timeout is still the current one. */
class ReceiveTimeoutFire extends InternalMessage {
  constructor(readonly rt: ReceiveTimeout) {
    super();
  }
}

interface ReceiveTimeout {
  readonly timeoutMs: number;
  readonly message: unknown;
  lastActivity: number;
  handle: Disposable | null;
}

interface SupervisionState {
  readonly strategy: SupervisorStrategy;
  /** The behavior a restart recreates the actor from. */
  readonly initial: Behavior<unknown>;
  restartTimes: number[];
  backoffAttempt: number;
  lastRestartAt: number;
  backoffTimer: Disposable | null;
  pendingError: unknown;
}

/** Watch entry: undefined = deliver a Terminated signal, else this message. */
type WatchEntry = { readonly message: unknown } | undefined;

/** Rarely used per-actor state, allocated on first use. */
class CellExtras {
  /** Keyed by refKey: a remote watcher arrives as a new ref object each time. */
  watchers: Map<string, InternalRef> | null = null;
  watching: Map<string, { readonly ref: InternalRef; readonly entry: WatchEntry }> | null = null;
  timers: ActorTimers<unknown> | null = null;
  stash: ActorStash<unknown> | null = null;
  receiveTimeout: ReceiveTimeout | null = null;
  supervision: SupervisionState | null = null;
  mailboxCapacityMax = Number.POSITIVE_INFINITY;
  stashCapacityMax = 0;
  failure: unknown = undefined;
  log: Logger | null = null;
}

/** Thrown into the watcher when it does not handle a Terminated signal (as in Akka). */
export class DeathPactError extends ShardkitError {
  constructor(watcher: string, watched: string) {
    super("DEATH_PACT", `${watcher} watched ${watched} but did not handle its Terminated signal`, {
      watcher,
      watched,
    });
  }
}

export class NotAChildError extends ShardkitError {
  constructor(parent: string, ref: string) {
    super("NOT_A_CHILD", `${ref} is not a child of ${parent}; only a parent may stop a child`, {
      parent,
      ref,
    });
  }
}

/**
 * The scoped message whose handler is running (handlers run one at a time and
 * synchronously, so one variable serves every cell; no field per actor).
 */
let handlingScoped: ScopedMessage | null = null;

export class ActorCell<M = unknown> implements InternalRef<M>, ActorContext<M> {
  private flags = 0;
  /** Before start: the spawn behavior; after: the current canonical behavior. */
  private behavior: Behavior<M>;
  private q: unknown[] | null = null;
  private qHead = 0;
  private sysq: SystemMessage[] | null = null;
  private childMap: Map<string, ActorCell<unknown>> | null = null;
  private ext: CellExtras | null = null;

  constructor(
    readonly core: SystemServices,
    readonly parent: ActorCell<unknown> | null,
    readonly name: string,
    readonly uid: number,
    initial: Behavior<M>,
    props: Props | undefined,
  ) {
    this.behavior = initial;
    if (props !== undefined || Number.isFinite(core.settings.mailboxCapacityMax))
      this.applyProps(props ?? NO_PROPS);
  }

  // ---------------------------------------------------------------- ref side

  get path(): ActorPath {
    const names: string[] = [];
    for (let c: ActorCell<unknown> | null = this as ActorCell<unknown>; c; c = c.parent)
      names.push(c.name);
    return new ActorPath(this.core.address, names.reverse(), this.uid);
  }

  get pathString(): string {
    return this.path.toString();
  }

  get isTerminated(): boolean {
    return (this.flags & TERMINATED) !== 0;
  }

  tell(message: M | PoisonPill): void {
    const flags = this.flags;
    if ((flags & TERMINATED) !== 0) {
      this.core.deadLetter(message, this, "stopped");
      return;
    }
    const q = this.q;
    // A one-element array for an empty mailbox: a push onto [] would allocate room for 16.
    if (q === null) this.q = [message];
    else if ((flags & BOUNDED) !== 0 && q.length - this.qHead >= this.extras().mailboxCapacityMax) {
      this.core.deadLetter(message, this, "mailbox-overflow");
      return;
    } else q.push(message);
    if ((flags & (SCHEDULED | BLOCKED)) === 0) {
      this.flags = flags | SCHEDULED;
      this.core.dispatcher.schedule(this);
    }
  }

  sendSystem(message: SystemMessage): void {
    if ((this.flags & TERMINATED) !== 0) {
      if (message.k === "watch")
        message.watcher.sendSystem({ k: "terminated", ref: this, failed: false, error: undefined });
      return;
    }
    if (this.sysq === null) this.sysq = [message];
    else this.sysq.push(message);
    if ((this.flags & SCHEDULED) === 0) {
      this.flags |= SCHEDULED;
      this.core.dispatcher.schedule(this);
    }
  }

  // ---------------------------------------------------------------- dispatcher side

  /** Called by the dispatcher only. Processes system messages, then up to `budget`. */
  run(budget: number): number {
    let n = 0;
    while (this.sysq !== null) {
      const list = this.sysq;
      this.sysq = null;
      for (const m of list) this.onSystem(m);
      n++;
    }
    while (n < budget && (this.flags & BLOCKED) === 0) {
      const q = this.q;
      if (q === null || this.qHead >= q.length) break;
      const msg = q[this.qHead];
      q[this.qHead++] = undefined;
      if (this.qHead === q.length) {
        this.q = null; // drained: an idle actor keeps no mailbox array (a tell makes one)
        this.qHead = 0;
      }
      this.invoke(msg);
      n++;
    }
    this.afterRun();
    return n === 0 ? 1 : n;
  }

  private afterRun(): void {
    const q = this.q;
    if (q !== null && this.qHead > 1024 && this.qHead * 2 > q.length) {
      q.splice(0, this.qHead);
      this.qHead = 0;
    }
    if (this.sysq !== null || (this.hasUserMessages() && (this.flags & BLOCKED) === 0))
      this.core.dispatcher.schedule(this);
    else this.flags &= ~SCHEDULED;
  }

  private hasUserMessages(): boolean {
    return this.q !== null && this.qHead < this.q.length;
  }

  private reschedule(): void {
    if ((this.flags & SCHEDULED) !== 0) return;
    if (this.sysq === null && !(this.hasUserMessages() && (this.flags & BLOCKED) === 0)) return;
    this.flags |= SCHEDULED;
    this.core.dispatcher.schedule(this);
  }

  // ---------------------------------------------------------------- message handling

  private invoke(msg: unknown): void {
    if (typeof msg === "object" && msg !== null && msg instanceof InternalMessage) {
      this.invokeInternal(msg);
      return;
    }
    if (msg === PoisonPill) {
      this.onPoisonPill();
      return;
    }
    const ext = this.ext;
    if (ext !== null && ext.receiveTimeout !== null)
      ext.receiveTimeout.lastActivity = this.core.clock.now();
    this.handle(msg as M);
  }

  private handle(msg: M): void {
    let result: HandlerResult<M>;
    const b = this.behavior;
    try {
      switch (b.kind) {
        case "receive":
          result = b.onMessage(this, msg);
          break;
        case "class":
          result = (b as { onMessage(m: M): HandlerResult<M> }).onMessage(msg);
          break;
        case "ignore":
          return;
        default:
          this.core.unhandled(msg, this);
          return;
      }
    } catch (error) {
      this.onFailure(error);
      return;
    }
    if (result !== undefined) this.applyResult(result, msg);
  }

  /** A behavior with `onPoisonPill` decides when to stop; any other stops at once. */
  private onPoisonPill(): void {
    const b = this.behavior;
    if (b.kind !== "receive" || b.onPoisonPill === undefined) {
      this.beginStop(false, undefined);
      return;
    }
    let result: BehaviorResult<M>;
    try {
      result = b.onPoisonPill(this);
    } catch (error) {
      this.onFailure(error);
      return;
    }
    if (result !== undefined) this.applyResult(result, PoisonPill);
  }

  private invokeInternal(msg: InternalMessage): void {
    if (msg instanceof TimerFire) {
      const m = this.ext?.timers?.accept(msg);
      if (m !== undefined) this.invokeUser(m as M);
    } else if (msg instanceof ReceiveTimeoutFire) {
      if (this.ext?.receiveTimeout === msg.rt) this.handle(msg.rt.message as M);
    } else if (msg instanceof TerminatedFire) {
      this.deliverTerminated(msg);
    } else if (msg instanceof ScopedMessage) {
      const outer = handlingScoped;
      handlingScoped = msg;
      try {
        msg.run(() => this.invokeUser(msg.message as M));
      } finally {
        handlingScoped = outer;
      }
    }
  }

  private invokeUser(m: M): void {
    const ext = this.ext;
    if (ext !== null && ext.receiveTimeout !== null)
      ext.receiveTimeout.lastActivity = this.core.clock.now();
    this.handle(m);
  }

  private applyResult(result: HandlerResult<M>, msg: unknown): void {
    if (result === undefined) return;
    if (typeof (result as PromiseLike<unknown>).then === "function") {
      this.awaitResult(result as PromiseLike<Behavior<M> | undefined>, msg);
      return;
    }
    const next = result as Behavior<M>;
    switch (next.kind) {
      case "same":
        return;
      case "unhandled":
        this.core.unhandled(msg, this);
        return;
      case "stopped":
        this.beginStop(false, undefined);
        return;
      default:
        this.become(next);
    }
  }

  private awaitResult(p: PromiseLike<Behavior<M> | undefined>, msg: unknown): void {
    const concurrent = (this.flags & CONCURRENT) !== 0;
    if (!concurrent) this.flags |= SUSPENDED;
    p.then(
      (r) => {
        if (!concurrent) this.flags &= ~SUSPENDED;
        if ((this.flags & (TERMINATED | STOPPING)) === 0 && r !== undefined)
          this.applyResult(r, msg);
        this.reschedule();
      },
      (error: unknown) => {
        if (!concurrent) this.flags &= ~SUSPENDED;
        if ((this.flags & (TERMINATED | STOPPING)) === 0) this.onFailure(error);
        this.reschedule();
      },
    );
  }

  private become(next: Behavior<M>): void {
    try {
      const b = this.canonicalize(next);
      if (b !== null) this.behavior = b;
      else this.beginStop(false, undefined);
    } catch (error) {
      this.onFailure(error);
    }
  }

  /** Resolves setup/supervise wrappers; null means stopped. */
  private canonicalize(start: Behavior<M>): Behavior<M> | null {
    let b = start;
    for (;;) {
      switch (b.kind) {
        case "same":
        case "unhandled":
          return this.behavior;
        case "stopped":
          return null;
        case "setup":
          b = b.factory(this);
          continue;
        case "supervise":
          this.setSupervision(b.strategy, b.inner as Behavior<unknown>);
          b = b.inner;
          continue;
        default:
          return b;
      }
    }
  }

  /** Delivers a signal; returns false when the behavior left it unhandled. */
  private deliverSignal(signal: Signal): boolean {
    const b = this.behavior;
    let result: HandlerResult<M>;
    if (b.kind === "receive") {
      if (b.onSignal === undefined) return false;
      result = b.onSignal(this, signal);
    } else if (b.kind === "class") {
      result = (b as { onSignal(s: Signal): HandlerResult<M> }).onSignal(signal);
    } else return false;
    if (result !== undefined && (result as Behavior<M>).kind === "unhandled") return false;
    if (signal.type !== "PostStop" && signal.type !== "PreRestart")
      this.applyResult(result, signal);
    return true;
  }

  // ---------------------------------------------------------------- system messages

  private onSystem(m: SystemMessage): void {
    switch (m.k) {
      case "create":
        this.onCreate();
        return;
      case "stop":
        this.beginStop(false, undefined);
        return;
      case "restart-now":
        this.completeRestart();
        return;
      case "watch":
        if (m.watcher === this) return;
        // Stopped earlier in this same batch of system messages: answer at once.
        if ((this.flags & TERMINATED) !== 0)
          m.watcher.sendSystem({ k: "terminated", ref: this, failed: false, error: undefined });
        else this.watchersMap().set(refKey(m.watcher), m.watcher);
        return;
      case "unwatch":
        this.ext?.watchers?.delete(refKey(m.watcher));
        return;
      case "terminated":
        this.onWatchedTerminated(m.ref, m.failed, m.error);
        return;
      case "child-terminated":
        this.onChildTerminated(m.child);
        return;
    }
  }

  private onCreate(): void {
    this.flags |= STARTED;
    const initial = this.behavior;
    try {
      const b = this.canonicalize(initial);
      if (b === null) this.beginStop(false, undefined);
      else this.behavior = b;
    } catch (error) {
      this.behavior = { kind: "empty" };
      this.onFailure(error, true);
    }
  }

  private onWatchedTerminated(ref: InternalRef, failed: boolean, error: unknown): void {
    if (this.isWatchedChild(ref)) {
      ref.flags &= ~WATCHED_BY_PARENT;
      this.enqueueInternal(new TerminatedFire(ref, failed, error));
      return;
    }
    const watching = this.ext?.watching;
    const key = refKey(ref);
    const w = watching?.get(key);
    if (w === undefined) return;
    watching?.delete(key);
    if (w.entry !== undefined) this.enqueueUser(w.entry.message);
    else this.enqueueInternal(new TerminatedFire(w.ref, failed, error));
  }

  private deliverTerminated(t: TerminatedFire): void {
    const isChild = t.ref instanceof ActorCell && t.ref.parent === (this as ActorCell<unknown>);
    const signal: Signal =
      t.failed && isChild
        ? { type: "ChildFailed", ref: t.ref as ActorRef<never>, error: t.error }
        : { type: "Terminated", ref: t.ref as ActorRef<never> };
    let handled: boolean;
    try {
      handled = this.deliverSignal(signal);
    } catch (error) {
      this.onFailure(error);
      return;
    }
    if (!handled) this.onFailure(new DeathPactError(this.pathString, t.ref.path.toString()));
  }

  private onChildTerminated(child: InternalRef): void {
    const map = this.childMap;
    if (map !== null && child instanceof ActorCell && map.get(child.name) === child) {
      map.delete(child.name);
      if (map.size === 0) this.childMap = null;
    }
    if (this.childMap !== null) return;
    if ((this.flags & STOPPING) !== 0) this.finishStop();
    else if ((this.flags & RESTARTING) !== 0) this.scheduleRestart();
  }

  // ---------------------------------------------------------------- failure and restart

  private onFailure(error: unknown, duringSetup = false): void {
    const sup = this.ext?.supervision ?? null;
    const strategy = sup?.strategy ?? STOP;
    let directive = strategy.type;
    if (directive === "resume" && duringSetup) directive = "stop";
    if (directive === "restart" && sup !== null && !this.mayRestart(sup, duringSetup))
      directive = "stop";
    this.core.actorFailed(this, error, directive);
    switch (directive) {
      case "resume":
        return;
      case "stop":
        this.beginStop(true, error);
        return;
      case "restart":
        this.beginRestart(sup as SupervisionState, error);
        return;
    }
  }

  private mayRestart(sup: SupervisionState, duringSetup: boolean): boolean {
    const s = sup.strategy;
    if (s.type !== "restart") return false;
    if (duringSetup && s.backoff === undefined) return false;
    if (s.maxRestarts < 0) return true;
    const now = this.core.clock.now();
    if (s.withinMs > 0) sup.restartTimes = sup.restartTimes.filter((t) => now - t < s.withinMs);
    return sup.restartTimes.length < s.maxRestarts;
  }

  private beginRestart(sup: SupervisionState, error: unknown): void {
    try {
      this.deliverSignal({ type: "PreRestart", error });
    } catch (e) {
      this.extras().log?.error("PreRestart handler threw", { error: e });
    }
    this.cancelTimersAndTimeout();
    sup.pendingError = error;
    this.flags |= RESTARTING;
    const s = sup.strategy;
    if (s.type === "restart" && s.stopChildren && this.childMap !== null) {
      for (const child of this.childMap.values()) child.sendSystem({ k: "stop" });
      return;
    }
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    const sup = this.ext?.supervision;
    if (!sup) return;
    const s = sup.strategy;
    if (s.type !== "restart" || s.backoff === undefined) {
      this.completeRestart();
      return;
    }
    const now = this.core.clock.now();
    const resetAfter = s.backoff.resetBackoffAfterMs ?? s.backoff.maxBackoffMs;
    if (sup.lastRestartAt > 0 && now - sup.lastRestartAt >= resetAfter) sup.backoffAttempt = 0;
    const delay = backoffDelayMs(s.backoff, sup.backoffAttempt++, this.core.random.next());
    sup.backoffTimer = this.core.scheduler.schedule(delay, () => {
      sup.backoffTimer = null;
      this.sendSystem({ k: "restart-now" });
    });
  }

  private completeRestart(): void {
    const sup = this.ext?.supervision;
    if (!sup || (this.flags & RESTARTING) === 0 || (this.flags & (STOPPING | TERMINATED)) !== 0)
      return;
    this.flags &= ~RESTARTING;
    const now = this.core.clock.now();
    sup.restartTimes.push(now);
    sup.lastRestartAt = now;
    try {
      const b = this.canonicalize(sup.initial as Behavior<M>);
      if (b === null) this.beginStop(false, undefined);
      else this.behavior = b;
    } catch (error) {
      this.behavior = { kind: "empty" };
      this.onFailure(error, true);
    }
  }

  private setSupervision(strategy: SupervisorStrategy, initial: Behavior<unknown>): void {
    const ext = this.extras();
    if (ext.supervision !== null && ext.supervision.strategy === strategy) return;
    ext.supervision = {
      strategy,
      initial,
      restartTimes: [],
      backoffAttempt: 0,
      lastRestartAt: 0,
      backoffTimer: null,
      pendingError: undefined,
    };
  }

  // ---------------------------------------------------------------- stopping

  private beginStop(failed: boolean, error: unknown): void {
    if ((this.flags & (STOPPING | TERMINATED)) !== 0) return;
    this.flags |= STOPPING;
    if (failed) {
      this.flags |= FAILED;
      this.extras().failure = error;
    }
    this.cancelTimersAndTimeout();
    const sup = this.ext?.supervision;
    if (sup?.backoffTimer) {
      sup.backoffTimer.dispose();
      sup.backoffTimer = null;
    }
    if (this.childMap !== null) {
      for (const child of this.childMap.values()) child.sendSystem({ k: "stop" });
      return;
    }
    this.finishStop();
  }

  private finishStop(): void {
    this.flags = (this.flags & ~STOPPING) | TERMINATED;
    if ((this.flags & STARTED) !== 0) {
      try {
        this.deliverSignal(PostStop);
      } catch (error) {
        this.log.error("PostStop handler threw", { error });
      }
    }
    this.drainToDeadLetters();
    const ext = this.ext;
    const failed = (this.flags & FAILED) !== 0;
    const error = ext?.failure;
    if ((this.flags & WATCHED_BY_PARENT) !== 0)
      this.parent?.sendSystem({ k: "terminated", ref: this, failed, error });
    if (ext?.watchers)
      for (const w of ext.watchers.values())
        w.sendSystem({ k: "terminated", ref: this, failed, error });
    if (ext?.watching)
      for (const w of ext.watching.values()) w.ref.sendSystem({ k: "unwatch", watcher: this });
    if (this.parent !== null) this.parent.sendSystem({ k: "child-terminated", child: this });
    else this.core.guardianTerminated(this as ActorCell<unknown>);
    this.ext = null;
    this.behavior = STOPPED_BEHAVIOR as Behavior<M>;
  }

  private drainToDeadLetters(): void {
    const q = this.q;
    this.q = null;
    if (q !== null) {
      for (let i = this.qHead; i < q.length; i++) {
        const m = q[i];
        if (m instanceof ScopedMessage) this.core.deadLetter(m.message, this, "stopped");
        else if (m instanceof InternalMessage || m === PoisonPill) continue;
        else this.core.deadLetter(m, this, "stopped");
      }
    }
    this.qHead = 0;
    this.ext?.stash?.clear();
  }

  private cancelTimersAndTimeout(): void {
    const ext = this.ext;
    if (ext === null) return;
    ext.timers?.cancelAll();
    if (ext.receiveTimeout !== null) {
      ext.receiveTimeout.handle?.dispose();
      ext.receiveTimeout = null;
    }
  }

  // ---------------------------------------------------------------- mailbox helpers

  private enqueueUser(message: unknown): void {
    if ((this.flags & TERMINATED) !== 0) return;
    if (this.q === null) this.q = [message];
    else this.q.push(message);
    this.reschedule();
  }

  /** Used by timers and receive timeouts. */
  enqueueInternal(message: InternalMessage): void {
    this.enqueueUser(message);
  }

  /** Used by the stash: messages go back to the front, in order. */
  prependMessages(messages: unknown[]): void {
    const q = this.q;
    if (q === null || this.qHead >= q.length) this.q = messages;
    else if (this.qHead >= messages.length) {
      this.qHead -= messages.length;
      for (let i = 0; i < messages.length; i++) q[this.qHead + i] = messages[i];
    } else this.q = messages.concat(q.slice(this.qHead));
    if (this.q !== q) this.qHead = 0;
    this.reschedule();
  }

  /** StashHost: a message stashed while its scoped message is handled keeps its scope. */
  scopeOf(message: unknown): unknown {
    const s = handlingScoped;
    return s !== null && s.message === message ? s : message;
  }

  deadLetterAll(messages: unknown[]): void {
    for (const m of messages) if (m !== PoisonPill) this.core.deadLetter(m, this, "stash-cleared");
  }

  // ---------------------------------------------------------------- context API

  get self(): ActorRef<M> {
    return this;
  }

  get system(): ActorSystemView {
    return this.core.system;
  }

  get log(): Logger {
    const ext = this.extras();
    ext.log ??= this.core.log.child({ actor: this.pathString });
    return ext.log;
  }

  get timers(): TimerScheduler<M> {
    const ext = this.extras();
    ext.timers ??= new ActorTimers<unknown>({
      scheduler: this.core.scheduler,
      clock: this.core.clock,
      enqueueInternal: (m) => this.enqueueInternal(m),
    });
    return ext.timers as TimerScheduler<M>;
  }

  get stash(): StashBuffer<M> {
    const ext = this.extras();
    if (ext.stash === null) {
      const cap =
        ext.stashCapacityMax > 0 ? ext.stashCapacityMax : this.core.settings.stashCapacityMax;
      ext.stash = new ActorStash<unknown>(this, cap);
    }
    return ext.stash as StashBuffer<M>;
  }

  spawn<C>(behavior: Behavior<C>, name?: string, props?: Props): ActorRef<C> {
    return this.spawnChild(behavior, name, props);
  }

  /** Creates a child cell and schedules its start. */
  spawnChild<C>(
    behavior: Behavior<C>,
    name: string | undefined,
    props: Props | undefined,
  ): ActorCell<C> {
    this.core.assertRunning("spawn");
    if ((this.flags & (STOPPING | TERMINATED)) !== 0)
      throw new InvalidActorNameError(
        name ?? "(anonymous)",
        `parent ${this.pathString} is stopping`,
      );
    let childName: string;
    if (name === undefined) childName = this.core.nextName();
    else {
      const problem = validActorName(name);
      if (problem !== undefined) throw new InvalidActorNameError(name, problem);
      if (this.childMap?.has(name))
        throw new InvalidActorNameError(name, `already taken under ${this.pathString}`);
      childName = name;
    }
    const child = new ActorCell<C>(
      this.core,
      this as ActorCell<unknown>,
      childName,
      this.core.nextUid(),
      behavior,
      props,
    );
    if (this.childMap === null) this.childMap = new Map();
    this.childMap.set(childName, child as ActorCell<unknown>);
    child.sendSystem({ k: "create" });
    return child;
  }

  stop(child: ActorRef<never>): void {
    if (!(child instanceof ActorCell) || child.parent !== (this as ActorCell<unknown>))
      throw new NotAChildError(this.pathString, (child as ActorRef<never>).path.toString());
    child.sendSystem({ k: "stop" });
  }

  child(name: string): ActorRef<unknown> | undefined {
    return this.childMap?.get(name);
  }

  get children(): readonly ActorRef<unknown>[] {
    return this.childMap === null ? [] : [...this.childMap.values()];
  }

  watch(ref: ActorRef<never>): void {
    this.watchInternal(ref, undefined);
  }

  watchWith(ref: ActorRef<never>, message: M): void {
    this.watchInternal(ref, { message });
  }

  private watchInternal(ref: ActorRef<never>, entry: WatchEntry): void {
    if (!isInternalRef(ref)) throw new InvalidActorRefError("watch", ref);
    if (ref === (this as InternalRef)) return;
    if (ref instanceof ActorCell && ref.parent === (this as ActorCell<unknown>)) {
      if (entry === undefined && this.mayWatchByFlag(ref)) {
        ref.flags |= WATCHED_BY_PARENT;
        return;
      }
      ref.flags &= ~WATCHED_BY_PARENT;
    }
    const ext = this.extras();
    ext.watching ??= new Map();
    ext.watching.set(refKey(ref), { ref, entry });
    ref.sendSystem({ k: "watch", watcher: this });
  }

  unwatch(ref: ActorRef<never>): void {
    if (!isInternalRef(ref)) return;
    if (this.isWatchedChild(ref)) {
      ref.flags &= ~WATCHED_BY_PARENT;
      return;
    }
    if (this.ext?.watching?.delete(refKey(ref))) ref.sendSystem({ k: "unwatch", watcher: this });
  }

  setReceiveTimeout(timeoutMs: number, message: M): void {
    if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs))
      throw new ConfigError("setReceiveTimeout timeoutMs", timeoutMs, "a finite number > 0");
    this.cancelReceiveTimeout();
    const rt: ReceiveTimeout = {
      timeoutMs,
      message,
      lastActivity: this.core.clock.now(),
      handle: null,
    };
    this.extras().receiveTimeout = rt;
    this.armReceiveTimeout(rt, timeoutMs);
  }

  private armReceiveTimeout(rt: ReceiveTimeout, delayMs: number): void {
    rt.handle = this.core.scheduler.schedule(delayMs, () => {
      if (this.ext?.receiveTimeout !== rt) return;
      const idle = this.core.clock.now() - rt.lastActivity;
      if (idle >= rt.timeoutMs) {
        this.enqueueInternal(new ReceiveTimeoutFire(rt));
        rt.lastActivity = this.core.clock.now();
        this.armReceiveTimeout(rt, rt.timeoutMs);
      } else this.armReceiveTimeout(rt, rt.timeoutMs - idle);
    });
  }

  cancelReceiveTimeout(): void {
    const ext = this.ext;
    if (ext?.receiveTimeout) {
      ext.receiveTimeout.handle?.dispose();
      ext.receiveTimeout = null;
    }
  }

  scheduleOnce<T>(delayMs: number, target: ActorRef<T>, message: T): Disposable {
    return this.core.scheduler.schedule(delayMs, () => target.tell(message));
  }

  pipeToSelf<T>(
    promise: PromiseLike<T>,
    map: (result: { ok: true; value: T } | { ok: false; error: unknown }) => M,
  ): void {
    const deliver = (r: { ok: true; value: T } | { ok: false; error: unknown }) => {
      let m: M;
      try {
        m = map(r);
      } catch (error) {
        this.log.error("pipeToSelf mapping threw", { error });
        return;
      }
      this.tell(m);
    };
    promise.then(
      (value) => deliver({ ok: true, value }),
      (error: unknown) => deliver({ ok: false, error }),
    );
  }

  now(): number {
    return this.core.clock.now();
  }

  // ---------------------------------------------------------------- misc

  /** `ref` is a child of this cell watched through its WATCHED_BY_PARENT bit. */
  private isWatchedChild(ref: InternalRef): ref is ActorCell<unknown> {
    return (
      ref instanceof ActorCell &&
      ref.parent === (this as ActorCell<unknown>) &&
      (ref.flags & WATCHED_BY_PARENT) !== 0
    );
  }

  /** A live child not already watched through the maps can be watched by its bit. */
  private mayWatchByFlag(child: ActorCell<unknown>): boolean {
    if ((child.flags & TERMINATED) !== 0) return false;
    const watching = this.ext?.watching;
    return !watching || watching.size === 0 || !watching.has(refKey(child));
  }

  private watchersMap(): Map<string, InternalRef> {
    const ext = this.extras();
    ext.watchers ??= new Map();
    return ext.watchers;
  }

  private extras(): CellExtras {
    this.ext ??= new CellExtras();
    return this.ext;
  }

  private applyProps(props: Props): void {
    if (props.allowConcurrentAsync === true) this.flags |= CONCURRENT;
    const mb = props.mailboxCapacityMax ?? this.core.settings.mailboxCapacityMax;
    if (Number.isFinite(mb)) {
      this.flags |= BOUNDED;
      this.extras().mailboxCapacityMax = mb;
    }
    if (props.stashCapacityMax !== undefined)
      this.extras().stashCapacityMax = props.stashCapacityMax;
  }

  /** Queued user messages (for tests and stats). */
  get mailboxSize(): number {
    return this.q === null ? 0 : this.q.length - this.qHead;
  }

  toString(): string {
    return `ActorRef(${this.pathString})`;
  }
}

const NO_PROPS: Props = Object.freeze({});
const STOP: SupervisorStrategy = Object.freeze({ type: "stop" });
const STOPPED_BEHAVIOR = Object.freeze({ kind: "empty" as const });
