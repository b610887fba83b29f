/**
 * The shard region and proxy (sans-IO, docs/architecture.md, "Sharding"): registration with
 * the coordinator, shard-home cache, per-shard buffers, local shard start and hand-off,
 * graceful shutdown. The driver (cluster/) runs the shard actors, timers and transport.
 */
export * from "./buffer-level-warning.js";
export * from "./region-machine.js";
export * from "./region-registration.js";
export * from "./region-settings.js";
export * from "./region-types.js";
export * from "./shard-buffers.js";
