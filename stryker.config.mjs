// StrykerJS configuration for `npm run mutate` (see docs/testing.md, "Mutation testing").
// scripts/mutate.mjs picks the files to mutate (`--mutate`) per folder and gives each
// folder its own incremental file and reports; this file holds what every run shares.
// Report names per folder (set by scripts/mutate.mjs).
const folder = process.env.SHARDKIT_MUTATE_FOLDER ?? "all";

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: "npm",
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutate.config.ts", related: true },
  checkers: ["typescript"],
  // scripts/mutate.mjs --narrow-check: only the mutated files and their imports
  tsconfigFile: process.env.SHARDKIT_MUTATE_TSCONFIG ?? "tsconfig.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  // Each mutant runs only the tests that executed its code in the initial run.
  coverageAnalysis: "perTest",
  // Module-level constants would need every test per mutant; they are settings defaults,
  // pinned by the settings tests anyway.
  ignoreStatic: true,
  // The machine is shared: one or two test processes at a time (override with --concurrency).
  concurrency: 1,
  incremental: true,
  incrementalFile: `reports/mutation/${folder}.incremental.json`,
  timeoutMS: 10_000,
  timeoutFactor: 2,
  thresholds: { high: 80, low: 60, break: null },
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: `reports/mutation/${folder}.html` },
  jsonReporter: { fileName: `reports/mutation/${folder}.json` },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
};
