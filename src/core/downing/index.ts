/**
 * Split Brain Resolver decision logic (sans-IO, docs/architecture.md, "Split Brain Resolver"): the
 * strategies, the decision of which nodes to down, the stability timing, and their
 * settings. The driver (cluster/) feeds views, time and lease results and performs the
 * downing.
 */
export * from "./downing-decision.js";
export * from "./downing-strategy.js";
export * from "./sbr-settings.js";
export * from "./sbr-stability.js";
export { type SbrView, sbrViewOf, unreachableMembersOf } from "./sbr-view.js";
