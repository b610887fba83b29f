/**
 * scripts/mutate.mjs mutates the journals' conflict checks by line range; each range must
 * still start at the code it names (RANGE_STARTS). An edit of a journal that moves the
 * code must update the ranges with it, or `npm run mutate` stops (as it did after the
 * SQLite busy-timeout change): this fails `npm test` instead.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("npm run mutate", () => {
  it("its line ranges of the journals' conflict checks start at the code they name", () => {
    const r = spawnSync(process.execPath, ["scripts/mutate.mjs", "--check-ranges"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\d+ line ranges start where they should/);
  }, 30_000);
});
