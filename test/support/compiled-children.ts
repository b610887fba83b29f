/**
 * Compiled children for the test run: the real-process tests start a few hundred Node
 * processes, and each one started through `--import tsx` spends about 0.4 s of CPU more
 * than one started from JavaScript (tsx compiles every module it loads; docs/testing.md,
 * "Suite time"). The test run's global setup (test/global-setup.ts) transpiles
 * `src/` and `test/` (no test files) once, with esbuild — the compiler tsx uses, so the
 * code is the same — into a mirror of the repository tree under
 * `node_modules/.cache/shardkit-children/run-<pid>/`, and names the mirror in
 * `SHARDKIT_TEST_CHILDREN_DIR`; `spawnNode` (./child-process.ts, `childCommand`) then starts scripts of
 * `src/` and `test/` from there without tsx. Examples still start through tsx, as a
 * user starts them. `SHARDKIT_TEST_CHILDREN=tsx` turns the mirror off (every child
 * through tsx, e.g. for stack traces that name the TypeScript sources).
 *
 * The mirror keeps the tree's relative paths, and `test/fixtures` is linked into it, so
 * paths a child computes from `import.meta.dirname` resolve as in the sources; bare
 * imports resolve through the repository's node_modules above the mirror.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { MIRRORED_TREES } from "./child-process.js";

function sources(dir: string, out: string[]): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "fixtures" && e.name !== "node_modules") sources(path, out);
    } else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") && !e.name.endsWith(".test.ts"))
      out.push(path);
  }
  return out;
}

/** Whether process `pid` runs (signal 0 checks without sending anything). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the mirrors of runs whose process is gone (a run killed before its teardown),
 * so that they do not pile up under node_modules/.cache.
 */
function removeOrphans(base: string): void {
  if (!existsSync(base)) return;
  for (const name of readdirSync(base)) {
    const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
    if (Number.isSafeInteger(pid) && !running(pid))
      rmSync(join(base, name), { recursive: true, force: true });
  }
}

/**
 * Transpiles src/ and test/ of `root` into
 * `<root>/node_modules/.cache/shardkit-children/<name>` (replacing what was there) and
 * returns that directory.
 */
export async function compileChildren(root: string, name: string): Promise<string> {
  const base = join(root, "node_modules", ".cache", "shardkit-children");
  removeOrphans(base);
  const outdir = join(base, name);
  rmSync(outdir, { recursive: true, force: true });
  const entryPoints = MIRRORED_TREES.flatMap((t) => sources(join(root, t), []));
  await build({
    entryPoints,
    outdir,
    outbase: root,
    bundle: false,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "error",
  });
  mkdirSync(join(outdir, "test"), { recursive: true });
  symlinkSync(join(root, "test", "fixtures"), join(outdir, "test", "fixtures"), "dir");
  return outdir;
}
