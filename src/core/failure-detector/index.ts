/** Phi accrual failure detector: pure, clock-free building blocks (see each module). */
export * from "./heartbeat-history.js";
export * from "./phi-accrual.js";
export * from "./phi-accrual-settings.js";
