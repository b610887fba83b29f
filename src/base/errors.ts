/**
 * Typed errors. Every failure shardkit throws or rejects with is an instance of a
 * `ShardkitError` subclass with a stable `code` (one of `ShardkitErrorCode`) and
 * structured `fields`; callers branch on `code` (or `instanceof`), never on message text.
 * Programmer errors use `assert` (see assert.ts) and are not meant to be caught.
 * `ShardkitError` itself is abstract: a new failure gets its own subclass and code
 * (docs/architecture.md, house rule 3).
 */

/**
 * Every `code` a `ShardkitError` carries. Codes are stable: a code keeps its meaning
 * across versions; new failures add new codes.
 */
export type ShardkitErrorCode =
  // actors
  | "ABORTED"
  | "ASK_PENDING_LIMIT"
  | "ASK_TIMEOUT"
  | "DEATH_PACT"
  | "INVALID_ACTOR_NAME"
  | "INVALID_ACTOR_REF"
  | "NOT_A_CHILD"
  | "STASH_OVERFLOW"
  | "SYSTEM_TERMINATED"
  // settings and input
  | "CONFIG_INVALID"
  | "INVALID_ADDRESS"
  | "MISSING_PEER_DEPENDENCY"
  // schemas and evolution
  | "EVENT_INVALID"
  | "MANIFEST_CORRUPT"
  | "MANIFEST_MISSING"
  | "MANIFEST_VERSION_TOO_NEW"
  | "MESSAGE_INVALID"
  | "SCHEMA_ASYNC"
  | "UNKNOWN_MANIFEST"
  // wire and remoting
  | "FRAME_TOO_LARGE"
  | "INVALID_GOSSIP"
  | "REMOTE_SEND_FAILED"
  | "SERIALIZATION_FAILED"
  | "TRANSPORT_FAILED"
  | "UNKNOWN_SERIALIZER"
  // persistence
  | "CODEC_MISMATCH"
  | "EFFECT_INVALID"
  | "EVENT_SOURCED_PERSIST_FAILED"
  | "EVENT_SOURCED_RECOVERY_FAILED"
  | "FENCED_WRITE"
  | "JOURNAL_CONFLICT"
  | "JOURNAL_REJECTED"
  | "LEASE_LOST"
  | "LEASE_UNAVAILABLE"
  | "PERSISTENCE_STORE_FAILED"
  | "REMEMBER_BATCH_INVALID"
  | "SNAPSHOT_TOO_LARGE"
  // distributed data
  | "DDATA_DECODE"
  | "DDATA_DELETED"
  | "DDATA_DURABLE_STORE"
  | "DDATA_GET_FAILURE"
  | "DDATA_INVALID_OPERATION"
  | "DDATA_MODIFY_FAILURE"
  | "DDATA_STOPPED"
  | "DDATA_TOO_MANY_KEYS"
  | "DDATA_TYPE_MISMATCH"
  | "DDATA_UPDATE_TIMEOUT"
  // sharding and singleton
  | "COORDINATOR_STATE_CORRUPT"
  | "SHARDING_STORE_CORRUPT"
  | "SHARDING_TYPE_NOT_STARTED"
  | "SINGLETON_MANAGER_STUCK"
  | "SINGLETON_NAME_TAKEN"
  // coordinated shutdown
  | "SHUTDOWN_ABORTED"
  | "SHUTDOWN_PHASE_STARTED"
  | "SHUTDOWN_PHASE_UNKNOWN"
  // simulator, test oracle, command line
  | "CLI_FAILED"
  | "CLI_USAGE"
  | "SHARDING_ORACLE_VIOLATION"
  | "SIM_FAILED"
  | "SIM_STEPS_EXCEEDED";

/** Base class of every expected shardkit failure; throw one of its subclasses. */
export abstract class ShardkitError extends Error {
  /** Stable, machine-readable identifier, e.g. `"ASK_TIMEOUT"`. */
  readonly code: ShardkitErrorCode;
  /** Structured context for logs and handlers. */
  readonly fields: Readonly<Record<string, unknown>>;

  constructor(code: ShardkitErrorCode, message: string, fields: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.fields = fields;
  }
}

/** A setting has an invalid value. Names the key, the value and what is allowed. */
export class ConfigError extends ShardkitError {
  readonly key: string;
  readonly value: unknown;
  readonly allowed: string;
  constructor(key: string, value: unknown, allowed: string) {
    super("CONFIG_INVALID", `invalid setting ${key}=${describe(value)}: expected ${allowed}`, {
      key,
      value,
      allowed,
    });
    this.key = key;
    this.value = value;
    this.allowed = allowed;
  }
}

/** An `ask` did not receive a reply within its timeout. */
export class AskTimeoutError extends ShardkitError {
  constructor(target: string, timeoutMs: number) {
    super("ASK_TIMEOUT", `ask to ${target} timed out after ${timeoutMs} ms`, { target, timeoutMs });
  }
}

/** An operation was aborted through its AbortSignal. */
export class AbortError extends ShardkitError {
  constructor(what: string, reason?: unknown) {
    super("ABORTED", `${what} was aborted${reason === undefined ? "" : `: ${describe(reason)}`}`, {
      reason,
    });
  }
}

/** A bounded stash is full. */
export class StashOverflowError extends ShardkitError {
  constructor(actorPath: string, capacity: number) {
    super("STASH_OVERFLOW", `stash of ${actorPath} is full (stashCapacityMax=${capacity})`, {
      actorPath,
      capacity,
    });
  }
}

/** An actor name is invalid or already taken under the same parent. */
export class InvalidActorNameError extends ShardkitError {
  constructor(name: string, reason: string) {
    super("INVALID_ACTOR_NAME", `invalid actor name "${name}": ${reason}`, { name, reason });
  }
}

/** A value that is not an actor ref created by shardkit was given where one is needed. */
export class InvalidActorRefError extends ShardkitError {
  constructor(operation: string, ref: unknown) {
    super("INVALID_ACTOR_REF", `${operation}: not a shardkit ActorRef (${describe(ref)})`, {
      operation,
    });
  }
}

/** An address, actor path or actor id string could not be parsed or has invalid parts. */
export class InvalidAddressError extends ShardkitError {
  constructor(input: string, reason: string) {
    super("INVALID_ADDRESS", `invalid address "${input}": ${reason}`, { input, reason });
  }
}

/** The actor system is terminated or terminating and cannot do what was asked. */
export class SystemTerminatedError extends ShardkitError {
  constructor(systemName: string, what: string) {
    super("SYSTEM_TERMINATED", `actor system ${systemName} is terminated: cannot ${what}`, {
      systemName,
    });
  }
}

/** Short printable form of an arbitrary value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return `${value}n`;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    const s = JSON.stringify(value);
    if (s === undefined) return String(value);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return String(value);
  }
}

/** A transport could not connect, listen or send. `reason` is stable for branching. */
export class TransportError extends ShardkitError {
  readonly reason:
    | "connect-refused"
    | "connect-timeout"
    | "listen-failed"
    | "closed"
    | "tls"
    | "other";
  constructor(
    reason: "connect-refused" | "connect-timeout" | "listen-failed" | "closed" | "tls" | "other",
    message: string,
    fields: Record<string, unknown> = {},
  ) {
    super("TRANSPORT_FAILED", message, { reason, ...fields });
    this.reason = reason;
  }
}
