/**
 * The shard (sans-IO, docs/architecture.md, "Sharding"): the entity lifecycle inside one
 * shard — creation on demand, passivation (manual, idle, active-entity limit), crash
 * handling, remember entities with batched store writes, entity recovery strategies and
 * hand-off. The driver (cluster/) runs the entity actors, timers and the store.
 */
export * from "./remember-entities.js";
export * from "./remember-writer.js";
export * from "./shard-machine.js";
export * from "./shard-settings.js";
export * from "./shard-types.js";
