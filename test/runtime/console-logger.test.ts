import { describe, expect, it } from "vitest";
import { ConsoleLogger, type ConsoleLoggerOptions } from "../../src/runtime/node/index.js";

const FIXED_MS = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

function capture(options: ConsoleLoggerOptions = {}): { logger: ConsoleLogger; lines: string[] } {
  const lines: string[] = [];
  const logger = new ConsoleLogger({
    env: {},
    wallClockMs: () => FIXED_MS,
    write: (line) => lines.push(line),
    ...options,
  });
  return { logger, lines };
}

describe("ConsoleLogger text format", () => {
  it("writes timestamp, level, context fields, message and record fields on one line", () => {
    const { logger, lines } = capture();
    logger
      .child({ node: "a:1" })
      .child({ shard: 7 })
      .info("shard started", {
        entity: "cart-42",
        note: "two words",
        ok: true,
        err: new Error("bad\nthing"),
      });
    expect(lines).toEqual([
      '2026-01-02T03:04:05.678Z INFO [node=a:1 shard=7] shard started entity=cart-42 note="two words" ok=true err="Error: bad\\nthing"',
    ]);
  });

  it("escapes newlines in the message and omits empty brackets", () => {
    const { logger, lines } = capture();
    logger.warn("line1\nline2");
    expect(lines).toEqual(["2026-01-02T03:04:05.678Z WARN line1\\nline2"]);
  });

  it("serializes objects, bigints and cycles without throwing", () => {
    const { logger, lines } = capture();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    logger.error("odd values", { obj: { x: [1, 2] }, big: 5n, cyclic });
    expect(lines[0]).toBe(
      '2026-01-02T03:04:05.678Z ERROR odd values obj={"x":[1,2]} big=5n cyclic={"a":1,"self":"[Circular]"}',
    );
  });
});

describe("ConsoleLogger JSON format", () => {
  it("writes one JSON object per record; reserved keys cannot be overridden", () => {
    const { logger, lines } = capture({ format: "json", fields: { node: "a" } });
    logger.info("hello", { count: 2, msg: "spoof", big: 3n });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      time: "2026-01-02T03:04:05.678Z",
      level: "info",
      msg: "hello",
      node: "a",
      count: 2,
      big: "3",
    });
  });

  it("includes error name, message, code and stack", () => {
    const { logger, lines } = capture({ format: "json" });
    const err = Object.assign(new Error("nope"), { code: "E_X" });
    logger.error("failed", { err });
    const parsed = JSON.parse(lines[0]!) as { err: Record<string, unknown> };
    expect(parsed.err).toMatchObject({ name: "Error", message: "nope", code: "E_X" });
    expect(typeof parsed.err.stack).toBe("string");
  });
});

describe("ConsoleLogger level threshold", () => {
  it("defaults to info", () => {
    const { logger, lines } = capture();
    logger.debug("hidden");
    logger.info("shown");
    expect(lines).toHaveLength(1);
    expect(logger.isEnabled("debug")).toBe(false);
    expect(logger.isEnabled("error")).toBe(true);
    expect(logger.isEnabled("off")).toBe(false);
  });

  it("honours the level option and keeps it in children", () => {
    const { logger, lines } = capture({ level: "warn" });
    const child = logger.child({ x: 1 });
    child.info("hidden");
    child.warn("shown");
    expect(lines).toHaveLength(1);
  });

  it("lets a valid SHARDKIT_LOG_LEVEL override the option", () => {
    const { logger, lines } = capture({ level: "error", env: { SHARDKIT_LOG_LEVEL: " DEBUG " } });
    expect(logger.level).toBe("debug");
    logger.debug("shown");
    expect(lines).toHaveLength(1);
  });

  it("ignores an invalid SHARDKIT_LOG_LEVEL", () => {
    const { logger } = capture({ level: "warn", env: { SHARDKIT_LOG_LEVEL: "verbose" } });
    expect(logger.level).toBe("warn");
  });

  it("off silences everything", () => {
    const { logger, lines } = capture({ level: "off" });
    logger.error("hidden");
    expect(lines).toEqual([]);
  });
});
