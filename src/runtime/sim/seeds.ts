/**
 * Derivation of PRNG seeds from the world seed.
 *
 * Each node's stream is derived from (world seed, hash of the node name) rather than
 * forked from a shared generator in creation order. That way adding a node, or
 * creating nodes in another order, leaves every other node's random stream unchanged,
 * which keeps failing seeds reproducible while scenarios evolve. All 53 bits of a safe
 * integer seed are used, so seeds 1 and 2^32+1 differ.
 */
import { fail } from "../../base/assert.js";

const ROOT_SALT = 0x5eed0001;
const NODE_SALT = 0x5eed0002;

/** Seed of the world's root generator. */
export function rootSeed(worldSeed: number): number {
  const [lo, hi] = seedWords(worldSeed);
  return fmix32(combine(combine(ROOT_SALT, lo), hi));
}

/** Seed of a node's generator: a function of the world seed and node name only. */
export function nodeSeed(worldSeed: number, nodeName: string): number {
  const [lo, hi] = seedWords(worldSeed);
  return fmix32(combine(combine(combine(NODE_SALT, lo), hi), fnv1a32(nodeName)));
}

/** 32-bit FNV-1a over UTF-16 code units (stable, fast; only used for seeding). */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function seedWords(seed: number): [number, number] {
  if (!Number.isSafeInteger(seed)) fail(`simulation seed must be a safe integer: ${seed}`);
  return [seed >>> 0, Math.floor(seed / 0x1_0000_0000) >>> 0];
}

function combine(h: number, word: number): number {
  let k = Math.imul(word >>> 0, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  const x = (h ^ k) >>> 0;
  return (Math.imul((x << 13) | (x >>> 19), 5) + 0xe6546b64) >>> 0;
}

function fmix32(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}
