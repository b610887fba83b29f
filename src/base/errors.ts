/**
 * Typed errors. Every expected failure in shardkit is a `ShardkitError` with a stable
 * `code` and structured `fields`; callers branch on `code`, never on message text.
 * Programmer errors use `assert` (see assert.ts) and are not meant to be caught.
 */

/** Base class of every expected shardkit failure. */
export class ShardkitError extends Error {
  /** Stable, machine-readable identifier, e.g. `"ASK_TIMEOUT"`. */
  readonly code: string;
  /** Structured context for logs and handlers. */
  readonly fields: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, fields: Record<string, unknown> = {}) {
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
