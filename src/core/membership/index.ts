/**
 * Cluster membership state model (sans-IO, docs/architecture.md, "Layers"): addresses and
 * node identity, members and their status machine, vector clocks, reachability, the
 * gossip value with its merge, and the per-node membership view (convergence, leader).
 * The membership machine (membership-machine.ts) composes them; its driver is in cluster/.
 */
export * from "./address.js";
export * from "./cluster-events.js";
export * from "./cluster-settings.js";
export * from "./gossip.js";
export * from "./gossip-logic.js";
export * from "./heartbeat-ring.js";
export * from "./join.js";
export * from "./leader-actions.js";
export * from "./member.js";
export * from "./member-ordering.js";
export * from "./member-status.js";
export * from "./member-transitions.js";
export * from "./membership-machine.js";
export * from "./membership-messages.js";
export * from "./membership-state.js";
export * from "./reachability.js";
export * from "./seed-join.js";
export * from "./unique-address.js";
export * from "./vector-clock.js";
