/**
 * The lease store stopped and restarted, with real processes and a real PostgreSQL
 * (docs/sharding.md, "When the lease store fails"): three members of the `npm start` demo
 * host event-sourced accounts with shard leases, journal and leases in a database of their
 * own on the shared server. The test "stops" that database for 30 s the way an outage
 * looks to a client: every connection to it is terminated and new ones are refused
 * (`ALLOW_CONNECTIONS false` + `pg_terminate_backend`), then it is allowed again.
 *
 * - during the outage no member runs an entity once the leases' validity has passed
 *   (running shards stop before their leases can expire; none starts without one), and
 *   no member process dies (a pool whose idle connections are terminated must not crash it);
 * - afterwards every account answers again, by itself, within a bound; the deposits
 *   acknowledged before the outage are all in the balances.
 * Needs SHARDKIT_PG_URL (else a visible SKIP line).
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { kill } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import { cmd, demoCluster, startDemoNode, waitRegions } from "./demo-cluster.js";

installChildTeardown("perFile");

const URL = process.env.SHARDKIT_PG_URL;
const ACCOUNTS = 40;
const OUTAGE_MS = 30_000;
/** Lease validity with the defaults (docs/sharding.md: 3 460 ms) plus stopping and slack. */
const STOPPED_WITHIN_MS = 10_000;
/** Every account answers again this long after the database is back, at most. */
const RECOVERY_MS = 45_000;
const PROBE_ASK_TIMEOUT_MS = 2_000;
const DB = `shardkit_outage_${process.pid}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function urlOf(database: string): string {
  const u = new globalThis.URL(URL as string);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(f: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: URL });
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.end();
  }
}

async function setAllowed(allowed: boolean): Promise<void> {
  await admin(async (c) => {
    await c.query(`ALTER DATABASE ${DB} WITH ALLOW_CONNECTIONS ${allowed}`);
    if (!allowed)
      await c.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [DB],
      );
  });
}

if (URL === undefined)
  console.log("SKIP lease store outage (real processes): SHARDKIT_PG_URL is not set");

describe.runIf(URL !== undefined)("lease store outage on PostgreSQL (real processes)", () => {
  afterAll(async () => {
    await admin(async (c) => {
      await c.query(`ALTER DATABASE ${DB} WITH ALLOW_CONNECTIONS true`).catch(() => {});
      await c.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    });
  });

  it("database down 30 s: no entity runs without a lease, no member dies, every account answers again afterwards", async () => {
    await admin((c) => c.query(`CREATE DATABASE ${DB}`));
    const store = { kind: "postgres" as const, url: urlOf(DB), prefix: "shardkit_" };
    const c = await demoCluster(store, { accounts: ACCOUNTS, leases: true });
    const nodes = [0, 1, 2].map((i) => startDemoNode(c, i));
    await waitRegions(nodes);
    const [n0] = nodes as [(typeof nodes)[0]];
    await cmd(n0, { cmd: "balances", accounts: ACCOUNTS }, 60_000);
    await cmd(n0, { cmd: "load", workers: 5 });
    await sleep(1_000);
    const before = await cmd(n0, { cmd: "stop-load" });
    const acked = Number(before.completed);
    expect(acked).toBeGreaterThan(0);
    const sumBefore = Number((await cmd(n0, { cmd: "balances", accounts: ACCOUNTS })).sum);

    await setAllowed(false);
    const downAt = Date.now();
    try {
      // every member stops its entities once the leases' validity has passed
      let running = Number.POSITIVE_INFINITY;
      while (running > 0 && Date.now() - downAt < STOPPED_WITHIN_MS) {
        await sleep(500);
        const stats = await Promise.all(nodes.map((n) => cmd(n, { cmd: "stats" })));
        running = stats.reduce((s, x) => s + Number(x.entities), 0);
      }
      const stoppedAfter = Date.now() - downAt;
      expect(running, "entities still running without a lease store").toBe(0);
      console.log(
        `lease store down: every entity stopped ${stoppedAfter} ms after the outage began`,
      );
      // and none starts while the store is down, even when asked for
      const asked = await cmd(
        n0,
        { cmd: "balances", accounts: ACCOUNTS, timeoutMs: PROBE_ASK_TIMEOUT_MS },
        30_000,
      ).catch((e: unknown) => String(e));
      expect(typeof asked === "string" ? asked : JSON.stringify(asked)).toMatch(
        /timed? ?out|Timeout|error/i,
      );
      await sleep(Math.max(0, OUTAGE_MS - (Date.now() - downAt)));
      const stats = await Promise.all(nodes.map((n) => cmd(n, { cmd: "stats" })));
      expect(stats.map((s) => Number(s.entities))).toEqual([0, 0, 0]);
      for (const n of nodes) expect(n.process.exitCode, `${n.name} exited`).toBeNull();
    } finally {
      await setAllowed(true);
    }
    const upAt = Date.now();
    for (;;) {
      const r = await cmd(
        n0,
        { cmd: "balances", accounts: ACCOUNTS, timeoutMs: PROBE_ASK_TIMEOUT_MS },
        30_000,
      ).catch(() => undefined);
      if (Number(r?.count) === ACCOUNTS) {
        expect(Number(r?.sum)).toBe(sumBefore);
        break;
      }
      if (Date.now() - upAt > RECOVERY_MS)
        throw new Error(
          `not every account answered within ${RECOVERY_MS} ms of the database coming back`,
        );
      await sleep(250);
    }
    console.log(`lease store back: every account answered again after ${Date.now() - upAt} ms`);
    await Promise.all(nodes.map((n) => kill(n)));
  }, 180_000);
});
