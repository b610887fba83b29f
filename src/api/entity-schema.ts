/**
 * Message schemas of entity types: `EntityTypeKey<M>(name, { schema })` takes any
 * Standard Schema validator (see docs/evolution.md). Messages sent on this member are
 * checked at the call site (unless `validateLocal: false`); messages arriving from other
 * members are checked before they reach the entity.
 */

import type { ActorRef } from "../actor/actor-ref.js";
import type { AskOptions } from "../actor/ask.js";
import { MessageValidationError, type Schema, validateSync } from "../base/schema.js";

export { MessageValidationError };

/** The schema part of an entity type key. */
export interface EntityTypeSchema<M> {
  readonly name: string;
  readonly schema?: Schema<M>;
  readonly validateLocal?: boolean;
}

/**
 * The message as the schema outputs it.
 * @throws MessageValidationError when it does not match; AsyncSchemaError for an
 * asynchronous schema.
 */
export function checkMessage<M>(key: EntityTypeSchema<M>, message: unknown): M {
  if (key.schema === undefined) return message as M;
  const r = validateSync(key.schema, message, `entity type ${key.name}`);
  if (!r.ok) throw new MessageValidationError(key.name, r.issues);
  return r.value;
}

/** The tell/ask pair of an entity ref. */
export interface TellAsk<M> {
  readonly tell: (message: M) => void;
  readonly ask: <R>(makeMessage: (replyTo: ActorRef<R>) => M, options?: AskOptions) => Promise<R>;
}

/**
 * `ref` with its messages checked against the type's schema before they are sent: an
 * invalid `tell` throws MessageValidationError at the call site, an invalid `ask` rejects
 * with it; nothing is sent.
 */
export function validatingRef<M, T extends TellAsk<M>>(key: EntityTypeSchema<M>, ref: T): T {
  return {
    ...ref,
    tell: (message: M) => ref.tell(checkMessage(key, message)),
    ask: <R>(make: (replyTo: ActorRef<R>) => M, options?: AskOptions) =>
      ref.ask<R>((replyTo) => checkMessage(key, make(replyTo)), options),
  };
}
