/**
 * One contract suite for the Lease port, run against the in-memory lease and the
 * PostgreSQL lease (when SHARDKIT_PG_URL is set; otherwise a visible skip line).
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import { MemoryLease, MemoryLeaseStore } from "../../src/persistence/memory/memory-lease.js";
import { PostgresLeaseStore } from "../../src/persistence/postgres/postgres-lease.js";
import type { Lease } from "../../src/ports/lease.js";
import { createNodeRuntime } from "../../src/runtime/node/index.js";

const runtime = createNodeRuntime({ logLevel: "off" });
/** Renewals every 200 ms, 6 per ttl: a loaded machine (or database) may delay a few. */
const timings = { ttlMs: 1_200, heartbeatIntervalMs: 200 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Backend {
  lease(name: string, owner: string): Lease;
  /** Makes the current holder's row look expired (as if it stopped renewing long ago). */
  expire(name: string): Promise<void>;
  holder(name: string): Promise<string | undefined>;
}

const memStore = new MemoryLeaseStore(runtime.clock);
const backends: [string, () => Backend | undefined][] = [
  [
    "memory",
    () => ({
      lease: (n, o) => new MemoryLease(memStore, n, o, runtime.clock, runtime.scheduler, timings),
      expire: async (n) => {
        const h = memStore.holderOf(n);
        if (h !== undefined) memStore.release(n, h);
      },
      holder: async (n) => memStore.holderOf(n),
    }),
  ],
];

const PG_URL = process.env.SHARDKIT_PG_URL;
let pool: pg.Pool | undefined;
if (PG_URL) {
  pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  const store = new PostgresLeaseStore({
    pool,
    tablePrefix: "shardkit_test_",
    clock: runtime.clock,
    scheduler: runtime.scheduler,
  });
  backends.push([
    "postgres",
    () => ({
      lease: (n, o) => store.lease(n, o, timings),
      expire: async (n) => {
        await pool?.query(
          `UPDATE ${store.table} SET expires_at = now() - interval '1 second' WHERE name = $1`,
          [n],
        );
      },
      holder: (n) => store.holderOf(n),
    }),
  ]);
} else {
  console.log("SKIP postgres lease contract: SHARDKIT_PG_URL is not set");
}

afterAll(async () => {
  runtime.scheduler.dispose();
  await pool?.end();
});

let counter = 0;
const uniqueName = () => `lease-${process.pid}-${Date.now()}-${counter++}`;

describe.each(backends)("Lease contract: %s", (_name, make) => {
  const b = make() as Backend;
  const held: Lease[] = [];
  const lease = (n: string, o: string) => {
    const l = b.lease(n, o);
    held.push(l);
    return l;
  };
  afterAll(async () => {
    for (const l of held) await l.release().catch(() => false);
  });

  it("only one owner holds a lease; release lets another take it", async () => {
    const n = uniqueName();
    const a = lease(n, "a");
    const c = lease(n, "c");
    expect(await a.acquire()).toBe(true);
    expect(a.checkLease()).toBe(true);
    expect(await c.acquire()).toBe(false);
    expect(c.checkLease()).toBe(false);
    expect(await b.holder(n)).toBe("a");
    expect(await a.release()).toBe(true);
    expect(a.checkLease()).toBe(false);
    expect(await c.acquire()).toBe(true);
    expect(await b.holder(n)).toBe("c");
  });

  it("acquire is re-entrant for the holder and renews while held", async () => {
    const n = uniqueName();
    const a = lease(n, "a");
    expect(await a.acquire()).toBe(true);
    expect(await a.acquire()).toBe(true);
    await sleep(timings.ttlMs * 2);
    expect(a.checkLease()).toBe(true);
    expect(await lease(n, "x").acquire()).toBe(false);
  });

  it("an expired lease can be taken; the old holder is told it lost it", async () => {
    const n = uniqueName();
    const lost: unknown[] = [];
    const a = lease(n, "a");
    expect(await a.acquire((r) => lost.push(r))).toBe(true);
    await b.expire(n);
    expect(await lease(n, "z").acquire()).toBe(true);
    // the old holder learns it at its next heartbeat; a loaded machine may delay that
    for (let waited = 0; lost.length === 0 && waited < 5_000; waited += timings.heartbeatIntervalMs)
      await sleep(timings.heartbeatIntervalMs);
    expect(lost).toHaveLength(1);
    expect(a.checkLease()).toBe(false);
  });
});

describe("lease settings", () => {
  it("rejects a heartbeat interval not below the ttl", () => {
    expect(
      () =>
        new MemoryLease(memStore, "x", "o", runtime.clock, runtime.scheduler, {
          ttlMs: 100,
          heartbeatIntervalMs: 100,
        }),
    ).toThrow(ConfigError);
  });
});
