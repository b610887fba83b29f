/**
 * Runs every scripted interaction test in test/core/scripts/*.txt (format:
 * script-runner.ts, commands: script-commands.ts). A failure names the script and line.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS, newWorld } from "./script-commands.js";
import { runScript } from "./script-runner.js";

const DIR = join(import.meta.dirname, "scripts");
const scripts = readdirSync(DIR)
  .filter((f) => f.endsWith(".txt"))
  .sort();

describe("scripted interaction tests", () => {
  it("finds the scripts", () => {
    expect(scripts.length).toBeGreaterThanOrEqual(8);
  });

  for (const file of scripts) {
    it(file, () => {
      const steps = runScript(file, readFileSync(join(DIR, file), "utf8"), newWorld(), COMMANDS);
      expect(steps).toBeGreaterThan(0);
    });
  }

  it("the runner reports a mismatch with the script name and line", () => {
    const script = "members a:joining\nseen a\nleader-actions self=a\n> up a upNumber=2\n";
    expect(() => runScript("bad.txt", script, newWorld(), COMMANDS)).toThrow(
      /bad\.txt:3: leader-actions self=a[\s\S]*expected:[\s\S]*upNumber=2[\s\S]*actual:[\s\S]*upNumber=1/,
    );
  });

  it("the runner rejects output after a setup command and unknown commands", () => {
    expect(() => runScript("s.txt", "members a:up\n> ok\n", newWorld(), COMMANDS)).toThrow(
      /s\.txt:1/,
    );
    expect(() => runScript("u.txt", "\n\nfrobnicate\n", newWorld(), COMMANDS)).toThrow(
      /u\.txt:3: frobnicate[\s\S]*unknown command/,
    );
  });
});
