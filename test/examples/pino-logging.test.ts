/**
 * The pino example (examples/pino-logging.ts): a member logging through pino writes JSON
 * lines with pino's fields (level, msg, bindings), shardkit's fields, and the member's
 * address on every line logged after remoting bound; warnings are also kept for the
 * dashboard (`recentWarnings`). Also SHARDKIT_LOG_FORMAT for the console logger.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { startWithPino } from "../../examples/pino-logging.js";
import { ConsoleLogger } from "../../src/runtime/node/index.js";

describe("pino adapter example", () => {
  it("writes JSON lines with the member address and shardkit fields", {
    timeout: 30_000,
  }, async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split("\n")) if (l.trim() !== "") lines.push(JSON.parse(l));
        done();
      },
    });
    const node = await startWithPino(0, sink);
    try {
      node.system.log
        .child({ type: "Cart", shard: "3" })
        .warn("example warning", { entity: "c-1" });
      await new Promise((r) => setTimeout(r, 50));
      const w = lines.find((l) => l.msg === "example warning");
      expect(w).toMatchObject({
        level: 40,
        app: "pino-example",
        member: node.address,
        type: "Cart",
        shard: "3",
        entity: "c-1",
        system: "pino-example",
      });
      const formed = lines.find((l) => l.msg === "formed a new cluster");
      expect(formed?.member).toBe(node.address);
      expect(node.recentWarnings().map((e) => e.message)).toContain("example warning");
    } finally {
      await node.shutdown();
    }
  });
});

describe("SHARDKIT_LOG_FORMAT", () => {
  it("json and pretty override the option", { timeout: 5_000 }, () => {
    const out: string[] = [];
    const json = new ConsoleLogger({
      env: { SHARDKIT_LOG_FORMAT: "json" },
      write: (l) => out.push(l),
      wallClockMs: () => 0,
    });
    json.info("hello", { member: "s@h:1" });
    expect(JSON.parse(out[0] as string)).toMatchObject({
      msg: "hello",
      member: "s@h:1",
      level: "info",
    });
    const pretty = new ConsoleLogger({
      format: "json",
      env: { SHARDKIT_LOG_FORMAT: "pretty" },
      write: (l) => out.push(l),
      wallClockMs: () => 0,
    });
    pretty.info("hello", { member: "s@h:1" });
    expect(out[1]).toBe("1970-01-01T00:00:00.000Z INFO hello member=s@h:1");
    const bad = new ConsoleLogger({
      env: { SHARDKIT_LOG_FORMAT: "xml" },
      write: (l) => out.push(l),
    });
    bad.info("x");
    expect(out[2]).toMatch(/ INFO x$/);
  });
});
