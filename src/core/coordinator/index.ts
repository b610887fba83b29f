/** The shard coordinator: sans-IO machine, its state, settings, strategies (see each module). */
export * from "./allocation/index.js";
export * from "./coordinator-io.js";
export * from "./coordinator-machine.js";
export * from "./coordinator-membership.js";
export * from "./coordinator-settings.js";
export * from "./coordinator-state.js";
export * from "./coordinator-strategy.js";
export * from "./hand-off-tracker.js";
export * from "./persist-queue.js";
export * from "./waiting-requests.js";
