/**
 * Inputs, outputs, entity states and timer keys of the shard machine (shard-machine.ts).
 * Plain data: the driver feeds inputs (with the current time) and performs the outputs
 * in the order given. `M` is the entity message type; the machine never looks inside.
 */
import type { EntityId } from "../sharding/shard-id.js";
import type { RememberEntitiesBatch } from "./remember-entities.js";

/** Where the shard is. */
export const ShardPhase = {
  /**
   * Waiting for the shard lease (`lease-granted`) and then, with remember entities, for
   * `recovered-entities`; messages are buffered.
   */
  Recovering: "recovering",
  /** Normal operation. */
  Running: "running",
  /** Stopping every entity for a hand-off; messages go back to the region at the end. */
  HandingOff: "handing-off",
  /** Final: `shard-stopped` was emitted, or `shutdown` was fed. */
  Stopped: "stopped",
} as const;

/** A phase of the shard. */
export type ShardPhase = (typeof ShardPhase)[keyof typeof ShardPhase];

/** What the shard knows of one entity (entities it knows nothing of are absent). */
export const EntityState = {
  /** Remember entities: its "started" write is queued or in flight; no actor yet. */
  RememberingStart: "remembering-start",
  /** `start-entity-actor` was emitted; waiting for `entity-started`. Messages buffer. */
  Starting: "starting",
  /** The actor runs; messages go straight to it. */
  Active: "active",
  /** `stop-entity-actor` was emitted; waiting for `entity-terminated`. Messages buffer. */
  Passivating: "passivating",
  /** Remember entities: passivated; its "stopped" write is queued or in flight. */
  RememberingStop: "remembering-stop",
  /** Stopped unexpectedly; restarts when its restart timer fires or a message arrives. */
  Backoff: "backoff",
} as const;

/** A state of one entity. */
export type EntityState = (typeof EntityState)[keyof typeof EntityState];

/** The states in which an actor incarnation of the entity exists. */
export function isLive(state: EntityState): boolean {
  return (
    state === EntityState.Starting ||
    state === EntityState.Active ||
    state === EntityState.Passivating
  );
}

/** Why an entity is asked to stop. */
export type StopReason =
  /** The entity sent Passivate. */
  | "passivate"
  /** No message for passivateIdleAfterMs. */
  | "idle"
  /** Least recently used while the shard is over its active-entity limit. */
  | "limit"
  /** The shard is handed off. */
  | "hand-off";

/** Keys of the shard's fixed timers. At most one timer per key runs at a time. */
export const ShardTimer = {
  /** Look for idle entities. */
  IdleSweep: "idle-sweep",
  /** "constant" recovery strategy: start the next batch of remembered entities. */
  EntityRecovery: "entity-recovery",
  /** Rewrite a failed remember batch. */
  RememberRetry: "remember-retry",
  /** Hand-off took handOffTimeoutMs: force-stop what is left. */
  HandOffTimeout: "hand-off-timeout",
} as const;

/** Prefix of the per-entity restart timers (`entity-restart:<entityId>`). */
export const ENTITY_RESTART_TIMER_PREFIX = "entity-restart:";

/** The restart timer key of one entity. */
export function entityRestartTimer(entityId: EntityId): string {
  return `${ENTITY_RESTART_TIMER_PREFIX}${entityId}`;
}

/** Inputs of the shard machine. */
export type ShardInput<M> =
  /** A message for an entity of this shard (created on demand). */
  | { readonly type: "deliver"; readonly entityId: EntityId; readonly message: M }
  /** StartEntity: make sure the entity runs, without a message. */
  | { readonly type: "start-entity"; readonly entityId: EntityId }
  /** The actor asked for by `start-entity-actor` exists and can take messages. */
  | { readonly type: "entity-started"; readonly entityId: EntityId }
  /**
   * The entity's actor terminated. `failed`: it crashed (supervision stops it).
   * `passivated`: it stopped on purpose after being asked to; the machine also knows
   * this from its own `stop-entity-actor`, either is enough.
   */
  | {
      readonly type: "entity-terminated";
      readonly entityId: EntityId;
      readonly passivated: boolean;
      readonly failed: boolean;
    }
  /** Passivate from the entity: send it `stopMessage` (undefined: the default stop). */
  | { readonly type: "passivate"; readonly entityId: EntityId; readonly stopMessage?: M }
  /** A timer started by `start-timer` fired (and was not cancelled since). */
  | { readonly type: "timer"; readonly key: string }
  /** HandOff: stop every entity with `stopMessage` (undefined: the default stop). */
  | { readonly type: "hand-off"; readonly stopMessage?: M }
  /** The remember write `batchId` is durable. */
  | { readonly type: "remember-store-ack"; readonly batchId: number }
  /** The remember write `batchId` failed or timed out. */
  | { readonly type: "remember-store-failed"; readonly batchId: number }
  /** Remember entities: the remembered ids of this shard, loaded at shard start. */
  | { readonly type: "recovered-entities"; readonly entityIds: readonly EntityId[] }
  /** This shard's share of the region's active-entity limit (>= 1, or Infinity). */
  | { readonly type: "set-active-limit"; readonly limit: number }
  /** Stop at once (no hand-off): force-stop entities, hand messages back, stop. */
  | { readonly type: "shutdown" }
  /** Shard leases (config `leaseRequired`): the lease is held; entities may start. */
  | { readonly type: "lease-granted" }
  /**
   * Shard leases: the lease may be gone. Like `shutdown` (entities force-stopped, messages
   * handed back), then `shard-stopped`, so the region asks for the shard's home again.
   */
  | { readonly type: "lease-lost" };

/** A message handed back to the region. */
export interface ReturnedMessage<M> {
  readonly entityId: EntityId;
  readonly message: M;
}

/** Log levels of `log` outputs. */
export type ShardLogLevel = "debug" | "info" | "warn" | "error";

/** Outputs of the shard machine, to be performed in order. */
export type ShardOutput<M> =
  /** Create the entity's actor; then feed `entity-started` (or `entity-terminated`). */
  | { readonly type: "start-entity-actor"; readonly entityId: EntityId }
  | { readonly type: "send-to-entity"; readonly entityId: EntityId; readonly message: M }
  /** Send `stopMessage` (undefined: the default stop) to the entity; it then terminates. */
  | {
      readonly type: "stop-entity-actor";
      readonly entityId: EntityId;
      readonly stopMessage: M | undefined;
      readonly reason: StopReason;
    }
  /** Stop the actor now, whatever it is doing; it must not process another message. */
  | { readonly type: "force-stop-entity-actor"; readonly entityId: EntityId }
  /** The shard's buffers are full: the message goes to dead letters (count it). */
  | { readonly type: "buffer-overflow"; readonly entityId: EntityId; readonly message: M }
  /** Messages the shard could not deliver before stopping; the region routes them again. */
  | { readonly type: "return-to-region"; readonly messages: readonly ReturnedMessage<M>[] }
  /** Write the batch to the remember store; feed `remember-store-ack/failed(batchId)`. */
  | {
      readonly type: "write-remember";
      readonly batchId: number;
      readonly batch: RememberEntitiesBatch;
    }
  /** Start the timer `key`; feed `timer(key)` after delayMs. */
  | { readonly type: "start-timer"; readonly key: string; readonly delayMs: number }
  /** Cancel the timer `key`; it must not fire afterwards. */
  | { readonly type: "cancel-timer"; readonly key: string }
  /** Hand-off complete: every entity has terminated; report ShardStopped. */
  | { readonly type: "shard-stopped" }
  | { readonly type: "log"; readonly level: ShardLogLevel; readonly text: string };

/** Read-only counters of the machine, for drivers, metrics and tests. */
export interface ShardStats {
  /** Entities with an actor (starting, active or passivating). */
  readonly liveEntities: number;
  /** Entities counted against the active limit (starting or active). */
  readonly activeEntities: number;
  /** Messages held in the shard's buffers. */
  readonly bufferedMessages: number;
  /** Messages reported as `buffer-overflow` so far. */
  readonly overflowCount: number;
  readonly activeLimit: number;
}
