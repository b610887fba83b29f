/**
 * Runs every scripted interaction test of the shard region in
 * test/core/region/scripts/*.txt (format: ../script-runner.ts, commands:
 * region-script.ts). A failure names the script and line.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../script-runner.js";
import { newRegionWorld, REGION_COMMANDS } from "./region-script.js";

const DIR = join(import.meta.dirname, "scripts");
const scripts = readdirSync(DIR)
  .filter((f) => f.endsWith(".txt"))
  .sort();

describe("region scripted interaction tests", () => {
  it("finds the scripts", () => {
    expect(scripts.length).toBeGreaterThanOrEqual(10);
  });

  for (const file of scripts) {
    it(file, () => {
      const source = readFileSync(join(DIR, file), "utf8");
      const steps = runScript(file, source, newRegionWorld(), REGION_COMMANDS);
      expect(steps).toBeGreaterThan(0);
    });
  }
});
