/**
 * Programmer-error checks. A failed assertion is a bug in shardkit or in the caller's
 * use of an internal API, never an expected runtime condition (those are typed errors).
 */

export class AssertionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AssertionError";
  }
}

/** Throws an AssertionError when `condition` is false. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}

/**
 * Throws an AssertionError. For checks on hot paths whose message is built from values:
 * `if (!condition) fail(\`... ${value}\`)` builds the message only when it fails, while
 * `assert(condition, \`... ${value}\`)` builds it on every call.
 */
export function fail(message: string): never {
  throw new AssertionError(message);
}

/** Marks an exhaustive switch: the compiler proves this is unreachable. */
export function assertNever(value: never, what = "value"): never {
  throw new AssertionError(`unexpected ${what}: ${JSON.stringify(value)}`);
}
