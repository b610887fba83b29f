/**
 * Runs every scripted interaction test of the shard coordinator in
 * test/core/coordinator/scripts/*.txt (format: ../script-runner.ts, commands:
 * coordinator-script.ts). A failure names the script and line.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../script-runner.js";
import { COORDINATOR_COMMANDS, newCoordinatorWorld } from "./coordinator-script.js";

const DIR = join(import.meta.dirname, "scripts");
const scripts = readdirSync(DIR)
  .filter((f) => f.endsWith(".txt"))
  .sort();

describe("coordinator scripted interaction tests", () => {
  it("finds the scripts", () => {
    expect(scripts.length).toBeGreaterThanOrEqual(10);
  });

  for (const file of scripts) {
    it(file, () => {
      const source = readFileSync(join(DIR, file), "utf8");
      const steps = runScript(file, source, newCoordinatorWorld(), COORDINATOR_COMMANDS);
      expect(steps).toBeGreaterThan(0);
    });
  }
});
