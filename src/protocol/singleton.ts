/**
 * The cluster singleton protocol (docs/singleton.md): what singleton managers tell each
 * other, how a proxy finds the instance, and the drivers' own messages
 * (cluster/singleton/cluster-singleton.ts). Plain data, discriminated on `type`; every
 * driver message type starts with `shardkit.singleton.` so a proxy tells them from the
 * user messages it forwards (`isSingletonProxyMsg`).
 *
 * The managers' exchange (one protocol per singleton name; the driver routes by name and
 * by the exact target incarnation, dropping a message addressed to another uid of the
 * same host:port):
 * - hand-over-to-me: the new oldest asks an older member that is leaving (or otherwise
 *   no longer eligible) to give the instance up. Sent and retried only to members the
 *   sender sees as permanently ineligible, so the receiver may answer it, in any state,
 *   by giving up the singleton for good.
 * - hand-over-in-progress: the old oldest has started stopping its instance.
 * - hand-over-done: the sender holds no instance and never will again.
 * - takeover-from-me: the old oldest tells the member it believes is the new oldest to
 *   start the hand-over (that member may not have noticed the change yet).
 *
 * The `is...` guards check the shape of values received from a peer; they never throw.
 */
import type { ReplyTo } from "./sharding.js";

// ---- manager <-> manager -------------------------------------------------------------------

/** A message between singleton managers (the manager machine's vocabulary). */
export type SingletonManagerMessage =
  | { readonly type: "hand-over-to-me" }
  | { readonly type: "hand-over-in-progress" }
  /**
   * `wasOldest`: the sender ran the instance at some point. Its own safety rule cleared
   * every member older than itself before that, so the receiver may treat them as
   * handed over too (no removal margin to wait for).
   */
  | { readonly type: "hand-over-done"; readonly wasOldest?: boolean }
  | { readonly type: "takeover-from-me" };

/** The message type names, for decoders and exhaustive checks. */
export const SINGLETON_MANAGER_MESSAGE_TYPES = [
  "hand-over-to-me",
  "hand-over-in-progress",
  "hand-over-done",
  "takeover-from-me",
] as const satisfies readonly SingletonManagerMessage["type"][];

/** A manager message on its way to another node's manager of the same singleton. */
export interface SingletonManagerEnvelope {
  readonly type: "shardkit.singleton.manager";
  /** The sender's incarnation (unique address string). */
  readonly from: string;
  /**
   * The incarnation it is meant for (unique address string). Remoting addresses a node
   * by host and port, so a new incarnation on the same port would otherwise take a
   * HandOverToMe meant for its removed predecessor and end its manager for good.
   */
  readonly to: string;
  readonly message: SingletonManagerMessage;
}

// ---- proxy <-> manager ---------------------------------------------------------------------

/** Proxy -> manager: does the instance run on your node? */
export interface SingletonIdentify {
  readonly type: "shardkit.singleton.identify";
  readonly replyTo: ReplyTo<SingletonIdentified>;
}

/** Manager -> proxy: the answer to SingletonIdentify (`instance` null: none runs here). */
export interface SingletonIdentified {
  readonly type: "shardkit.singleton.identified";
  /** The answering manager's node (unique address string). */
  readonly node: string;
  readonly instance: ReplyTo<unknown> | null;
}

// ---- the drivers' own messages -------------------------------------------------------------

/** The cluster state changed: feed the members again. */
export interface SingletonMembersChanged {
  readonly type: "shardkit.singleton.members";
}

/** A timer the machine started has fired. */
export interface SingletonTimerFired {
  readonly type: "shardkit.singleton.timer";
  readonly key: string;
}

/** Everything a manager receives. */
export type SingletonManagerMsg =
  | SingletonManagerEnvelope
  | SingletonIdentify
  | SingletonMembersChanged
  | SingletonTimerFired
  | { readonly type: "shardkit.singleton.instance-terminated" }
  | { readonly type: "shardkit.singleton.lease-result"; readonly ok: boolean }
  | { readonly type: "shardkit.singleton.lease-lost" }
  | { readonly type: "shardkit.singleton.self-downed" }
  | { readonly type: "shardkit.singleton.self-removed" };

/** Everything a proxy receives besides the user messages it forwards. */
export type SingletonProxyMsg =
  | SingletonIdentified
  | SingletonMembersChanged
  | SingletonTimerFired
  /** The located instance on `node` (unique address string) terminated. */
  | { readonly type: "shardkit.singleton.instance-gone"; readonly node: string };

// ---- shape guards --------------------------------------------------------------------------

type Fields = Record<string, unknown>;

const isStr = (v: unknown): v is string => typeof v === "string";

function isReplyTo(v: unknown): boolean {
  return (
    typeof v === "object" && v !== null && typeof (v as { tell?: unknown }).tell === "function"
  );
}

/** True if `value` is a manager message (wasOldest, when present, a boolean). */
export function isSingletonManagerMessage(value: unknown): value is SingletonManagerMessage {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Fields;
  if (!(SINGLETON_MANAGER_MESSAGE_TYPES as readonly unknown[]).includes(v.type)) return false;
  return v.wasOldest === undefined || typeof v.wasOldest === "boolean";
}

const MANAGER_FIELDS: Readonly<Record<SingletonManagerMsg["type"], (v: Fields) => boolean>> = {
  "shardkit.singleton.manager": (v) =>
    isStr(v.from) && isStr(v.to) && isSingletonManagerMessage(v.message),
  "shardkit.singleton.identify": (v) => isReplyTo(v.replyTo),
  "shardkit.singleton.members": () => true,
  "shardkit.singleton.timer": (v) => isStr(v.key),
  "shardkit.singleton.instance-terminated": () => true,
  "shardkit.singleton.lease-result": (v) => typeof v.ok === "boolean",
  "shardkit.singleton.lease-lost": () => true,
  "shardkit.singleton.self-downed": () => true,
  "shardkit.singleton.self-removed": () => true,
};

const PROXY_FIELDS: Readonly<Record<SingletonProxyMsg["type"], (v: Fields) => boolean>> = {
  "shardkit.singleton.identified": (v) =>
    isStr(v.node) && (v.instance === null || isReplyTo(v.instance)),
  "shardkit.singleton.members": () => true,
  "shardkit.singleton.timer": (v) => isStr(v.key),
  "shardkit.singleton.instance-gone": (v) => isStr(v.node),
};

function hasShape(table: Readonly<Record<string, (v: Fields) => boolean>>, v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  const type = (v as Fields).type;
  if (!isStr(type) || !Object.hasOwn(table, type)) return false;
  return (table[type] as (v: Fields) => boolean)(v as Fields);
}

/** True if `value` has the shape of a message a singleton manager handles. */
export function isSingletonManagerMsg(value: unknown): value is SingletonManagerMsg {
  return hasShape(MANAGER_FIELDS, value);
}

/**
 * True if `value` has the shape of a proxy's own message: what tells a proxy's traffic
 * from the user messages it forwards to the instance.
 */
export function isSingletonProxyMsg(value: unknown): value is SingletonProxyMsg {
  return hasShape(PROXY_FIELDS, value);
}
