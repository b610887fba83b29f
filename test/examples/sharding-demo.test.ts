/**
 * `npm start`'s sharding demo must run: 3 nodes on SQLite as real child processes (the
 * demo's own nodes exit when it goes away; run-example.ts kills the demo if it hangs).
 */
import { describe, expect, it } from "vitest";
import { killExamplesAfterEach, run } from "./run-example.js";

killExamplesAfterEach();

describe("examples", () => {
  it("npm start's sharding demo runs 3 nodes on SQLite, moves node c's shards, restarts c, loses nothing and exits 0", async () => {
    const { code, out } = await run(["examples/sharding-demo/main.ts", "--seconds", "24"], 100_000);
    expect(out).toMatch(/t=\d+s msgs\/s=[\d ]+ entities=[\d ]+ shards a:\d+ b:\d+ c:\d+/);
    expect(out).toContain("stopping node c gracefully");
    expect(out).toMatch(
      /management API: a http:\/\/127\.0\.0\.1:\d+, b http:\/\/127\.0\.0\.1:\d+, c http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(out).toMatch(/npm run shardkit -- members --url http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toMatch(/dashboard \(open in a browser\): http:\/\/127\.0\.0\.1:\d+\/dashboard/);
    expect(out).toMatch(
      /shards moved: node c's (\d+) shards now run on a \(\d+\) and b \(\d+\) — a:\d+→\d+ b:\d+→\d+ c:\1→0/,
    );
    expect(out).toMatch(/t=12s msgs\/s=[\d ]+ entities=[\d ]+ shards a:\d+ b:\d+ c:gone/);
    expect(out).toContain("starting node c again");
    expect(out).toMatch(/node c is back with \d+ shards/);
    expect(out).toMatch(
      /state check: ([\d ]+) deposits acknowledged.*balances grew by [\d ]+: OK, nothing lost/,
    );
    expect(out).toContain("all nodes stopped; bye");
    expect(code).toBe(0);
  }, 110_000);
});
