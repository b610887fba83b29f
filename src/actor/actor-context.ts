/**
 * ActorContext: what a behavior can do while handling a message. Declared in behavior.ts
 * together with the behaviors (their types refer to each other); this module keeps the
 * import path `actor/actor-context.js` for code that only needs the context.
 */
export type { ActorContext, StashBuffer, TimerScheduler } from "./behavior.js";
