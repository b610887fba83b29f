export type { Clock } from "./clock.js";
export type { Crypto } from "./crypto.js";
export type { EventLoopMonitor } from "./event-loop.js";
export * from "./journal.js";
export type { Lease, LeaseProvider, LeaseStore } from "./lease.js";
export * from "./logger.js";
export type { Random } from "./random.js";
export type { RememberEntitiesStore, RememberEntitiesUpdate } from "./remember-entities-store.js";
export type { Runtime } from "./runtime.js";
export type { Scheduler } from "./scheduler.js";
export * from "./snapshot-store.js";
export type {
  CloseReason,
  Connection,
  ConnectionHandlers,
  HostPort,
  Listener,
  Transport,
} from "./transport.js";
