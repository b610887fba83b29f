/**
 * P2 with real processes: three cluster members host event-sourced accounts (the
 * `npm start` demo node) on one shared store — a SQLite file, and PostgreSQL when
 * SHARDKIT_PG_URL is set (else a visible SKIP line). Node 0 deposits into 100 accounts
 * while node 1, which hosts a third of them, is killed with SIGKILL in the middle of its
 * writes. Node 1 is started again. Then: no acknowledged deposit is missing (every balance
 * is at least the deposits acknowledged for it), each account's events are numbered
 * 1..n without a hole, and the balance equals that n (each event deposits 1).
 */
import { afterAll, describe, expect, it } from "vitest";
import { kill } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import {
  accountSequences,
  cmd,
  demoCluster,
  demoStores,
  startDemoNode,
  waitRegions,
  waitUp,
} from "./demo-cluster.js";

installChildTeardown("perFile");

const ACCOUNTS = 100;
const { stores, cleanup } = demoStores("P2", "p2");
afterAll(cleanup);

describe.each(stores)("P2 on %s: kill -9 while entities persist", (_name, makeStore) => {
  it("no acknowledged event is lost and sequence numbers have no holes", async () => {
    const store = makeStore();
    const c = await demoCluster(store, { accounts: ACCOUNTS });
    const nodes = [0, 1, 2].map((i) => startDemoNode(c, i));
    await waitRegions(nodes);
    const [n0, n1, n2] = nodes as [(typeof nodes)[0], (typeof nodes)[0], (typeof nodes)[0]];
    await cmd(n0, { cmd: "balances", accounts: ACCOUNTS }, 60_000); // every account started
    const onN1 = Number((await cmd(n1, { cmd: "stats" })).entities);
    expect(onN1).toBeGreaterThan(0);
    await cmd(n0, { cmd: "load", workers: 40 });
    const loadOf = async () => Number((await cmd(n0, { cmd: "load-stats" })).completed);
    const t0 = Date.now();
    while ((await loadOf()) < 2_000 && Date.now() - t0 < 20_000)
      await new Promise((r) => setTimeout(r, 100));
    expect(await loadOf()).toBeGreaterThanOrEqual(2_000);
    await kill(n1, "SIGKILL");
    // Keep writing while node 1 is detected as gone, downed and its shards moved.
    await new Promise((r) => setTimeout(r, 4_000));
    const restarted = startDemoNode(c, 1);
    await waitUp([restarted]);
    // Wait until no deposit ask is in flight (each times out after 5 s).
    let load = await cmd(n0, { cmd: "stop-load" });
    for (let i = 0; i < 40 && Number(load.inFlight) > 0; i++) {
      await new Promise((r) => setTimeout(r, 250));
      load = await cmd(n0, { cmd: "load-stats" });
    }
    expect(Number(load.inFlight)).toBe(0);
    const acked = (await cmd(n0, { cmd: "acked" })).acked as Record<string, number>;
    const ackedTotal = Object.values(acked).reduce((s, n) => s + n, 0);
    expect(ackedTotal).toBe(Number(load.completed));
    // Read every balance through the restarted node (its region routes to the new homes).
    const read = await cmd(restarted, { cmd: "balances", accounts: ACCOUNTS }, 60_000);
    const balances = read.balances as Record<string, number>;
    const seqs = await accountSequences(store);
    for (let i = 0; i < ACCOUNTS; i++) {
      const id = `account-${i}`;
      const bal = balances[id] as number;
      expect(bal, `${id}: balance below acknowledged deposits`).toBeGreaterThanOrEqual(
        acked[id] ?? 0,
      );
      const r = seqs.get(`Account|${id}`) ?? { count: 0, min: 1, max: 0 };
      expect(r.count, `${id}: hole in sequence numbers ${JSON.stringify(r)}`).toBe(
        r.max - r.min + 1,
      );
      expect(r.max, `${id}: balance vs events`).toBe(bal);
    }
    // Nothing beyond what the failed asks can explain.
    const total = Object.values(balances).reduce((s, n) => s + n, 0);
    expect(total).toBeGreaterThanOrEqual(ackedTotal);
    expect(total).toBeLessThanOrEqual(ackedTotal + Number(load.failed));
    void n2;
  }, 150_000);
});
