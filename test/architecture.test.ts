/**
 * Enforces DESIGN.md §1 (dependency direction between layers) and §2 (the determinism
 * boundary) by reading every import and every use of ambient time, timers, randomness
 * and `process` in src/. A violation fails `npm test`.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");

/** Which layers each layer may import (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  base: [],
  protocol: ["base"],
  core: ["base", "protocol"],
  ports: ["base"],
  actor: ["base", "ports"],
  cluster: ["base", "protocol", "core", "ports", "actor"],
  api: ["base", "protocol", "core", "ports", "actor", "cluster", "runtime", "persistence"],
  runtime: ["base", "ports", "protocol"],
  persistence: ["base", "ports", "protocol"],
  management: [
    "base",
    "protocol",
    "core",
    "ports",
    "actor",
    "cluster",
    "api",
    "runtime",
    "persistence",
  ],
  cli: [
    "base",
    "protocol",
    "core",
    "ports",
    "actor",
    "cluster",
    "api",
    "runtime",
    "persistence",
    "management",
  ],
  testing: [
    "base",
    "protocol",
    "core",
    "ports",
    "actor",
    "cluster",
    "api",
    "runtime",
    "persistence",
  ],
  root: [
    "base",
    "protocol",
    "core",
    "ports",
    "actor",
    "cluster",
    "api",
    "runtime",
    "persistence",
    "management",
  ],
};

/** Folders allowed to touch node:*, real time, timers, randomness and process. */
const AMBIENT_OK = [
  "runtime/node/",
  "management/",
  "cli/",
  "persistence/sqlite/",
  "persistence/postgres/",
];

const AMBIENT =
  /\b(Date\.now|new Date\(\)|Math\.random|performance\.now|setTimeout|setInterval|setImmediate|queueMicrotask|process\.\w+|clearTimeout|clearInterval|clearImmediate)\b/;

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") ? [p] : [];
  });
}

function layerOf(file: string): string {
  const rel = relative(SRC, file).split("/");
  return rel.length === 1 ? "root" : (rel[0] as string);
}

function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
}

const files = walk(SRC);
const importRe =
  /(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

describe("architecture", () => {
  it("finds the source tree", () => {
    expect(files.length).toBeGreaterThan(5);
  });

  it("imports flow one way between layers (DESIGN.md §1)", () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      const allowed = ALLOWED[from];
      const rel = relative(SRC, file);
      if (!allowed) {
        violations.push(`${rel}: unknown layer "${from}" (add it to ALLOWED)`);
        continue;
      }
      for (const m of stripComments(readFileSync(file, "utf8")).matchAll(importRe)) {
        const spec = (m[1] ?? m[2]) as string;
        if (spec.startsWith("node:")) {
          if (!AMBIENT_OK.some((p) => rel.startsWith(p)))
            violations.push(`${rel}: imports ${spec} outside runtime/node and drivers`);
          continue;
        }
        if (!spec.startsWith(".")) continue;
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(SRC)) {
          violations.push(`${rel}: imports outside src: ${spec}`);
          continue;
        }
        const to = layerOf(target.replace(/\.js$/, ".ts"));
        if (to !== from && !allowed.includes(to))
          violations.push(`${rel}: layer ${from} must not import ${to} (${spec})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("no ambient time, timers, randomness or process outside runtime/node (DESIGN.md §2)", () => {
    const violations: string[] = [];
    for (const file of files) {
      const rel = relative(SRC, file);
      if (AMBIENT_OK.some((p) => rel.startsWith(p))) continue;
      stripComments(readFileSync(file, "utf8"))
        .split("\n")
        .forEach((line, i) => {
          const m = AMBIENT.exec(line);
          if (m) violations.push(`${rel}:${i + 1}: ${m[0]}`);
        });
    }
    expect(violations).toEqual([]);
  });

  it("the checker itself catches a violation", () => {
    expect(AMBIENT.test("const t = Date.now();")).toBe(true);
    expect(AMBIENT.test("setTimeout(fn, 1)")).toBe(true);
    expect(AMBIENT.test("this.clock.now()")).toBe(false);
  });
});
