#!/usr/bin/env node
// `npm run mutate [-- <folder>...] [stryker options]`: mutation testing (StrykerJS) of the
// safety-critical code, one folder at a time (docs/testing.md, "Mutation testing").
// Folders: coordinator region shard downing association membership journals oracle
// (also accepted as core/<name>); no folder = all of them, one after the other. A path
// under src/ (a file, a glob, or file:from-to lines) mutates only that.
// Each folder has its own incremental file and reports under reports/mutation/.
// Extra arguments starting with "--" go to Stryker (e.g. --concurrency 2), except
// --narrow-check: the TypeScript checker then compiles only the mutated files and what
// they import (tsconfig.mutate-<name>.json, written here) instead of the whole project, several
// times faster on a loaded machine; a mutant whose type error would show only in a file
// importing the mutated one is then run instead of discarded.
// The PostgreSQL journal's conflict checks are only exercised when SHARDKIT_PG_URL is set.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const FOLDERS = {
  coordinator: ["src/core/coordinator/**/*.ts"],
  region: ["src/core/region/**/*.ts"],
  shard: ["src/core/shard/**/*.ts"],
  downing: ["src/core/downing/**/*.ts"],
  association: ["src/core/association/**/*.ts"],
  membership: ["src/core/membership/**/*.ts"],
  // Only the conflict checks: the expected-sequence-number comparison and the
  // constraint-violation handling of each journal (line ranges; each must start at the
  // line its RANGE_STARTS entry names, checked below, so an edit that moves them fails
  // loudly instead of mutating other code).
  journals: [
    "src/persistence/memory/memory-journal.ts:60-63",
    "src/persistence/sqlite/sqlite-journal.ts:240-266",
    "src/persistence/sqlite/sqlite-journal.ts:278-282",
    "src/persistence/postgres/postgres-journal.ts:248-252",
    "src/persistence/postgres/postgres-journal.ts:258-282",
    "src/persistence/postgres/postgres-journal.ts:315-320",
  ],
  oracle: ["src/testing/sharding-oracle.ts"],
};
const EXCLUDE = ["!src/**/index.ts"];
// The text the first line of each line range above must contain.
const RANGE_STARTS = {
  "src/persistence/memory/memory-journal.ts:60-63": "let log = this.logs.get(persistenceId)",
  "src/persistence/sqlite/sqlite-journal.ts:240-266": "private commitBlocking(",
  "src/persistence/sqlite/sqlite-journal.ts:278-282": "const highest = this.highest(",
  "src/persistence/postgres/postgres-journal.ts:248-252": "} catch (error) {",
  "src/persistence/postgres/postgres-journal.ts:258-282": "private async commitUnfenced(",
  "src/persistence/postgres/postgres-journal.ts:315-320": "return batch.map((a, i) =>",
};
for (const [range, text] of Object.entries(RANGE_STARTS)) {
  const [file, lines] = range.split(":");
  const first = readFileSync(file, "utf8").split("\n")[Number(lines.split("-")[0]) - 1] ?? "";
  if (!first.includes(text)) {
    console.error(
      `${range} no longer starts at "${text}" (found "${first.trim()}"): update FOLDERS`,
    );
    process.exit(2);
  }
}

// `--check-ranges`: only the check above (test/scripts/mutate-ranges.test.ts runs it, so
// an edit that moves a range fails `npm test`, not the next mutation run).
if (process.argv.includes("--check-ranges")) {
  console.log(`${Object.keys(RANGE_STARTS).length} line ranges start where they should`);
  process.exit(0);
}

const args = process.argv.slice(2);
const names = [];
const passThrough = [];
let narrowCheck = false;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === "--narrow-check") narrowCheck = true;
  else if (a.startsWith("--")) {
    passThrough.push(a);
    if (i + 1 < args.length && !args[i + 1].startsWith("--") && !a.includes("=")) {
      passThrough.push(args[++i]);
    }
  } else if (/[.*:]/.test(a)) names.push(a);
  else names.push(a.replace(/^(src\/)?core\//, "").replace(/\/$/, ""));
}
// A path under src/ (file, glob or file:lines) mutates just that; its reports are named
// after it.
for (const [i, n] of names.entries()) {
  if (/[.*:]/.test(n)) {
    names[i] = n.replace(/^src\//, "").replace(/[^A-Za-z0-9.-]+/g, "_");
    FOLDERS[names[i]] = [n];
  } else if (!(n in FOLDERS)) {
    console.error(`unknown folder "${n}"; one of: ${Object.keys(FOLDERS).join(" ")}`);
    process.exit(2);
  }
}
/** "x/@(a|b).ts" -> ["x/a.ts", "x/b.ts"] (each extglob group in turn). */
function expandAlternatives(pattern) {
  const m = /@\(([^()]*)\)/.exec(pattern);
  if (m === null) return [pattern];
  const head = pattern.slice(0, m.index);
  const tail = pattern.slice(m.index + m[0].length);
  return m[1].split("|").flatMap((alt) => expandAlternatives(`${head}${alt}${tail}`));
}

const selected = names.length > 0 ? names : Object.keys(FOLDERS);
let failed = 0;
for (const name of selected) {
  const mutate = [...FOLDERS[name], ...EXCLUDE].join(",");
  console.log(`\n=== mutate ${name}: ${mutate}`);
  const env = { ...process.env, SHARDKIT_MUTATE_FOLDER: name };
  if (narrowCheck) {
    // TypeScript's include knows no extglob: "@(a|b).ts" becomes "a.ts" and "b.ts"
    const include = FOLDERS[name].flatMap((p) => expandAlternatives(p.replace(/:\d+-\d+$/, "")));
    const tsconfig = { extends: "./tsconfig.json", include };
    // one file per name, so that runs side by side do not share it (the root: Stryker
    // copies the project into its sandbox, but not reports/)
    const file = `tsconfig.mutate-${name}.json`;
    writeFileSync(file, `${JSON.stringify(tsconfig, null, 2)}\n`);
    env.SHARDKIT_MUTATE_TSCONFIG = file;
  }
  const r = spawnSync(
    "npx",
    ["stryker", "run", "stryker.config.mjs", "--mutate", mutate, ...passThrough],
    { stdio: "inherit", env },
  );
  if (r.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
