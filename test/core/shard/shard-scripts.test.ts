/**
 * Runs the shard scripts in test/core/shard/scripts/*.txt through the shared runner
 * (../script-runner.ts) with the shard commands (shard-script-commands.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../script-runner.js";
import { newShardWorld, SHARD_COMMANDS } from "./shard-script-commands.js";

const DIR = join(import.meta.dirname, "scripts");
const scripts = readdirSync(DIR)
  .filter((f) => f.endsWith(".txt"))
  .sort();

describe("shard scripts", () => {
  it("finds the scripts", () => {
    expect(scripts.length).toBeGreaterThanOrEqual(10);
  });

  for (const file of scripts) {
    it(file, () => {
      const source = readFileSync(join(DIR, file), "utf8");
      expect(runScript(file, source, newShardWorld(), SHARD_COMMANDS)).toBeGreaterThan(0);
    });
  }

  it("the world refuses a second live incarnation", () => {
    // A driver that reports a termination the machine never sees would let the machine
    // start the entity again while the world still holds the old actor.
    const world = newShardWorld();
    runScript(
      "x.txt",
      "deliver a m1\n> start a\n> timer-start idle-sweep 60000\n",
      world,
      SHARD_COMMANDS,
    );
    world.live.add("b");
    expect(() => runScript("y.txt", "deliver b m1\n> start b\n", world, SHARD_COMMANDS)).toThrow(
      /second live incarnation of b/,
    );
  });
});
