/** Runs every scripted interaction test of the shutdown machine (scripts/*.txt). */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runShutdownScript } from "./shutdown-script.js";

const DIR = join(import.meta.dirname, "scripts");
const files = readdirSync(DIR)
  .filter((f) => f.endsWith(".txt"))
  .sort();

describe("shutdown machine scripts", () => {
  it("finds the scripts", () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
  });

  it.each(files)("%s", (file) => {
    runShutdownScript(file, readFileSync(join(DIR, file), "utf8"));
  });

  it("the interpreter catches a wrong trace", () => {
    expect(() => runShutdownScript("inline", "phases a\n> order b\n")).toThrow(/inline:1/);
  });
});
