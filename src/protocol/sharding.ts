/**
 * The shard coordinator protocol (docs/sharding-coordinator.md, "Protocol"): the
 * messages between shard regions (and proxies) and the coordinator singleton, and the
 * coordinator's persistent events and snapshot. Plain data only (discriminated unions on
 * `type`), so the same values travel through the codec, the journal and the simulator.
 *
 * Identifiers are opaque strings: a region id is whatever the driver uses to address a
 * region (typically its actor path plus incarnation), a member is a unique address string
 * (`protocol://system@host:port#uid`), a shard id is the extractor's shard id.
 *
 * Hand-off messages carry a `handOffId` that the region echoes back. Each attempt to hand
 * off a shard gets a new id, so an acknowledgement or ShardStopped that belongs to an
 * earlier, aborted attempt can never complete a later one (which could otherwise let the
 * coordinator re-home a shard its old owner has restarted in the meantime). Attempts
 * count from 1; the id MOVED_AWAY_HAND_OFF_ID (0) is a HandOff of a leased shard the
 * coordinator already gave a new home while its old region was unreachable.
 *
 * The `is...` guards check the shape of values decoded from a peer or read from a journal;
 * they never throw.
 */

import { isTraceState, parseTraceParent, type W3CTraceContext } from "./trace-context.js";

/** Opaque identifier of a shard region or proxy (how the driver addresses it). */
export type RegionId = string;

type ShardId = string;

// ---- region / proxy -> coordinator ---------------------------------------------------------

/**
 * A region asks to be registered. `member` is the unique address of the node it runs on.
 * `hostedShards` lists the shards it currently runs; a coordinator in regions-recovery
 * mode rebuilds its allocation table from these (others only log disagreements).
 */
export interface RegisterMsg {
  readonly type: "register";
  readonly region: RegionId;
  readonly member: string;
  readonly hostedShards: readonly ShardId[];
}

/** A proxy (routes only, never hosts shards) asks to be registered. */
export interface RegisterProxyMsg {
  readonly type: "register-proxy";
  readonly proxy: RegionId;
  readonly member: string;
}

/** Where does `shard` live? Sent by a region or proxy (`from`). */
export interface GetShardHomeMsg {
  readonly type: "get-shard-home";
  readonly shard: ShardId;
  readonly from: RegionId;
}

/** The owner confirms it started `shard` (answer to HostShard). */
export interface ShardStartedMsg {
  readonly type: "shard-started";
  readonly shard: ShardId;
  readonly from: RegionId;
}

/** A region (or proxy) buffers messages for `shard` from now on (answer to BeginHandOff). */
export interface BeginHandOffAckMsg {
  readonly type: "begin-hand-off-ack";
  readonly shard: ShardId;
  readonly handOffId: number;
  readonly from: RegionId;
}

/** The owner stopped every entity of `shard` (answer to HandOff). */
export interface ShardStoppedMsg {
  readonly type: "shard-stopped";
  readonly shard: ShardId;
  readonly handOffId: number;
  readonly from: RegionId;
}

/** A region wants to stop: hand off all its shards and allocate nothing more to it. */
export interface GracefulShutdownReqMsg {
  readonly type: "graceful-shutdown-req";
  readonly region: RegionId;
}

/** A region has stopped (with all its shards): treated like its termination. */
export interface RegionStoppedMsg {
  readonly type: "region-stopped";
  readonly region: RegionId;
}

/** Every message a region or proxy sends to the coordinator. */
export type CoordinatorCommand =
  | RegisterMsg
  | RegisterProxyMsg
  | GetShardHomeMsg
  | ShardStartedMsg
  | BeginHandOffAckMsg
  | ShardStoppedMsg
  | GracefulShutdownReqMsg
  | RegionStoppedMsg;

// ---- coordinator -> region / proxy ---------------------------------------------------------

/** Registration accepted by the coordinator `coordinator`. */
export interface RegisterAckMsg {
  readonly type: "register-ack";
  readonly coordinator: RegionId;
}

/** `shard` lives in `region` (answer to GetShardHome). */
export interface ShardHomeMsg {
  readonly type: "shard-home";
  readonly shard: ShardId;
  readonly region: RegionId;
}

/** Several homes at once: each entry lists shards that live in its region. */
export interface ShardHomesMsg {
  readonly type: "shard-homes";
  readonly homes: readonly { readonly region: RegionId; readonly shards: readonly ShardId[] }[];
}

/** To the owner: start `shard` and answer ShardStarted (resent until it does). */
export interface HostShardMsg {
  readonly type: "host-shard";
  readonly shard: ShardId;
}

/** To every region and proxy: buffer messages for `shard` and answer BeginHandOffAck. */
export interface BeginHandOffMsg {
  readonly type: "begin-hand-off";
  readonly shard: ShardId;
  readonly handOffId: number;
}

/** To the owner: stop `shard` (its entities get the stop message), then ShardStopped. */
export interface HandOffMsg {
  readonly type: "hand-off";
  readonly shard: ShardId;
  readonly handOffId: number;
}

/** Every message the coordinator sends to a region or proxy. */
export type RegionCommand =
  | RegisterAckMsg
  | ShardHomeMsg
  | ShardHomesMsg
  | HostShardMsg
  | BeginHandOffMsg
  | HandOffMsg;

// ---- persistent events and snapshot --------------------------------------------------------

/** The coordinator's persistent events; replaying them in order rebuilds its state. */
export type CoordinatorEvent =
  | { readonly type: "shard-region-registered"; readonly region: RegionId; readonly member: string }
  | {
      readonly type: "shard-region-proxy-registered";
      readonly proxy: RegionId;
      readonly member: string;
    }
  | { readonly type: "shard-home-allocated"; readonly shard: ShardId; readonly region: RegionId }
  | { readonly type: "shard-home-deallocated"; readonly shard: ShardId }
  | { readonly type: "shard-region-terminated"; readonly region: RegionId }
  | { readonly type: "shard-region-proxy-terminated"; readonly proxy: RegionId };

/** The coordinator's durable state in one value (what a snapshot store keeps). */
export interface CoordinatorSnapshot {
  /** Registered regions in registration order, each with its shards in allocation order. */
  readonly regions: readonly {
    readonly region: RegionId;
    readonly member: string;
    readonly shards: readonly ShardId[];
  }[];
  readonly proxies: readonly { readonly proxy: RegionId; readonly member: string }[];
  /** Remember-entities only: shards that lost their home and must be allocated again. */
  readonly unallocatedShards: readonly ShardId[];
}

// ---- shape guards --------------------------------------------------------------------------

type Fields = Record<string, unknown>;

function isRecord(v: unknown): v is Fields {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isStr(v: unknown): v is string {
  return typeof v === "string";
}

/**
 * The `handOffId` of a HandOff telling a region to stop a leased shard that the
 * coordinator moved while the region's member was unreachable (the coordinator settings'
 * unreachableMoveAfterMs). The region stops it as in any hand-off, which releases the
 * lease so the new home can start it; its ShardStopped with this id completes no attempt.
 */
export const MOVED_AWAY_HAND_OFF_ID = 0;

function isId(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function isStrList(v: unknown): v is readonly string[] {
  return Array.isArray(v) && v.every(isStr);
}

const COMMAND_FIELDS: Readonly<Record<CoordinatorCommand["type"], (v: Fields) => boolean>> = {
  register: (v) => isStr(v.region) && isStr(v.member) && isStrList(v.hostedShards),
  "register-proxy": (v) => isStr(v.proxy) && isStr(v.member),
  "get-shard-home": (v) => isStr(v.shard) && isStr(v.from),
  "shard-started": (v) => isStr(v.shard) && isStr(v.from),
  "begin-hand-off-ack": (v) => isStr(v.shard) && isId(v.handOffId) && isStr(v.from),
  "shard-stopped": (v) => isStr(v.shard) && isId(v.handOffId) && isStr(v.from),
  "graceful-shutdown-req": (v) => isStr(v.region),
  "region-stopped": (v) => isStr(v.region),
};

const REGION_FIELDS: Readonly<Record<RegionCommand["type"], (v: Fields) => boolean>> = {
  "register-ack": (v) => isStr(v.coordinator),
  "shard-home": (v) => isStr(v.shard) && isStr(v.region),
  "shard-homes": (v) =>
    Array.isArray(v.homes) &&
    v.homes.every((h: unknown) => isRecord(h) && isStr(h.region) && isStrList(h.shards)),
  "host-shard": (v) => isStr(v.shard),
  "begin-hand-off": (v) => isStr(v.shard) && isId(v.handOffId),
  "hand-off": (v) => isStr(v.shard) && isId(v.handOffId),
};

const EVENT_FIELDS: Readonly<Record<CoordinatorEvent["type"], (v: Fields) => boolean>> = {
  "shard-region-registered": (v) => isStr(v.region) && isStr(v.member),
  "shard-region-proxy-registered": (v) => isStr(v.proxy) && isStr(v.member),
  "shard-home-allocated": (v) => isStr(v.shard) && isStr(v.region),
  "shard-home-deallocated": (v) => isStr(v.shard),
  "shard-region-terminated": (v) => isStr(v.region),
  "shard-region-proxy-terminated": (v) => isStr(v.proxy),
};

function hasShape(table: Readonly<Record<string, (v: Fields) => boolean>>, v: unknown): boolean {
  if (!isRecord(v) || !isStr(v.type) || !Object.hasOwn(table, v.type)) return false;
  return (table[v.type] as (v: Fields) => boolean)(v);
}

/** True if `value` has the shape of a message to the coordinator. */
export function isCoordinatorCommand(value: unknown): value is CoordinatorCommand {
  return hasShape(COMMAND_FIELDS, value);
}

/** True if `value` has the shape of a message from the coordinator to a region. */
export function isRegionCommand(value: unknown): value is RegionCommand {
  return hasShape(REGION_FIELDS, value);
}

/** True if `value` has the shape of a coordinator event. */
export function isCoordinatorEvent(value: unknown): value is CoordinatorEvent {
  return hasShape(EVENT_FIELDS, value);
}

// ---- entity messages -----------------------------------------------------------------------

/**
 * The one shape of a message on its way to an entity: what an EntityRef gives its region,
 * what a region gives a local shard (as the shard's delivery command, the same object)
 * and what it forwards to the region that hosts the shard (on the wire in the compact
 * form of {@link EntityEnvelopeWire}). The discriminant `type` is a prototype getter, so
 * an envelope holds only its fields.
 *
 * `traced` is true only when `message` is a traced message (a span's context travels with
 * it, cluster/sharding/traced-message.ts): regions and shards test this field, which
 * costs nothing measurable, instead of the message's class on every delivery.
 */
export class EntityEnvelope<M = unknown> {
  constructor(
    readonly shardId: ShardId,
    readonly entityId: string,
    readonly message: M,
    readonly traced: boolean = false,
  ) {}

  get type(): typeof ENTITY_ENVELOPE {
    return ENTITY_ENVELOPE;
  }
}

/** The `type` of an {@link EntityEnvelope}. */
export const ENTITY_ENVELOPE = "shardkit.entity-envelope";

/** `type` of {@link StartEntity}. */
export const START_ENTITY = "shardkit.StartEntity";

/** Starts an entity without a user message (remember-entities, or a user's explicit start). */
export interface StartEntity {
  readonly type: typeof START_ENTITY;
  readonly entityId: string;
}

export function StartEntity(entityId: string): StartEntity {
  return { type: START_ENTITY, entityId };
}

export function isStartEntity(message: unknown): message is StartEntity {
  return (
    typeof message === "object" &&
    message !== null &&
    (message as { type?: unknown }).type === START_ENTITY &&
    typeof (message as { entityId?: unknown }).entityId === "string"
  );
}

/** First element of the wire form of a forwarded envelope. */
const FORWARD_TAG = "shardkit.fwd";

/** The wire form of an {@link EntityEnvelope} sent from one region to another. */
type ForwardWire = readonly [
  tag: typeof FORWARD_TAG,
  shard: ShardId,
  entityId: string,
  message: unknown,
];

/**
 * Codec of the forward message, the bulk of remote sharding traffic: an envelope travels
 * as a 4-tuple rather than a keyed object (a third of the bytes, less to pack and
 * unpack, and plain data, so the serializer's fast path takes it). Only the region's
 * remote send and receive use it; drivers and machines see {@link EntityEnvelope}.
 */
export const EntityEnvelopeWire = {
  encode(envelope: EntityEnvelope): ForwardWire {
    return [FORWARD_TAG, envelope.shardId, envelope.entityId, envelope.message];
  },
  /** The envelope a received value encodes, or undefined when it is not a forward. */
  decode(value: unknown): EntityEnvelope | undefined {
    if (!Array.isArray(value) || value.length !== 4 || value[0] !== FORWARD_TAG) return undefined;
    const [, shardId, entityId, message] = value as unknown[];
    if (typeof shardId !== "string" || typeof entityId !== "string") return undefined;
    return new EntityEnvelope(shardId, entityId, message);
  },
  /**
   * The traced form of a forward (see {@link TracedForwardWire}); sent instead of the
   * 4-tuple only when the message is traced, so untraced traffic has not one byte more.
   */
  encodeTraced(envelope: EntityEnvelope, trace: W3CTraceContext): TracedForwardWire {
    const fwd: TracedForwardWire[typeof FORWARD_TAG] =
      trace.tracestate === undefined
        ? [envelope.shardId, trace.traceparent]
        : [envelope.shardId, trace.traceparent, trace.tracestate];
    return { entityId: envelope.entityId, message: envelope.message, [FORWARD_TAG]: fwd };
  },
  /**
   * The envelope and trace context of a received traced forward, or undefined when
   * `value` is not one. A malformed trace context is dropped (`trace` undefined): the
   * message still goes to its entity, untraced.
   */
  decodeTraced(
    value: unknown,
  ):
    | { readonly envelope: EntityEnvelope; readonly trace: W3CTraceContext | undefined }
    | undefined {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const fwd = (value as { [FORWARD_TAG]?: unknown })[FORWARD_TAG];
    if (!Array.isArray(fwd) || fwd.length < 2) return undefined;
    const { entityId, message } = value as { entityId?: unknown; message?: unknown };
    const [shardId, traceparent, tracestate] = fwd as unknown[];
    if (typeof shardId !== "string" || typeof entityId !== "string") return undefined;
    const envelope = new EntityEnvelope(shardId, entityId, message);
    if (parseTraceParent(traceparent) === undefined) return { envelope, trace: undefined };
    const trace: W3CTraceContext = isTraceState(tracestate)
      ? { traceparent: traceparent as string, tracestate }
      : { traceparent: traceparent as string };
    return { envelope, trace };
  },
};

/**
 * The wire form of a traced forward: a ShardingEnvelope (`{ entityId, message }`) plus
 * the key `"shardkit.fwd"` holding `[shard, traceparent, tracestate?]`. A member of a
 * version without tracing does not know the key and routes the value as the
 * ShardingEnvelope it also is: an `init` type (hash routing) finds the same shard and
 * delivers the message untraced, nothing is refused (docs/observability.md, "Rolling
 * upgrades").
 */
export interface TracedForwardWire {
  readonly entityId: string;
  readonly message: unknown;
  readonly [FORWARD_TAG]:
    | readonly [shard: ShardId, traceparent: string]
    | readonly [shard: ShardId, traceparent: string, tracestate: string];
}

// ---- driver messages -----------------------------------------------------------------------
//
// What the sharding actors (regions, shards, the coordinator) tell each other and
// themselves, besides entity envelopes. Every `type` starts with "shardkit." so that none
// is taken for a user message (a region also receives those).

/** Where a query's answer goes: an actor ref, as far as the protocol needs it. */
export interface ReplyTo<T> {
  tell(message: T): void;
}

/** Messages between regions and the coordinator (they travel through remoting). */
export type ShardingMsg =
  /** Region -> coordinator. */
  | { readonly type: "shardkit.to-coordinator"; readonly cmd: CoordinatorCommand }
  /** Coordinator -> region. */
  | {
      readonly type: "shardkit.from-coordinator";
      readonly from: RegionId;
      readonly cmd: RegionCommand;
    }
  /** Region -> coordinator (through the singleton proxy): who are you? */
  | {
      readonly type: "shardkit.identify-coordinator";
      readonly replyTo: ReplyTo<ShardingMsg>;
    }
  | { readonly type: "shardkit.coordinator-is"; readonly id: RegionId }
  /** Anyone -> coordinator: the registered regions. */
  | { readonly type: "shardkit.get-regions"; readonly replyTo: ReplyTo<readonly RegionId[]> }
  /** Anyone -> coordinator: the hand-offs in progress. */
  | {
      readonly type: "shardkit.get-hand-offs";
      readonly replyTo: ReplyTo<readonly ShardHandOffView[]>;
    }
  /** Region -> region -> coordinator: a command relayed by the receiver (hand-off barrier). */
  | {
      readonly type: "shardkit.relay-to-coordinator";
      readonly coordinator: RegionId;
      readonly cmd: CoordinatorCommand;
    };

/** A hand-off in progress at the coordinator (queries). */
export interface ShardHandOffView {
  readonly shardId: ShardId;
  /** The region handing the shard off (its current home). */
  readonly fromRegion: RegionId;
  readonly reason: "rebalance" | "shutdown";
  /** "begin": waiting for every region to acknowledge; "hand-off": the home is stopping it. */
  readonly phase: "begin" | "hand-off";
  /** When the coordinator started it (its clock, ms). */
  readonly startedAtMs: number;
}

/** What a region reports about itself (queries). */
export interface RegionState {
  readonly region: RegionId;
  readonly shards: readonly { readonly shardId: ShardId; readonly entityIds: readonly string[] }[];
}

/** Queries and control messages a region accepts (besides entity messages). */
export type RegionControl =
  | {
      readonly type: "shardkit.region.get-state";
      readonly timeoutMs: number;
      readonly replyTo: ReplyTo<RegionState>;
    }
  | {
      readonly type: "shardkit.region.get-home";
      readonly shard: ShardId;
      readonly replyTo: ReplyTo<{ readonly region: RegionId | null }>;
    }
  | { readonly type: "shardkit.region.graceful-shutdown"; readonly replyTo: ReplyTo<"stopped"> }
  | { readonly type: "shardkit.region.self-downed" }
  /** Stop now without hand-off: a graceful shutdown that did not finish in its phase. */
  | { readonly type: "shardkit.region.stop" };

/** What a shard tells its region (the parent). */
export type ShardReport =
  | {
      readonly type: "shardkit.shard-returned";
      readonly shard: ShardId;
      readonly messages: readonly { readonly entityId: string; readonly message: unknown }[];
    }
  | { readonly type: "shardkit.shard-stopped"; readonly shard: ShardId }
  | { readonly type: "shardkit.shard-started"; readonly shard: ShardId };

/** What a region tells itself (timers, membership, the coordinator's termination). */
export type RegionSelfMsg =
  | { readonly type: "shardkit.region.timer"; readonly key: string }
  | { readonly type: "shardkit.region.node-removed"; readonly node: string }
  | { readonly type: "shardkit.region.coordinator-gone"; readonly id: RegionId };

/** Every message of a region besides entity messages (envelopes and user messages). */
export type RegionMsg = ShardingMsg | RegionControl | ShardReport | RegionSelfMsg;

/** Commands of a shard actor: an entity envelope, or one of these. */
export type ShardCommand =
  | EntityEnvelope
  | { readonly type: "shardkit.shard.hand-off" }
  | { readonly type: "shardkit.shard.shutdown" }
  | {
      readonly type: "shardkit.shard.passivate";
      readonly entityId: string;
      readonly stopMessage?: unknown;
    }
  | { readonly type: "shardkit.shard.timer"; readonly key: string }
  | { readonly type: "shardkit.shard.stop" }
  | { readonly type: "shardkit.shard.entities"; readonly replyTo: ReplyTo<readonly string[]> }
  | { readonly type: "shardkit.shard.set-active-limit"; readonly limit: number }
  | {
      /** Shard leases: the answer to one acquire-or-renew request (shard-actor.ts). */
      readonly type: "shardkit.shard.lease-result";
      readonly sentAtMs: number;
      readonly token: number | undefined;
      readonly error?: string;
    }
  | ShardRememberResult;

/** Results of the remember-entities store, fed back to the shard actor. */
export type ShardRememberResult =
  | { readonly type: "shardkit.shard.remember-loaded"; readonly entityIds: readonly string[] }
  | { readonly type: "shardkit.shard.remember-load-failed"; readonly error: unknown }
  | { readonly type: "shardkit.shard.remember-load-retry" }
  | { readonly type: "shardkit.shard.remember-written"; readonly batchId: number }
  | {
      readonly type: "shardkit.shard.remember-write-failed";
      readonly batchId: number;
      readonly error: unknown;
    };

function isReplyTo(v: unknown): boolean {
  return (
    typeof v === "object" && v !== null && typeof (v as { tell?: unknown }).tell === "function"
  );
}

const SHARDING_MSG_FIELDS: Readonly<Record<ShardingMsg["type"], (v: Fields) => boolean>> = {
  "shardkit.to-coordinator": (v) => isCoordinatorCommand(v.cmd),
  "shardkit.from-coordinator": (v) => isStr(v.from) && isRegionCommand(v.cmd),
  "shardkit.identify-coordinator": (v) => isReplyTo(v.replyTo),
  "shardkit.coordinator-is": (v) => isStr(v.id),
  "shardkit.get-regions": (v) => isReplyTo(v.replyTo),
  "shardkit.get-hand-offs": (v) => isReplyTo(v.replyTo),
  "shardkit.relay-to-coordinator": (v) => isStr(v.coordinator) && isCoordinatorCommand(v.cmd),
};

const REGION_MSG_FIELDS: Readonly<Record<RegionMsg["type"], (v: Fields) => boolean>> = {
  ...SHARDING_MSG_FIELDS,
  "shardkit.region.get-state": (v) => isId(v.timeoutMs) && isReplyTo(v.replyTo),
  "shardkit.region.get-home": (v) => isStr(v.shard) && isReplyTo(v.replyTo),
  "shardkit.region.graceful-shutdown": (v) => isReplyTo(v.replyTo),
  "shardkit.region.self-downed": () => true,
  "shardkit.region.stop": () => true,
  "shardkit.shard-returned": (v) => isStr(v.shard) && Array.isArray(v.messages),
  "shardkit.shard-stopped": (v) => isStr(v.shard),
  "shardkit.shard-started": (v) => isStr(v.shard),
  "shardkit.region.timer": (v) => isStr(v.key),
  "shardkit.region.node-removed": (v) => isStr(v.node),
  "shardkit.region.coordinator-gone": (v) => isStr(v.id),
};

/** True if `value` has the shape of a message between regions and the coordinator. */
export function isShardingMsg(value: unknown): value is ShardingMsg {
  return hasShape(SHARDING_MSG_FIELDS, value);
}

/**
 * True if `value` has the shape of a region's own message (not an entity message): what
 * tells a region's control traffic from the user messages it routes.
 */
export function isRegionMsg(value: unknown): value is RegionMsg {
  return hasShape(REGION_MSG_FIELDS, value);
}
