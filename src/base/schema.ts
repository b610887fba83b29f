/**
 * Schemas at the edges: any Standard Schema validator (zod, valibot, arktype, ...) checks
 * a value synchronously. shardkit depends only on the Standard Schema types; the
 * validator library is the application's. See docs/evolution.md.
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { ShardkitError } from "./errors.js";

/** A Standard Schema whose output is `T` (its input is whatever arrives). */
export type Schema<T> = StandardSchemaV1<unknown, T>;

/** One validation issue: a message and the path of the value it concerns ("" = root). */
export interface SchemaIssue {
  readonly message: string;
  readonly path: string;
}

/** The result of {@link validateSync}. */
export type SchemaResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly SchemaIssue[] };

/** A schema answered with a Promise: shardkit checks messages and events synchronously. */
export class AsyncSchemaError extends ShardkitError {
  constructor(what: string, vendor: string) {
    super(
      "SCHEMA_ASYNC",
      `the ${vendor} schema of ${what} validates asynchronously; shardkit needs a synchronous schema (no async refinements)`,
      { what, vendor },
    );
  }
}

function pathOf(path: StandardSchemaV1.Issue["path"]): string {
  if (path === undefined) return "";
  return path
    .map((segment) => String(typeof segment === "object" ? segment.key : segment))
    .join(".");
}

/** `path: message` lines joined by "; ", the root path shown as `(root)`. */
export function formatIssues(issues: readonly SchemaIssue[]): string {
  return issues.map((i) => `${i.path === "" ? "(root)" : i.path}: ${i.message}`).join("; ");
}

/**
 * Validates `value` with `schema`.
 * @param what names the checked thing for the error of an asynchronous schema.
 * @throws AsyncSchemaError when the schema answers with a Promise.
 */
export function validateSync<T>(schema: Schema<T>, value: unknown, what: string): SchemaResult<T> {
  const standard = schema["~standard"];
  const result = standard.validate(value);
  if (result instanceof Promise) {
    result.catch(() => undefined);
    throw new AsyncSchemaError(what, standard.vendor);
  }
  if (result.issues === undefined) return { ok: true, value: result.value };
  return {
    ok: false,
    issues: result.issues.map((i) => ({ message: i.message, path: pathOf(i.path) })),
  };
}

/** True when `value` looks like a Standard Schema (has a `~standard.validate` function). */
export function isStandardSchema(value: unknown): value is Schema<unknown> {
  if (typeof value !== "object" && typeof value !== "function") return false;
  if (value === null) return false;
  const standard = (value as { "~standard"?: { validate?: unknown } })["~standard"];
  return (
    typeof standard === "object" && standard !== null && typeof standard.validate === "function"
  );
}

/** A message does not satisfy its entity type's schema. */
export class MessageValidationError extends ShardkitError {
  readonly typeName: string;
  readonly issues: readonly SchemaIssue[];
  constructor(typeName: string, issues: readonly SchemaIssue[]) {
    super(
      "MESSAGE_INVALID",
      `message for entity type ${typeName} does not match its schema: ${formatIssues(issues)}`,
      { typeName, issues },
    );
    this.typeName = typeName;
    this.issues = issues;
  }
}

/**
 * A check of one entity type's messages: the message as the schema outputs it.
 * @throws MessageValidationError when it does not match; AsyncSchemaError for an
 * asynchronous schema.
 */
export function messageCheck<M>(typeName: string, schema: Schema<M>): (message: unknown) => M {
  const what = `entity type ${typeName}`;
  return (message) => {
    const r = validateSync(schema, message, what);
    if (!r.ok) throw new MessageValidationError(typeName, r.issues);
    return r.value;
  };
}
