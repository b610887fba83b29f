#!/usr/bin/env node
// `npm run sim -- --scenario <name> --seeds <n> [--from <seed>]`: runs the simulator
// scenario file test/cluster/<name>.sim.test.ts (or test/sharding/<name>.sim.test.ts) over
// seeds from..from+n-1 (default 1..100)
// and prints each failing seed with its replay command.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const scenario = arg("scenario", undefined);
if (!scenario) {
  console.error(
    "usage: npm run sim -- --scenario <membership|remoting|singleton|sharding-faults|...> [--seeds 100] [--from 1]",
  );
  process.exit(2);
}
const count = Number(arg("seeds", "100"));
const from = Number(arg("from", "1"));
const file = ["cluster", "sharding", "ddata"]
  .map((dir) => `test/${dir}/${scenario}.sim.test.ts`)
  .find((f) => existsSync(f));
if (!file) {
  console.error(`no scenario file test/{cluster,sharding,ddata}/${scenario}.sim.test.ts`);
  process.exit(2);
}
const r = spawnSync("npx", ["vitest", "run", file, "--reporter=dot"], {
  stdio: "inherit",
  env: { ...process.env, SHARDKIT_SIM_SEEDS: `${from}-${from + count - 1}` },
});
if (r.status !== 0)
  console.error(
    `failures above name their seed; replay one with: SHARDKIT_SIM_SEEDS=<seed> npx vitest run ${file}`,
  );
process.exit(r.status ?? 1);
