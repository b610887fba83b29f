/**
 * `npm run fuzz [runs]`: the decoder fuzz property of msgpack-fuzz.ts for longer than
 * `npm test` runs it, with a fresh seed (printed, so a failure replays with
 * `FUZZ_SEED=<seed> npm run fuzz`).
 */
import fc from "fast-check";
import { fuzzProperty } from "./msgpack-fuzz.js";

const runs = Number(process.argv[2] ?? process.env.FUZZ_RUNS ?? 2_000_000);
const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
console.log(`msgpack decoder fuzz: ${runs} frames, seed ${seed}`);
const started = Date.now();
fc.assert(fuzzProperty, { seed, numRuns: runs });
console.log(`ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
