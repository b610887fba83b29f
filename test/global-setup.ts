/**
 * Global setup of the test run (vitest.config.ts): transpiles the children's code once
 * (test/support/compiled-children.ts) and names the mirror for every worker; the
 * teardown removes it. Each project of the config runs this setup: the first one in the
 * process compiles, the others find the mirror named already.
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { CHILDREN_DIR_ENV, CHILDREN_MODE_ENV } from "./support/child-process.js";
import { compileChildren } from "./support/compiled-children.js";

const MARK = Symbol.for("shardkit.test.childrenDir");
type Marked = { [MARK]?: string };

export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env[CHILDREN_MODE_ENV] === "tsx") return undefined;
  const g = globalThis as Marked;
  if (g[MARK] !== undefined) return undefined;
  const dir = await compileChildren(resolve(import.meta.dirname, ".."), `run-${process.pid}`);
  g[MARK] = dir;
  process.env[CHILDREN_DIR_ENV] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
