/**
 * SystemCore: the internals shared by every cell of one actor system — runtime ports,
 * settings, the dispatcher, dead letters, failure reporting, uid/name generation and
 * the guardians. The public facade is ActorSystem; cells only see this.
 */

import { SystemTerminatedError } from "../base/errors.js";
import { RateLimiter } from "../base/rate-limiter.js";
import type { Logger } from "../ports/logger.js";
import type { Runtime } from "../ports/runtime.js";
import { ActorCell } from "./actor-cell.js";
import { ActorPath } from "./actor-path.js";
import { AskRegistry } from "./ask.js";
import { type ActorSystemView, Behaviors, type RecoveryObserver } from "./behavior.js";
import { Dispatcher } from "./dispatcher.js";
import { type DeadLetterReason, EventStream } from "./event-stream.js";
import {
  type InternalRef,
  ScopedMessage,
  type SystemMessage,
  type SystemServices,
} from "./internal.js";
import type { ActorSettings } from "./settings.js";

export class SystemCore implements SystemServices {
  readonly dispatcher: Dispatcher;
  readonly eventStream: EventStream;
  readonly log: Logger;
  /** `shardkit://<name>` until remoting binds it to `shardkit://<name>@host:port`. */
  address: string;
  readonly deadLetters: DeadLetterRef;
  readonly asks: AskRegistry;
  readonly userGuardian: ActorCell<never>;
  readonly systemGuardian: ActorCell<never>;
  deadLetterCount = 0;
  unhandledCount = 0;
  /** See ActorSystemAccounting.recoveryObserver (behavior.ts). */
  recoveryObserver: RecoveryObserver | undefined = undefined;
  failureCount = 0;
  private uidCounter = 0;
  private nameCounter = 0;
  private terminating = false;
  private terminated = false;
  private readonly deadLetterLimiter: RateLimiter;
  private readonly failureLimiter: RateLimiter;
  private resolveTerminated!: () => void;
  readonly whenTerminated: Promise<void>;
  system!: ActorSystemView;

  constructor(
    readonly name: string,
    readonly runtime: Runtime,
    readonly settings: Readonly<ActorSettings>,
  ) {
    this.address = `shardkit://${name}`;
    this.log = runtime.logger.child({ system: name });
    this.dispatcher = new Dispatcher(
      runtime.scheduler,
      settings.dispatcherThroughput,
      settings.dispatcherTurnMessagesMax,
    );
    this.eventStream = new EventStream(this.log);
    this.deadLetters = new DeadLetterRef(this);
    this.asks = new AskRegistry(this);
    this.deadLetterLimiter = new RateLimiter(
      settings.deadLetterLogBurstMax,
      settings.deadLetterLogIntervalMs,
    );
    this.failureLimiter = new RateLimiter(
      settings.failureLogBurstMax,
      settings.failureLogIntervalMs,
    );
    this.whenTerminated = new Promise((resolve) => {
      this.resolveTerminated = resolve;
    });
    this.userGuardian = this.guardian("user");
    this.systemGuardian = this.guardian("system");
  }

  get clock() {
    return this.runtime.clock;
  }
  get scheduler() {
    return this.runtime.scheduler;
  }
  get random() {
    return this.runtime.random;
  }
  get isTerminating(): boolean {
    return this.terminating;
  }
  get isTerminated(): boolean {
    return this.terminated;
  }

  /** Binds this system to a network address (done once by remoting, before use). */
  bindAddress(hostPort: string): void {
    this.address = `shardkit://${this.name}@${hostPort}`;
  }

  /**
   * Finds a live local actor (or pending ask reply target) by its path elements
   * (e.g. ["user", "a", "b"]) and incarnation uid (0 = any). Used by remoting to
   * deliver inbound messages and resolve refs that arrive inside messages.
   */
  resolveLocal(elements: readonly string[], uid: number): InternalRef | undefined {
    const [root, ...rest] = elements;
    if (root === "temp")
      return rest.length === 1 ? this.asks.exported(rest[0] as string) : undefined;
    if (root === "deadLetters") return this.deadLetters;
    let cell: InternalRef | undefined =
      root === "user" ? this.userGuardian : root === "system" ? this.systemGuardian : undefined;
    for (const name of rest) {
      if (!(cell instanceof ActorCell)) return undefined;
      cell = cell.child(name) as InternalRef | undefined;
    }
    if (cell === undefined || cell.isTerminated) return undefined;
    if (uid !== 0 && cell.path.uid !== uid) return undefined;
    return cell;
  }

  nextUid(): number {
    return ++this.uidCounter;
  }

  nextName(): string {
    return `$${(this.nameCounter++).toString(36)}`;
  }

  assertRunning(what: string): void {
    if (this.terminating) throw new SystemTerminatedError(this.name, what);
  }

  deadLetter(
    message: unknown,
    recipient: InternalRef | string,
    reason: DeadLetterReason,
    cause?: unknown,
  ): void {
    if (message instanceof ScopedMessage) {
      this.deadLetter(message.message, recipient, reason, cause);
      return;
    }
    this.deadLetterCount++;
    const hasSubs = this.eventStream.hasSubscribers("DeadLetter");
    const now = this.clock.now();
    const suppressed = this.log.isEnabled("info") ? this.deadLetterLimiter.tryAcquire(now) : -1;
    if (!hasSubs && suppressed < 0) return;
    const path = typeof recipient === "string" ? recipient : recipient.path.toString();
    if (hasSubs)
      this.eventStream.publish({
        type: "DeadLetter",
        message,
        recipient: path,
        reason,
        ...(cause !== undefined ? { cause } : {}),
      });
    if (suppressed >= 0)
      this.log.info("dead letter", {
        recipient: path,
        reason,
        messageType: describeType(message),
        ...(cause !== undefined ? { cause } : {}),
        ...(suppressed > 0 ? { suppressedSinceLastLog: suppressed } : {}),
        total: this.deadLetterCount,
      });
  }

  unhandled(message: unknown, cell: InternalRef): void {
    this.unhandledCount++;
    if (this.eventStream.hasSubscribers("UnhandledMessage"))
      this.eventStream.publish({
        type: "UnhandledMessage",
        message,
        recipient: cell.path.toString(),
      });
    if (this.log.isEnabled("debug"))
      this.log.debug("unhandled message", {
        recipient: cell.path.toString(),
        messageType: describeType(message),
      });
  }

  actorFailed(cell: InternalRef, error: unknown, directive: "stop" | "resume" | "restart"): void {
    this.failureCount++;
    const path = cell.path.toString();
    const suppressed = this.failureLimiter.tryAcquire(this.clock.now());
    if (suppressed >= 0)
      this.log.error("actor failed", {
        actor: path,
        directive,
        error,
        ...(suppressed > 0 ? { suppressedSinceLastLog: suppressed } : {}),
      });
    if (this.eventStream.hasSubscribers("ActorFailed"))
      this.eventStream.publish({ type: "ActorFailed", path, error, directive });
  }

  /** Stops /user (all user actors, children first), then /system. */
  terminate(): Promise<void> {
    if (!this.terminating) {
      this.terminating = true;
      this.userGuardian.sendSystem({ k: "stop" });
    }
    return this.whenTerminated;
  }

  guardianTerminated(cell: InternalRef): void {
    if (cell === (this.userGuardian as unknown)) {
      this.systemGuardian.sendSystem({ k: "stop" });
      return;
    }
    this.asks.rejectAll();
    this.terminated = true;
    this.resolveTerminated();
  }

  private guardian(name: string): ActorCell<never> {
    const cell = new ActorCell<never>(this, null, name, 0, Behaviors.ignore, undefined);
    cell.sendSystem({ k: "create" });
    return cell;
  }
}

/** The dead-letter ref: anything told to it is counted and published. */
export class DeadLetterRef implements InternalRef<unknown> {
  constructor(readonly core: SystemCore) {}
  get path(): ActorPath {
    return new ActorPath(this.core.address, ["deadLetters"], 0);
  }
  get isTerminated(): boolean {
    return false;
  }
  tell(message: unknown): void {
    this.core.deadLetter(message, this, "stopped");
  }
  sendSystem(message: SystemMessage): void {
    if (message.k === "watch")
      message.watcher.sendSystem({ k: "terminated", ref: this, failed: false, error: undefined });
  }
}

function describeType(message: unknown): string {
  if (message === null) return "null";
  if (typeof message !== "object") return typeof message;
  const t = (message as { type?: unknown }).type;
  if (typeof t === "string") return t;
  return (message as object).constructor?.name ?? "object";
}
