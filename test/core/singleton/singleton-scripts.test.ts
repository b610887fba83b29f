/**
 * Runs the singleton scripted interaction tests in test/core/singleton/scripts/*.txt
 * (format: ../script-runner.ts, commands: singleton-script-commands.ts). A failure names
 * the script and line.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../script-runner.js";
import { newSingletonWorld, SINGLETON_COMMANDS } from "./singleton-script-commands.js";

const DIR = join(import.meta.dirname, "scripts");
const scripts = readdirSync(DIR)
  .filter((f) => f.endsWith(".txt"))
  .sort();

describe("singleton scripted interaction tests", () => {
  it("finds the scripts", () => {
    expect(scripts.length).toBeGreaterThanOrEqual(9);
  });

  for (const file of scripts) {
    it(file, () => {
      const source = readFileSync(join(DIR, file), "utf8");
      // Each script may restart the machine with `manager`/`proxy`; one world per file.
      const steps = runScript(file, source, newSingletonWorld(), SINGLETON_COMMANDS);
      expect(steps).toBeGreaterThan(0);
    });
  }

  it("a wrong expectation fails with the script line", () => {
    const script = "manager self=a\nmembers a:up:1\n> => Younger\n";
    expect(() => runScript("bad.txt", script, newSingletonWorld(), SINGLETON_COMMANDS)).toThrow(
      /bad\.txt:2: members a:up:1[\s\S]*actual:[\s\S]*start-instance/,
    );
  });
});
