import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
    pool: "forks",
    // Two files at a time on this 2-core target: most of the long files are real-process
    // tests that wait on timers and sockets more than they compute.
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ["default"],
  },
});
