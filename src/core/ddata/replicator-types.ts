/**
 * Types of the replicator (docs/distributed-data.md): consistency levels, settings, the
 * envelope a replica keeps per key, the messages between replicators and the typed
 * failures of get / update / delete.
 */
import { ShardkitError } from "../../base/errors.js";
import { bool, int, ms, type RulesOf, resolveSettings } from "../../base/settings.js";
import type { ReplicatedData } from "./replicated-data.js";

/**
 * How many replicas (this one included) must answer a read or acknowledge a write:
 * `local` (this one), `from` n, `majority` (more than half of the replicas, at least
 * `minCap`), `all`. Capped at the number of replicas.
 */
export type Consistency =
  | { readonly level: "local" }
  | { readonly level: "from"; readonly n: number }
  | { readonly level: "majority"; readonly minCap?: number }
  | { readonly level: "all" };

export const LOCAL: Consistency = Object.freeze({ level: "local" });
export const MAJORITY: Consistency = Object.freeze({ level: "majority" });
export const ALL: Consistency = Object.freeze({ level: "all" });
export function consistencyFrom(n: number): Consistency {
  return { level: "from", n };
}
export function majority(minCap = 0): Consistency {
  return { level: "majority", minCap };
}

/** How many replicas must take part (this one included), out of `replicas`. */
export function requiredReplicas(c: Consistency, replicas: number): number {
  switch (c.level) {
    case "local":
      return 1;
    case "from":
      return Math.max(1, Math.min(c.n, replicas));
    case "majority":
      return Math.min(replicas, Math.max(c.minCap ?? 0, Math.floor(replicas / 2) + 1));
    case "all":
      return replicas;
  }
}

/** Replicator settings; every timing in ms, every bound named. */
export interface ReplicatorSettings {
  /** Interval of anti-entropy gossip (digests to one random replica). */
  readonly gossipIntervalMs: number;
  /** Interval at which accumulated deltas are sent to the other replicas. */
  readonly deltaPropagationIntervalMs: number;
  /** Interval at which subscribers are told about changed keys. */
  readonly notifySubscribersIntervalMs: number;
  /** Interval of the pruning of removed members' data. */
  readonly pruningIntervalMs: number;
  /** How long a "pruning performed" marker is kept (stale data of the member is dropped meanwhile). */
  readonly pruningMarkerTimeToLiveMs: number;
  /** Timeout of get / update / delete when the call does not give one. */
  readonly operationTimeoutMs: number;
  /** Digests per gossip status message (more keys: the status is sent in chunks). */
  readonly gossipDigestsPerMessageMax: number;
  /** Size bound of one gossip or delta message, in serialized bytes (entries are split). */
  readonly messageBytesMax: number;
  /** Number of keys a replicator holds at most (updates of new keys beyond it fail). */
  readonly keysMax: number;
  /** Send deltas (true) or only full states through gossip (false). */
  readonly deltaCrdtEnabled: boolean;
}

export const DEFAULT_REPLICATOR_SETTINGS: ReplicatorSettings = Object.freeze({
  gossipIntervalMs: 2_000,
  deltaPropagationIntervalMs: 200,
  notifySubscribersIntervalMs: 500,
  pruningIntervalMs: 30_000,
  pruningMarkerTimeToLiveMs: 6 * 3_600_000,
  operationTimeoutMs: 5_000,
  gossipDigestsPerMessageMax: 500,
  messageBytesMax: 128 * 1024,
  keysMax: 100_000,
  deltaCrdtEnabled: true,
});

const RULES: RulesOf<ReplicatorSettings> = {
  gossipIntervalMs: ms(1),
  deltaPropagationIntervalMs: ms(1),
  notifySubscribersIntervalMs: ms(1),
  pruningIntervalMs: ms(1),
  pruningMarkerTimeToLiveMs: ms(0),
  operationTimeoutMs: ms(1),
  gossipDigestsPerMessageMax: int(1, 1_000_000),
  messageBytesMax: int(1024, 64 * 1024 * 1024),
  keysMax: int(1),
  deltaCrdtEnabled: bool(),
};

/** @throws ConfigError naming the key (prefix `ddata.`). */
export function resolveReplicatorSettings(
  overrides: Partial<ReplicatorSettings> | undefined,
): Readonly<ReplicatorSettings> {
  return resolveSettings("ddata.", DEFAULT_REPLICATOR_SETTINGS, RULES, overrides);
}

/** Pruning progress of a removed member's data in one key. */
export type PruningMarker =
  | { readonly state: "init"; readonly owner: string; readonly seen: readonly string[] }
  | { readonly state: "performed" };

/** Marks a deleted key (deleted keys cannot be used again). */
export const DELETED = "deleted" as const;

/** What a replica holds for one key. */
export interface Envelope {
  readonly data: ReplicatedData | typeof DELETED;
  /** Removed member -> pruning progress. */
  readonly pruning: ReadonlyMap<string, PruningMarker>;
}

/** Messages between replicators (data still as values; the driver serializes them). */
export type ReplicatorMessage =
  | { readonly t: "read"; readonly id: number; readonly key: string }
  | { readonly t: "read-result"; readonly id: number; readonly env?: Envelope }
  | { readonly t: "write"; readonly id: number; readonly key: string; readonly env: Envelope }
  | { readonly t: "write-ack"; readonly id: number }
  | { readonly t: "delta"; readonly entries: readonly (readonly [string, ReplicatedData])[] }
  | {
      readonly t: "status";
      readonly chunk: number;
      readonly totChunks: number;
      readonly digests: readonly (readonly [string, string])[];
    }
  | {
      readonly t: "gossip";
      readonly entries: readonly (readonly [string, Envelope])[];
      /** Keys the sender lacks or differs on: send them back. */
      readonly want: readonly string[];
    };

/** A write did not reach enough replicas in time (it stays applied locally and spreads later). */
export class UpdateTimeoutError extends ShardkitError {
  constructor(key: string, timeoutMs: number, acks: number, required: number) {
    super(
      "DDATA_UPDATE_TIMEOUT",
      `update of "${key}" timed out after ${timeoutMs} ms (${acks} of ${required} replicas)`,
      { key, timeoutMs, acks, required },
    );
  }
}

/** A read did not get enough answers in time. */
export class GetFailureError extends ShardkitError {
  constructor(key: string, timeoutMs: number, answers: number, required: number) {
    super(
      "DDATA_GET_FAILURE",
      `get of "${key}" failed: ${answers} of ${required} replicas answered within ${timeoutMs} ms`,
      { key, timeoutMs, answers, required },
    );
  }
}

/** The key was deleted; it cannot be read or updated again. */
export class DataDeletedError extends ShardkitError {
  constructor(key: string) {
    super("DDATA_DELETED", `key "${key}" was deleted`, { key });
  }
}

/** The modify function of an update threw, or returned a value of another type. */
export class ModifyFailureError extends ShardkitError {
  constructor(key: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super("DDATA_MODIFY_FAILURE", `update of "${key}" failed in modify: ${reason}`, {
      key,
      reason,
    });
    this.cause = cause;
  }
}

/** The replicator holds keysMax keys already. */
export class TooManyKeysError extends ShardkitError {
  constructor(key: string, keysMax: number) {
    super(
      "DDATA_TOO_MANY_KEYS",
      `cannot create key "${key}": the replicator holds keysMax=${keysMax} keys`,
      {
        key,
        keysMax,
      },
    );
  }
}
