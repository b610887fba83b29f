/** Shard allocation strategies: pure, synchronous, deterministic (see each module). */
export * from "./consistent-hashing.js";
export * from "./least-shard.js";
export * from "./rebalance-gate.js";
export * from "./region-preference.js";
export * from "./region-view.js";
export * from "./threshold-rebalance.js";
