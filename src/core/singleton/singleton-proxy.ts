/**
 * The singleton proxy of one node, as a sans-IO machine: it finds where the singleton
 * instance runs and forwards messages to it, buffering while that is unknown.
 *
 * - The instance belongs on the oldest eligible member in scope (singleton-members.ts);
 *   with `skipUnreachable`, on the oldest eligible member that is reachable (the managers'
 *   lease-guarded take-over, singleton-manager.ts).
 *   Whenever that member changes, the location is forgotten and the proxy identifies the
 *   instance there: at once, then every singletonIdentificationIntervalMs until the
 *   answer is "found" (during a hand-over the new oldest answers "not found" until its
 *   instance has started).
 * - While the location is unknown, messages wait in a FIFO buffer of at most
 *   bufferSizeMax. When it is full the OLDEST buffered message is dropped (the newest are
 *   the most likely to still matter, as in Akka's proxy) and reported as a dead letter;
 *   every drop is counted in `stats.droppedCount`.
 * - Once located, the buffer is flushed in order, then later messages go straight
 *   through: delivery order equals send order. Delivery is at most once, like any send.
 *
 * Invariant: a message is delivered only to the node whose identification answered
 * "found" while it was the oldest eligible member, and no message is delivered while
 * older buffered messages are still waiting.
 */
import { Deque } from "../../base/deque.js";
import type { Member } from "../membership/member.js";
import { DEFAULT_DATA_CENTER } from "../membership/member.js";
import {
  type UniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
} from "../membership/unique-address.js";
import { oldestEligible, type SingletonScope, singletonMembersOf } from "./singleton-members.js";
import {
  resolveSingletonProxySettings,
  type SingletonProxySettings,
} from "./singleton-settings.js";

/** The proxy's only timer. */
export const SINGLETON_PROXY_IDENTIFY_TIMER = "identify";

/** Configuration of one proxy. */
export interface SingletonProxyConfig {
  /** The singleton runs only on members with this role; undefined: on any member. */
  readonly role: string | undefined;
  /** Data center of the singleton; default "default". */
  readonly dataCenter?: string;
  readonly settings?: Partial<SingletonProxySettings>;
}

/** Inputs of the proxy. */
export type SingletonProxyInput<M> =
  /**
   * After every cluster state change: the members (any order, any status), and those
   * unreachable now (used only with the `skipUnreachable` setting).
   */
  | {
      readonly type: "members";
      readonly oldestFirst: readonly Member[];
      readonly unreachable?: readonly UniqueAddress[];
    }
  /** Answer to `identify(to)`: `from` is the node asked. */
  | { readonly type: "identify-result"; readonly from: UniqueAddress; readonly found: boolean }
  /** The located instance terminated (the driver watches it). */
  | { readonly type: "singleton-terminated"; readonly at: UniqueAddress }
  | { readonly type: "timer"; readonly key: string }
  /** A message for the singleton. */
  | { readonly type: "send"; readonly message: M }
  /** The proxy is being disposed: buffered messages become dead letters. */
  | { readonly type: "stop" };

/** Why a message became a dead letter. */
export type SingletonProxyDropReason = "buffer-overflow" | "proxy-stopped";

/** Outputs of the proxy, to be performed in order. */
export type SingletonProxyOutput<M> =
  /** Ask `to` whether the singleton instance runs there; feed `identify-result`. */
  | { readonly type: "identify"; readonly to: UniqueAddress }
  | { readonly type: "deliver"; readonly to: UniqueAddress; readonly message: M }
  | {
      readonly type: "dead-letter";
      readonly message: M;
      readonly reason: SingletonProxyDropReason;
    }
  | { readonly type: "start-timer"; readonly key: string; readonly delayMs: number }
  | { readonly type: "cancel-timer"; readonly key: string }
  | { readonly type: "log"; readonly level: "debug" | "info" | "warn"; readonly text: string };

/** Counters of the proxy. */
export interface SingletonProxyStats {
  /** Messages waiting now. */
  readonly buffered: number;
  /** Messages dropped since creation (overflow and stop). */
  readonly droppedCount: number;
  /** Messages delivered since creation. */
  readonly deliveredCount: number;
}

/** The singleton proxy of one node (see the module comment). */
export class SingletonProxyMachine<M> {
  /** Validated settings. */
  readonly settings: Readonly<SingletonProxySettings>;
  private readonly scope: SingletonScope;
  private readonly buffer = new Deque<M>();
  private target: UniqueAddress | undefined;
  private located: UniqueAddress | undefined;
  private timerRunning = false;
  private stopped = false;
  private dropped = 0;
  private delivered = 0;
  private out: SingletonProxyOutput<M>[] = [];

  constructor(config: SingletonProxyConfig) {
    this.settings = resolveSingletonProxySettings(config.settings);
    this.scope = { role: config.role, dataCenter: config.dataCenter ?? DEFAULT_DATA_CENTER };
  }

  /** Where the instance was found, if it is located now. */
  get location(): UniqueAddress | undefined {
    return this.located;
  }

  /** Counters. */
  get stats(): SingletonProxyStats {
    return {
      buffered: this.buffer.length,
      droppedCount: this.dropped,
      deliveredCount: this.delivered,
    };
  }

  /** Feeds one input; returns the outputs to perform, in order. */
  handle(input: SingletonProxyInput<M>): SingletonProxyOutput<M>[] {
    this.out = [];
    if (!this.stopped) this.dispatch(input);
    else if (input.type === "send") this.drop(input.message, "proxy-stopped");
    const out = this.out;
    this.out = [];
    return out;
  }

  private dispatch(input: SingletonProxyInput<M>): void {
    switch (input.type) {
      case "members":
        this.onMembers(input.oldestFirst, input.unreachable ?? []);
        break;
      case "identify-result":
        this.onIdentifyResult(input.from, input.found);
        break;
      case "singleton-terminated":
        if (this.located !== undefined && uniqueAddressEquals(this.located, input.at))
          this.startIdentifying(`the instance at ${uniqueAddressToString(input.at)} terminated`);
        break;
      case "timer":
        this.onTimer(input.key);
        break;
      case "send":
        this.onSend(input.message);
        break;
      case "stop":
        this.onStop();
        break;
    }
  }

  private onMembers(all: readonly Member[], unreachable: readonly UniqueAddress[]): void {
    const skip = this.settings.skipUnreachable
      ? new Set(unreachable.map(uniqueAddressToString))
      : undefined;
    const oldest = oldestEligible(
      singletonMembersOf(all, this.scope),
      skip === undefined ? undefined : (m) => skip.has(uniqueAddressToString(m.uniqueAddress)),
    )?.uniqueAddress;
    const same =
      oldest === undefined || this.target === undefined
        ? oldest === this.target
        : uniqueAddressEquals(oldest, this.target);
    if (same) return;
    this.target = oldest;
    this.startIdentifying(
      `oldest is now ${oldest === undefined ? "(none)" : uniqueAddressToString(oldest)}`,
    );
  }

  /** Forget the location; identify on the current target, now and on every tick. */
  private startIdentifying(why: string): void {
    if (this.located !== undefined) this.log("info", `singleton location lost: ${why}`);
    this.located = undefined;
    this.cancelTimer();
    if (this.target === undefined) return;
    this.identify();
  }

  private identify(): void {
    if (this.target === undefined) return;
    this.emit({ type: "identify", to: this.target });
    this.timerRunning = true;
    this.emit({
      type: "start-timer",
      key: SINGLETON_PROXY_IDENTIFY_TIMER,
      delayMs: this.settings.singletonIdentificationIntervalMs,
    });
  }

  private onTimer(key: string): void {
    if (key !== SINGLETON_PROXY_IDENTIFY_TIMER || !this.timerRunning) return;
    this.timerRunning = false;
    if (this.located === undefined) this.identify();
  }

  private onIdentifyResult(from: UniqueAddress, found: boolean): void {
    if (!found || this.located !== undefined) return;
    if (this.target === undefined || !uniqueAddressEquals(from, this.target)) return;
    this.located = from;
    this.cancelTimer();
    this.log("info", `singleton located at ${uniqueAddressToString(from)}`);
    while (this.buffer.length > 0) this.deliver(from, this.buffer.shift() as M);
  }

  private onSend(message: M): void {
    if (this.located !== undefined) this.deliver(this.located, message);
    else if (this.settings.bufferSizeMax === 0) this.drop(message, "buffer-overflow");
    else {
      if (this.buffer.length >= this.settings.bufferSizeMax)
        this.drop(this.buffer.shift() as M, "buffer-overflow");
      this.buffer.push(message);
    }
  }

  private onStop(): void {
    this.stopped = true;
    this.cancelTimer();
    this.located = undefined;
    while (this.buffer.length > 0) this.drop(this.buffer.shift() as M, "proxy-stopped");
  }

  private deliver(to: UniqueAddress, message: M): void {
    this.delivered++;
    this.emit({ type: "deliver", to, message });
  }

  private drop(message: M, reason: SingletonProxyDropReason): void {
    this.dropped++;
    this.emit({ type: "dead-letter", message, reason });
  }

  private cancelTimer(): void {
    if (!this.timerRunning) return;
    this.timerRunning = false;
    this.emit({ type: "cancel-timer", key: SINGLETON_PROXY_IDENTIFY_TIMER });
  }

  private log(level: "debug" | "info" | "warn", text: string): void {
    this.emit({ type: "log", level, text });
  }

  private emit(output: SingletonProxyOutput<M>): void {
    this.out.push(output);
  }
}
