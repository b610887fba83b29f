/**
 * `close()` of a SQLite persistence with its background checkpointer (a worker thread
 * that does not keep the process alive) must keep the process alive until it resolves:
 * a program that awaits it and then goes on (a restart in the same process, the README
 * persistence example) must get to go on.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnNode } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";

installChildTeardown("perFile");

const dir = mkdtempSync(join(tmpdir(), "shardkit-close-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SQLite close", () => {
  it("a process that awaits close() runs on after it, and the file opens again", async () => {
    const child = spawnNode("test/persistence/sqlite-close-main.ts", [join(dir, "c.db")], {
      name: "close",
    });
    const exit = await child.exited;
    expect(child.events.map((e) => e.event)).toEqual(["closed", "reopened"]);
    expect(child.events[1]?.highest).toBe(1);
    expect(exit.code).toBe(0);
  }, 60_000);
});
