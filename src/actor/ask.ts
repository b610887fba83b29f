/**
 * Ask: request/response over tell. `ask(ref, (replyTo) => msg, { timeoutMs, signal })`
 * creates a one-shot reply ref, sends the message and returns a Promise of the first
 * reply. Timeouts reject with AskTimeoutError, aborts with AbortError; late replies go to
 * dead letters.
 *
 * Timeouts are tracked per distinct timeout value in FIFO deadline queues with one
 * timer per queue (not one timer per ask): asks with equal timeouts expire in send
 * order, so the head is always the earliest deadline. Completed asks are popped from the
 * head eagerly, which keeps memory proportional to outstanding asks in the common
 * in-order case. The number of pending asks is bounded by `askPendingMax`.
 */
import { Deque } from "../base/deque.js";
import type { Disposable } from "../base/disposable.js";
import {
  AbortError,
  AskTimeoutError,
  ConfigError,
  InvalidActorRefError,
  ShardkitError,
  SystemTerminatedError,
} from "../base/errors.js";
import { IdTable } from "../base/id-table.js";
import { ActorPath } from "./actor-path.js";
import type { ActorRef } from "./actor-ref.js";
import {
  type AskRegistrar,
  type InternalRef,
  isInternalRef,
  type PendingAsk,
  type SystemMessage,
  type SystemServices,
} from "./internal.js";

/** The name of an ask's reply target is this prefix and the ask's id. */
const ASK_NAME_PREFIX = "$ask";

export interface AskOptions {
  /** Reject with AskTimeoutError after this many ms (default: actor setting askTimeoutMs). */
  readonly timeoutMs?: number;
  /** Reject with AbortError when aborted; nothing is sent if already aborted. */
  readonly signal?: AbortSignal;
}

/** Too many asks are pending (askPendingMax). */
export class AskRejectedError extends ShardkitError {
  constructor(limit: number) {
    super("ASK_PENDING_LIMIT", `too many pending asks (askPendingMax=${limit})`, { limit });
  }
}

/**
 * Sends `makeMessage(replyTo)` to `target` and resolves with the first message sent to
 * `replyTo`. Annotate the reply type on the parameter:
 * `ask(account, (replyTo: ActorRef<number>) => ({ type: "balance", replyTo }))`.
 * (`X` is inferred `const` from the message literal so discriminants like
 * `type: "balance"` stay literal; it must be a member of the target's message type.)
 */
export function ask<M, R, const X extends M = M>(
  target: ActorRef<M>,
  makeMessage: (replyTo: ActorRef<R>) => X,
  options: AskOptions = {},
): Promise<R> {
  const begun = beginAsk<R>(target, options);
  if (begun instanceof Promise) return begun;
  let message: X;
  try {
    message = makeMessage(begun.ref as ActorRef<R>);
  } catch (error) {
    begun.ref.fail(error);
    return begun.promise;
  }
  (target as ActorRef<X>).tell(message);
  return begun.promise;
}

/** A started ask: its reply target and the promise the reply settles. */
export interface BegunAsk<R> {
  readonly ref: PendingAsk<R>;
  readonly promise: Promise<R>;
}

/** The resolve and reject of the promise being created (see `beginAsk`). */
let capturedResolve: (value: never) => void = () => {};
let capturedReject: (error: unknown) => void = () => {};
function capture(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/**
 * The first half of `ask`, for senders that build the message themselves (the sharding
 * entity ref wraps it in an envelope): registers the reply target, or answers the
 * rejected promise when the ask cannot start (bad timeout, aborted signal, too many
 * pending asks, terminated system). The caller then sends its message to `target`, or
 * fails `ref` if building it threw. The promise is made with one shared executor, so an
 * ask costs no closure of its own.
 */
export function beginAsk<R>(target: unknown, options: AskOptions): BegunAsk<R> | Promise<R> {
  if (!isInternalRef(target)) return Promise.reject(new InvalidActorRefError("ask", target));
  const core = target.core;
  const timeoutMs = options.timeoutMs ?? core.settings.askTimeoutMs;
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs))
    return Promise.reject(new ConfigError("timeoutMs", timeoutMs, "a finite number > 0"));
  if (options.signal?.aborted)
    return Promise.reject(new AbortError(`ask to ${target.path}`, options.signal.reason));
  const promise = new Promise<R>(capture);
  const resolve = capturedResolve as (value: R) => void;
  const reject = capturedReject;
  const ref = core.asks.create<R>(target, timeoutMs, resolve, reject, options.signal);
  if (ref === null) {
    // create rejected it already when the system is terminating; then this is a no-op
    reject(new AskRejectedError(core.settings.askPendingMax));
    return promise;
  }
  return { ref, promise };
}

export class AskRef<R> implements PendingAsk<R> {
  done = false;
  abortCleanup: Disposable | null = null;

  constructor(
    readonly core: SystemServices,
    readonly id: number,
    readonly target: InternalRef,
    readonly timeoutMs: number,
    readonly deadline: number,
    private readonly resolveFn: (r: R) => void,
    private readonly rejectFn: (e: unknown) => void,
  ) {}

  get path(): ActorPath {
    return new ActorPath(this.core.address, ["temp", this.name], this.id);
  }
  /** The last element of `path`, by which a remote reply finds this ref. */
  get name(): string {
    return `${ASK_NAME_PREFIX}${this.id}`;
  }
  get isTerminated(): boolean {
    return this.done;
  }

  tell(message: unknown): void {
    if (this.done) {
      this.core.deadLetter(message, this, "late-reply");
      return;
    }
    this.settle();
    this.resolveFn(message as R);
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.settle();
    this.rejectFn(error);
  }

  sendSystem(message: SystemMessage): void {
    if (message.k === "watch")
      message.watcher.sendSystem({ k: "terminated", ref: this, failed: false, error: undefined });
  }

  private settle(): void {
    this.done = true;
    this.abortCleanup?.dispose();
    this.abortCleanup = null;
    this.core.asks.completed(this as AskRef<unknown>);
  }
}

interface DeadlineQueue {
  readonly timeoutMs: number;
  readonly queue: Deque<AskRef<unknown>>;
  timer: Disposable | null;
}

export class AskRegistry implements AskRegistrar {
  private readonly queues = new Map<number, DeadlineQueue>();
  /** Reply targets that left this process inside a message (remote asks), by id. */
  private readonly exportedRefs = new IdTable<AskRef<unknown>>();
  private pendingCount = 0;
  private idCounter = 0;
  /** Asks that timed out so far (read by metrics at scrape time). */
  timeouts = 0;
  /** Optional observer of each settled ask's latency in ms (metrics); unset costs nothing. */
  latencyObserver: ((latencyMs: number) => void) | undefined = undefined;

  constructor(private readonly core: SystemServices) {}

  get pending(): number {
    return this.pendingCount;
  }

  create<R>(
    target: InternalRef,
    timeoutMs: number,
    resolve: (r: R) => void,
    reject: (e: unknown) => void,
    signal: AbortSignal | undefined,
  ): AskRef<R> | null {
    if (this.core.isTerminating) {
      reject(new SystemTerminatedError(this.core.name, "ask"));
      return null;
    }
    if (this.pendingCount >= this.core.settings.askPendingMax) return null;
    const deadline = this.core.clock.now() + timeoutMs;
    const ref = new AskRef<R>(
      this.core,
      ++this.idCounter,
      target,
      timeoutMs,
      deadline,
      resolve,
      reject,
    );
    this.pendingCount++;
    const dq = this.queueFor(timeoutMs);
    dq.queue.push(ref as AskRef<unknown>);
    if (dq.timer === null) dq.timer = this.core.scheduler.schedule(timeoutMs, () => this.sweep(dq));
    if (signal !== undefined) {
      const onAbort = () => ref.fail(new AbortError(`ask to ${target.path}`, signal.reason));
      signal.addEventListener("abort", onAbort, { once: true });
      ref.abortCleanup = { dispose: () => signal.removeEventListener("abort", onAbort) };
    }
    return ref;
  }

  /** Makes a pending reply target resolvable by name (`$ask<id>`) for remote replies. */
  export(ref: InternalRef): void {
    if (ref instanceof AskRef && !ref.done) this.exportedRefs.set(ref.id, ref);
  }

  /** The exported reply target named `name` (`$ask<id>`, as AskRef.name spells it). */
  exported(name: string): InternalRef | undefined {
    if (!name.startsWith(ASK_NAME_PREFIX)) return undefined;
    const digits = name.slice(ASK_NAME_PREFIX.length);
    const id = Number(digits);
    // Only the canonical spelling: "$ask07" or "$ask 7" name no ask.
    return Number.isSafeInteger(id) && id > 0 && String(id) === digits
      ? this.exportedRefs.get(id)
      : undefined;
  }

  /** The exported reply target of the ask with this id. */
  exportedById(id: number): InternalRef | undefined {
    return this.exportedRefs.get(id);
  }

  /** Called once per ask when it resolves, rejects or times out. */
  completed(ref: AskRef<unknown>): void {
    this.pendingCount--;
    if (this.latencyObserver !== undefined)
      this.latencyObserver(this.core.clock.now() - (ref.deadline - ref.timeoutMs));
    if (this.exportedRefs.size > 0) this.exportedRefs.delete(ref.id);
    const dq = this.queues.get(ref.timeoutMs);
    if (dq === undefined) return;
    while (dq.queue.peek()?.done) dq.queue.shift();
  }

  /** Rejects every pending ask (system termination). */
  rejectAll(): void {
    for (const dq of this.queues.values()) {
      dq.timer?.dispose();
      dq.timer = null;
      for (const ref of [...dq.queue])
        ref.fail(new SystemTerminatedError(this.core.name, "await a reply"));
    }
    this.queues.clear();
  }

  private queueFor(timeoutMs: number): DeadlineQueue {
    let dq = this.queues.get(timeoutMs);
    if (dq === undefined) {
      dq = { timeoutMs, queue: new Deque(), timer: null };
      this.queues.set(timeoutMs, dq);
    }
    return dq;
  }

  private sweep(dq: DeadlineQueue): void {
    dq.timer = null;
    const now = this.core.clock.now();
    for (;;) {
      const head = dq.queue.peek();
      if (head === undefined) break;
      if (head.done) {
        dq.queue.shift();
        continue;
      }
      if (head.deadline > now) {
        dq.timer = this.core.scheduler.schedule(head.deadline - now, () => this.sweep(dq));
        return;
      }
      dq.queue.shift();
      this.timeouts++;
      head.fail(new AskTimeoutError(head.target.path.toString(), head.timeoutMs));
    }
    this.queues.delete(dq.timeoutMs);
  }
}
