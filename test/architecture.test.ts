/**
 * Enforces docs/architecture.md ("Dependency rules": the direction between layers, no
 * import cycles; "The determinism boundary") by reading every import and every use of
 * ambient time, timers, randomness and `process` in src/. A violation fails `npm test`.
 *
 * `runtime/host`, `runtime/node` and `runtime/sim` are separate layers: the simulator must
 * not depend on the real runtime, nor the real runtime on the simulator. Type-only
 * imports count for cycles too: a cycle of types still means the files cannot be read or
 * moved apart.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");

const RUNTIMES = ["runtime/host", "runtime/node", "runtime/sim"];

/** Which layers each layer may import (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  base: [],
  protocol: ["base"],
  core: ["base", "protocol"],
  ports: ["base"],
  actor: ["base", "ports"],
  cluster: ["base", "protocol", "core", "ports", "actor"],
  api: ["base", "protocol", "core", "ports", "actor", "cluster", ...RUNTIMES, "persistence"],
  "runtime/host": [],
  "runtime/node": ["base", "ports", "protocol", "runtime/host"],
  "runtime/sim": ["base", "ports", "protocol", "runtime/host"],
  persistence: ["base", "ports", "protocol"],
  observability: [
    "base",
    "protocol",
    "core",
    "ports",
    "actor",
    "cluster",
    "api",
    ...RUNTIMES,
    "persistence",
  ],
  management: [
    "base",
    "protocol",
    "core",
    "ports",
    "actor",
    "cluster",
    "api",
    ...RUNTIMES,
    "persistence",
    "observability",
  ],
  cli: [
    "base",
    "protocol",
    "core",
    "ports",
    "actor",
    "cluster",
    "api",
    ...RUNTIMES,
    "persistence",
    "management",
    "observability",
  ],
  testing: [
    "base",
    "protocol",
    "core",
    "ports",
    "actor",
    "cluster",
    "api",
    ...RUNTIMES,
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
    ...RUNTIMES,
    "persistence",
    "management",
    "observability",
  ],
};

/** Folders allowed to touch node:*, real time, timers, randomness and process. */
const AMBIENT_OK = [
  "runtime/node/",
  "runtime/host/",
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
  if (rel.length === 1) return "root";
  if (rel[0] === "runtime" && rel.length > 2) return `runtime/${rel[1]}`;
  return rel[0] as string;
}

/** Every `assert(...)` call of `src` (balanced parentheses) and the line it starts on. */
function assertCalls(src: string): { line: number; text: string }[] {
  const calls: { line: number; text: string }[] = [];
  for (const m of src.matchAll(/\bassert\(/g)) {
    let depth = 0;
    let end = m.index;
    for (; end < src.length; end++) {
      const c = src[end];
      if (c === "(") depth++;
      else if (c === ")" && --depth === 0) break;
    }
    calls.push({
      line: src.slice(0, m.index).split("\n").length,
      text: src.slice(m.index, end + 1),
    });
  }
  return calls;
}

function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
}

const files = walk(SRC);
/** `import ... from "x"`, `export ... from "x"`, `import("x")` and bare `import "x"`. */
const importRe =
  /(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;

/** Relative imports of each file in src/ (type-only included), as src-relative .ts paths. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const m of stripComments(readFileSync(file, "utf8")).matchAll(importRe)) {
      const spec = (m[1] ?? m[2] ?? m[3]) as string;
      if (!spec.startsWith(".")) continue;
      targets.push(relative(SRC, resolve(dirname(file), spec).replace(/\.js$/, ".ts")));
    }
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

/**
 * One cycle per strongly connected component of `graph` with more than one file (or a
 * file importing itself): the shortest chain from the component's first file (in sorted
 * order) back to itself, e.g. ["a.ts", "b.ts", "a.ts"]. Tarjan's algorithm.
 */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((component) => {
    const members = new Set(component);
    const start = [...component].sort()[0] as string;
    const previous = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const v = queue[i] as string;
      for (const w of graph.get(v) ?? []) {
        if (!members.has(w)) continue;
        if (w === start) {
          const chain = [start];
          for (let x: string | undefined = v; x !== undefined && x !== start; x = previous.get(x))
            chain.push(x);
          return [start, ...chain.slice(1).reverse(), start];
        }
        if (!previous.has(w) && w !== start) {
          previous.set(w, v);
          queue.push(w);
        }
      }
    }
    return [...component, component[0] as string];
  });
}

describe("architecture", () => {
  it("finds the source tree", () => {
    expect(files.length).toBeGreaterThan(5);
  });

  it("imports flow one way between layers (docs/architecture.md, Dependency rules)", () => {
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
        const spec = (m[1] ?? m[2] ?? m[3]) as string;
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

  it("no ambient time, timers, randomness or process outside runtime/node (docs/architecture.md, determinism boundary)", () => {
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

  it("no assert whose message is built from values: `if (!c) fail(...)` builds it only on failure (docs/architecture.md, House rules 3)", () => {
    const violations: string[] = [];
    for (const file of files) {
      const src = stripComments(readFileSync(file, "utf8"));
      for (const call of assertCalls(src))
        if (call.text.includes("${"))
          violations.push(`${relative(SRC, file)}:${call.line}: ${call.text.slice(0, 80)}`);
    }
    expect(violations).toEqual([]);
    const interpolated = "assert(x > 0, `x is $" + "{x}`)";
    expect(assertCalls(`${interpolated};\nassert(ok(a, b), 'plain');`)).toEqual([
      { line: 1, text: interpolated },
      { line: 2, text: "assert(ok(a, b), 'plain')" },
    ]);
  });

  it("no import cycles in src/, type-only imports included (docs/architecture.md, Dependency rules)", () => {
    const cycles = findCycles(importGraph()).map((chain) => chain.join(" -> "));
    expect(cycles, `import cycles:\n${cycles.join("\n")}`).toEqual([]);
  });

  it("the cycle finder prints a cycle as a chain of files", () => {
    const graph = new Map<string, string[]>([
      ["a.ts", ["b.ts", "leaf.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "leaf.ts"]],
      ["leaf.ts", []],
      ["self.ts", ["self.ts"]],
    ]);
    expect(findCycles(graph).map((c) => c.join(" -> "))).toEqual([
      "a.ts -> b.ts -> c.ts -> a.ts",
      "self.ts -> self.ts",
    ]);
    expect(
      findCycles(
        new Map([
          ["x.ts", ["y.ts"]],
          ["y.ts", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("runtime/sim and runtime/node are separate layers", () => {
    expect(layerOf(join(SRC, "runtime/sim/sim-world.ts"))).toBe("runtime/sim");
    expect(layerOf(join(SRC, "runtime/node/index.ts"))).toBe("runtime/node");
    expect(ALLOWED["runtime/sim"]).not.toContain("runtime/node");
    expect(ALLOWED["runtime/node"]).not.toContain("runtime/sim");
  });

  it("the checker itself catches a violation", () => {
    expect(AMBIENT.test("const t = Date.now();")).toBe(true);
    expect(AMBIENT.test("setTimeout(fn, 1)")).toBe(true);
    expect(AMBIENT.test("this.clock.now()")).toBe(false);
  });
});
