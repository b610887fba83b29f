#!/usr/bin/env node
// `npm run sim -- --scenario <name> [--seeds 100] [--from 1] [--batch 25] [--filter <text>]`
// sweeps the simulator scenario file test/cluster/<name>.sim.test.ts (or
// test/sharding/<name>.sim.test.ts) over seeds from..from+seeds-1, in batches of vitest
// runs (bounded memory, progress after each batch, suitable for long runs), and ends with
// a sweep report: seeds run, tests run, failures, and one replay command per failure.
// `--filter` runs only the tests whose name contains the text (vitest -t), e.g. "S20w".
// `--batch-timeout <s>` (default 1200) bounds one batch's wall time: a seed whose run never
// ends (a livelock at one virtual instant spins its worker, and vitest's test timeout
// cannot interrupt synchronous code) would otherwise stall the sweep for good. The batch's
// processes are killed and the batch is reported with its seed range.
// Exit code: 0 when every test passed, 1 otherwise, 2 on bad arguments.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const usage =
  "usage: npm run sim -- --scenario <membership|remoting|singleton|sharding-faults|sharding-order|sharding-passivation|...> [--seeds 100] [--from 1] [--batch 25] [--filter <test name text>] [--batch-timeout <seconds, 1200>]";
const scenario = arg("scenario", undefined);
const count = Number(arg("seeds", "100"));
const from = Number(arg("from", "1"));
const batch = Number(arg("batch", "25"));
const filter = arg("filter", undefined);
const batchTimeoutS = Number(arg("batch-timeout", "1200"));
if (!scenario || ![count, from, batch, batchTimeoutS].every((n) => Number.isInteger(n) && n > 0)) {
  console.error(usage);
  process.exit(2);
}
const file = ["cluster", "sharding", "ddata"]
  .map((dir) => `test/${dir}/${scenario}.sim.test.ts`)
  .find((f) => existsSync(f));
if (!file) {
  console.error(`no scenario file test/{cluster,sharding,ddata}/${scenario}.sim.test.ts`);
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), "shardkit-sim-"));
const started = Date.now();
let tests = 0;
let crashedBatches = 0;
/** Batches killed at --batch-timeout: their seed ranges. */
const timedOutBatches = [];

/**
 * Runs one vitest batch in its own process group; kills the whole group (vitest and its
 * workers) when it outlives `timeoutMs`. Resolves true when it ended by itself.
 */
const runBatch = (args, env, timeoutMs) =>
  new Promise((resolve) => {
    const child = spawn("npx", args, {
      stdio: ["ignore", "inherit", "inherit"],
      env,
      detached: true,
    });
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
      resolve(false);
    }, timeoutMs);
    child.on("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
/** Failures: { seed, name, message }. */
const failures = [];
const seedsWithFailure = new Set();

const seedOf = (fullName) => {
  const m = /\(seed (\d+)\)/.exec(fullName);
  return m ? Number(m[1]) : undefined;
};

try {
  for (let lo = from; lo < from + count; lo += batch) {
    const hi = Math.min(lo + batch - 1, from + count - 1);
    const out = join(dir, `batch-${lo}.json`);
    const args = ["vitest", "run", file, "--reporter=dot", "--reporter=json"];
    args.push(`--outputFile.json=${out}`);
    if (filter) args.push("-t", filter);
    const ended = await runBatch(
      args,
      { ...process.env, SHARDKIT_SIM_SEEDS: `${lo}-${hi}` },
      batchTimeoutS * 1000,
    );
    if (!ended) {
      timedOutBatches.push(`${lo}-${hi}`);
      console.error(
        `[sim] seeds ${lo}-${hi}: no end within ${batchTimeoutS} s (a seed that never ends?); batch killed`,
      );
      continue;
    }
    if (!existsSync(out)) {
      crashedBatches++;
      console.error(`[sim] seeds ${lo}-${hi}: vitest wrote no report (crashed?)`);
      continue;
    }
    const report = JSON.parse(readFileSync(out, "utf8"));
    let batchFailures = 0;
    for (const f of report.testResults ?? [])
      for (const t of f.assertionResults ?? []) {
        if (t.status === "skipped" || t.status === "pending") continue;
        tests++;
        if (t.status === "passed") continue;
        batchFailures++;
        const seed = seedOf(t.fullName ?? "");
        if (seed !== undefined) seedsWithFailure.add(seed);
        const message = String(t.failureMessages?.[0] ?? "").split("\n")[0] ?? "";
        failures.push({ seed, name: t.title, message: message.slice(0, 300) });
      }
    const elapsed = Math.round((Date.now() - started) / 1000);
    console.log(
      `[sim] seeds ${lo}-${hi} done: ${batchFailures} failure(s); so far ${tests} tests, ${failures.length} failure(s), ${elapsed} s`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const quote = (s) => `"${s.replace(/(["\\$`])/g, "\\$1")}"`;
console.log("");
console.log(`== sim sweep report: ${file}${filter ? ` (tests matching ${quote(filter)})` : ""}`);
console.log(`seeds run:  ${from}-${from + count - 1} (${count})`);
console.log(`tests run:  ${tests}`);
console.log(
  `failures:   ${failures.length} test(s) on ${seedsWithFailure.size} seed(s)${crashedBatches > 0 ? `; ${crashedBatches} batch(es) without a report` : ""}`,
);
for (const range of timedOutBatches)
  console.log(
    `- seeds ${range}: the batch did not end within ${batchTimeoutS} s (killed); run them one by one: SHARDKIT_SIM_SEEDS=<seed> npx vitest run ${file}${filter ? ` -t ${quote(filter)}` : ""}`,
  );
console.log(`time:       ${Math.round((Date.now() - started) / 1000)} s`);
for (const f of failures) {
  console.log(`- seed ${f.seed ?? "?"}: ${f.name}`);
  if (f.message) console.log(`    ${f.message}`);
  // -t takes a pattern: the scenario tag ("S20w:") when the name has one
  const tag = /^(S\d+\w*):/.exec(f.name)?.[1];
  const pattern = tag ? `${tag}:` : f.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  console.log(
    `    replay: SHARDKIT_SIM_SEEDS=${f.seed ?? "<seed>"} npx vitest run ${file} -t ${quote(pattern)}`,
  );
}
process.exit(failures.length > 0 || crashedBatches > 0 || timedOutBatches.length > 0 ? 1 : 0);
