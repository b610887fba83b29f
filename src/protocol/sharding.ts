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
 * coordinator re-home a shard its old owner has restarted in the meantime).
 *
 * The `is...` guards check the shape of values decoded from a peer or read from a journal;
 * they never throw.
 */

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
