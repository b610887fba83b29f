/**
 * pool-errors.ts: an idle client's connection dying makes a node-postgres pool emit
 * "error"; shardkit's PostgreSQL stores add one listener so that this does not end the
 * process (test/cluster-real/lease-store-outage.test.ts shows it with a real database).
 * No server needed: the pool never connects.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresLeaseStore, postgresPersistence } from "../../src/persistence/postgres/index.js";
import {
  idleClientErrorsOf,
  survivePoolErrors,
} from "../../src/persistence/postgres/pool-errors.js";
import { createNodeRuntime } from "../../src/runtime/node/index.js";

describe("PostgreSQL pool errors", () => {
  it("without the listener an idle-client error throws (what would end the process)", () => {
    const pool = new pg.Pool({ max: 1 });
    expect(() =>
      pool.emit("error", new Error("terminating connection due to administrator command")),
    ).toThrow(/administrator command/);
  });

  it("the stores add one listener per pool that counts idle-client errors", async () => {
    const pool = new pg.Pool({ max: 1 });
    const p = postgresPersistence({ pool, createSchema: false });
    const rt = createNodeRuntime({ logLevel: "off" });
    new PostgresLeaseStore({ pool, clock: rt.clock, scheduler: rt.scheduler });
    survivePoolErrors(pool);
    expect(pool.listenerCount("error")).toBe(1);
    expect(() => pool.emit("error", new Error("terminating connection"))).not.toThrow();
    pool.emit("error", new Error("server closed the connection unexpectedly"));
    expect(idleClientErrorsOf(pool)).toBe(2);
    expect(idleClientErrorsOf(new pg.Pool())).toBe(0);
    await p.close();
    await pool.end();
  });
});
