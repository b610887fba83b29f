/**
 * scripts/sim.mjs (`npm run sim`): a batch that does not end within --batch-timeout is
 * killed with all its processes and reported with its seed range, so a seed whose run
 * never ends (a livelock spins its worker; vitest's test timeout cannot interrupt
 * synchronous code) does not stall a long sweep; bad arguments exit 2.
 */
import { execSync, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("npm run sim", () => {
  it("kills a batch that outlives --batch-timeout and reports its seed range", () => {
    const r = spawnSync(
      process.execPath,
      [
        "scripts/sim.mjs",
        "--scenario",
        "sharding-faults",
        "--filter",
        "S20wL",
        "--seeds",
        "1",
        "--from",
        "3",
        "--batch-timeout",
        "1",
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("[sim] seeds 3-3: no end within 1 s");
    expect(r.stdout).toContain("- seeds 3-3: the batch did not end within 1 s (killed)");
    // nothing of the killed batch is left running
    const left = execSync("ps -eo args", { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.includes("shardkit-sim-") && l.includes("/batch-3.json"));
    expect(left).toEqual([]);
  }, 40_000);

  it("rejects a batch timeout that is not a positive integer", () => {
    const r = spawnSync(
      process.execPath,
      ["scripts/sim.mjs", "--scenario", "sharding-faults", "--batch-timeout", "0"],
      { encoding: "utf8", timeout: 10_000 },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--batch-timeout");
  });
});
