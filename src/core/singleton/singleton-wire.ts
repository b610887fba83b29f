/**
 * The decisions of the singleton drivers between the wire and the machines
 * (protocol/singleton.ts <-> singleton-manager.ts, singleton-proxy.ts), pure so they are
 * tested on their own: which envelope a `send` output becomes, which machine input (if
 * any) a received envelope is, and which proxies a manager tells when its instance
 * starts.
 */
import {
  SINGLETON_MANAGER_MESSAGE_TYPES,
  type SingletonManagerEnvelope,
  type SingletonManagerMessage,
} from "../../protocol/singleton.js";
import {
  parseUniqueAddress,
  type UniqueAddress,
  uniqueAddressToString,
} from "../membership/unique-address.js";
import type { SingletonMessageInput } from "./singleton-manager-types.js";

/** The message as it travels: `wasOldest` only on hand-over-done, and always a boolean there. */
function normalised(message: SingletonManagerMessage): SingletonManagerMessage {
  return message.type === "hand-over-done"
    ? { type: message.type, wasOldest: message.wasOldest === true }
    : { type: message.type };
}

/** The envelope of a manager's `send(to, message)` output, sent by `from`. */
export function managerEnvelope(
  from: UniqueAddress,
  to: UniqueAddress,
  message: SingletonManagerMessage,
): SingletonManagerEnvelope {
  return {
    type: "shardkit.singleton.manager",
    from: uniqueAddressToString(from),
    to: uniqueAddressToString(to),
    message: normalised(message),
  };
}

/** The unique address a node string names, or undefined when it names none. */
export function parseNode(text: string): UniqueAddress | undefined {
  try {
    return parseUniqueAddress(text);
  } catch {
    return undefined;
  }
}

/**
 * The machine input a received envelope is for the manager of `self` (unique address
 * string), or undefined when it is to be dropped: meant for another incarnation on the
 * same host:port, from a sender that is not a unique address, or of an unknown type.
 */
export function managerInputOf(
  envelope: SingletonManagerEnvelope,
  self: string,
): SingletonMessageInput | undefined {
  if (envelope.to !== self) return undefined;
  if (!(SINGLETON_MANAGER_MESSAGE_TYPES as readonly string[]).includes(envelope.message.type))
    return undefined;
  const from = parseNode(envelope.from);
  if (from === undefined) return undefined;
  return { ...normalised(envelope.message), from };
}

/**
 * Bound of the proxies a manager without an instance remembers, to tell them at once
 * when its instance starts (one proxy per member and singleton; more fall back to their
 * identification ticks).
 */
export const IDENTIFY_WAITERS_MAX = 10_000;

/**
 * The proxies that identified a manager while no instance ran there, by key (a proxy's
 * path), told as soon as the instance starts (a new shard coordinator's regions then
 * register at once, not at their next identification tick). Nobody waits once the
 * manager has ended: it never starts an instance.
 */
export class IdentifyWaiters<R> {
  private readonly waiting = new Map<string, R>();

  constructor(private readonly max: number = IDENTIFY_WAITERS_MAX) {}

  /** How many wait. */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * A proxy identified: it waits when no instance runs and the manager has not ended,
   * while fewer than the bound wait. Returns whether it waits.
   */
  identified(key: string, replyTo: R, instanceRuns: boolean, ended: boolean): boolean {
    if (instanceRuns || ended || this.waiting.size >= this.max) return false;
    this.waiting.set(key, replyTo);
    return true;
  }

  /** The waiting proxies, in the order they first asked; none wait afterwards. */
  takeAll(): R[] {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    return all;
  }

  /** Forgets every waiting proxy (the manager ended). */
  clear(): void {
    this.waiting.clear();
  }
}
