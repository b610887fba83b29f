export {
  AbortError,
  AskTimeoutError,
  ConfigError,
  InvalidActorNameError,
  ShardkitError,
  StashOverflowError,
  SystemTerminatedError,
} from "../base/errors.js";
export { DeathPactError, NotAChildError } from "./actor-cell.js";
export type { ActorContext, StashBuffer, TimerScheduler } from "./actor-context.js";
export { ActorPath } from "./actor-path.js";
export { type ActorRef, PoisonPill } from "./actor-ref.js";
export { ActorSystem, type ActorSystemOptions, type ActorSystemStats } from "./actor-system.js";
export { type AskOptions, AskRejectedError, ask } from "./ask.js";
export {
  AbstractBehavior,
  type Behavior,
  type BehaviorResult,
  Behaviors,
  type HandlerResult,
  type MessageHandler,
  type SignalHandler,
} from "./behavior.js";
export {
  defaultEventSourcedBackoff,
  Effect,
  type EffectFactory,
  type EventCodec,
  EventSourcedBehavior,
  type EventSourcedOptions,
  EventSourcedPersistError,
  EventSourcedRecoveryError,
  EventValidationError,
  PERSISTENCE_ID_SEPARATOR,
  parsePersistenceId,
  persistenceIdOf,
  type SideEffect,
  type SnapshotCodec,
} from "./event-sourced/index.js";
export type {
  ActorFailed,
  AnyEvent,
  DeadLetter,
  DeadLetterReason,
  EventOf,
  EventStream,
  SystemEvent,
  UnhandledMessage,
} from "./event-stream.js";
export * from "./outbox/index.js";
export type { Props } from "./props.js";
export { type ActorSettings, actorSettings, defaultActorSettings } from "./settings.js";
export type { Signal } from "./signals.js";
export { type BackoffOptions, SupervisorStrategy } from "./supervision.js";
