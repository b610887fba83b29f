import { relative } from "node:path";
import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Real-process tests whose per-sender order assertions are sensitive to CPU contention
 * from other test files (see docs/testing.md, "Known issues"): they run in a second group,
 * after every other file, one file at a time (a single fork), so nothing else competes
 * with them for the 2 cores. (With the group's files side by side, S8 of
 * sharding-leave.test.ts saw messages out of order again.)
 */
const CONTENTION_SENSITIVE = [
  "test/cluster-real/sharding-leave.test.ts",
  // asks with a 5 s timeout across a rolling restart: 0 may fail
  "test/cluster-real/rolling-restart.test.ts",
];

/**
 * The files that run longest (CI timings, seconds on the 2-core target), started first so
 * that none of them starts last and runs alone at the end. Without a results cache (a
 * clean clone) vitest starts the largest files first, and several of these are small
 * files whose tests live in a shared module (one file per backend).
 */
const LONG_RUNNING = [
  "test/cluster-real/sharding-lease.test.ts", // 57
  "test/cluster-real/persistence-restart.test.ts", // 55
  "test/examples/examples.test.ts", // 42
  "test/cluster-real/sharding-lease-pg.test.ts", // 42
  "test/examples/sharding-demo.test.ts", // 37
  "test/cluster-real/lease-store-outage.test.ts", // 37
  "test/cluster-real/persistence-crash.test.ts", // 35
  "test/cluster-real/persistence-restart-pg.test.ts", // 32
  "test/management/management-api.test.ts", // 27
  "test/evolution/rolling-upgrade.test.ts", // 27
  "test/sharding/sharding-faults.sim.test.ts", // 26
  "test/remote/handshake-attacks.test.ts", // 24
  "test/cli/cluster-commands.test.ts", // 23
];

/**
 * Pure unit tests (machines, codecs, reference vectors: no processes, sockets, timers or
 * global state) run in one worker thread that keeps one module graph for all of them
 * (`isolate: false`), beside the forks of the other files: with a fresh graph per file,
 * importing the sources again for each of these ~90 small files cost more than the tests
 * (42 s of user CPU for them alone in isolated forks, 21 s in the shared thread;
 * docs/testing.md).
 */
const PURE_UNITS = [
  "test/core/**/*.test.ts",
  "test/protocol/**/*.test.ts",
  "test/base/**/*.test.ts",
  "test/conformance/**/*.test.ts",
];

/** LONG_RUNNING first, in that order; then vitest's own order (cached durations, size). */
class LongRunningFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONG_RUNNING.indexOf(relative(this.ctx.config.root, f.moduleId));
      return i === -1 ? LONG_RUNNING.length : i;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
    // transpiles the code of spawned children once (test/support/compiled-children.ts)
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    // Only the "units" project uses threads: one thread, one module graph for all its files
    // (vitest takes these options from the root config, not per project).
    poolOptions: { threads: { isolate: false, maxThreads: 1, minThreads: 1 } },
    // Four files at a time on this 2-core target: the long files are real-process tests
    // that mostly wait (failure detection, a 30 s SIGSTOP, removal margins) rather than
    // compute. Measured with PostgreSQL set: 358 s of wall time with 3 (1 962 tests),
    // 443-499 s with 2; later (2 440 tests, a machine a third slower per operation)
    // 369.7 s with 3 and 339.3 s with 4.
    maxWorkers: 4,
    minWorkers: 1,
    sequence: { sequencer: LongRunningFirst },
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "main",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...CONTENTION_SENSITIVE, ...PURE_UNITS],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "units",
          include: PURE_UNITS,
          pool: "threads",
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "alone",
          include: CONTENTION_SENSITIVE,
          sequence: { groupOrder: 1 },
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
