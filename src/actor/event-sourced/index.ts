export { Effect, type EffectFactory, type SideEffect } from "./effect.js";
export {
  EventSourcedPersistError,
  EventSourcedRecoveryError,
  EventValidationError,
} from "./errors.js";
export {
  defaultEventSourcedBackoff,
  type EventCodec,
  EventSourcedBehavior,
  type EventSourcedOptions,
  type SnapshotCodec,
} from "./event-sourced-behavior.js";
export { PERSISTENCE_ID_SEPARATOR, parsePersistenceId, persistenceIdOf } from "./persistence-id.js";
