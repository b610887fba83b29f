export * from "./assert.js";
export * from "./disposable.js";
export * from "./errors.js";
export * from "./prng.js";
