/**
 * Coordinated shutdown, sans-IO (docs/architecture.md, "Layers"): the phases as data, their
 * settings, the run order, the reasons, and the machine that walks the phases. The driver
 * (cluster/shutdown) runs the tasks, owns the phase timer and the promise.
 */
export * from "./phase-order.js";
export * from "./shutdown-errors.js";
export * from "./shutdown-machine.js";
export * from "./shutdown-phases.js";
export * from "./shutdown-reason.js";
export * from "./shutdown-settings.js";
