/**
 * P4 (and the "full cluster restart" part of S11) with real processes: a 3-node cluster
 * of the `npm start` demo node with remembered, event-sourced accounts and the persistent
 * coordinator store, on one SQLite file — and on PostgreSQL when SHARDKIT_PG_URL is set
 * (else a visible SKIP line). Deposits go to 30 accounts; one member is killed (SIGKILL)
 * and its remembered accounts start on the other two without a message (S11 crash); then
 * the other two are killed and a new cluster starts on the same ports and store. Without any message to
 * them, the 30 accounts run again (remembered entities), the new coordinator recovered
 * its allocations from the journal, and every balance is what it was. The same with
 * sharding's state in Distributed Data (stateStoreMode "ddata", durable keys in a SQLite
 * file per member): there the third member joins the loaded cluster first (S7) and the
 * member killed is the coordinator's (S5).
 *
 * The tests are defined here and run by one file per backend (`persistence-restart.test.ts` for SQLite,
 * `persistence-restart-pg.test.ts` for PostgreSQL), so the two backends run side by side.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type Child, kill, waitForStderr } from "../support/child-process.js";
import {
  cmd,
  demoCluster,
  demoStores,
  startDemoNode,
  waitRegions,
  waitUp,
} from "./demo-cluster.js";

const ACCOUNTS = 30;

async function liveEntities(nodes: readonly Child[]): Promise<number> {
  let n = 0;
  for (const node of nodes) n += Number((await cmd(node, { cmd: "stats" })).entities);
  return n;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`not reached within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Defines the tests on the stores of `only` (SQLite, or PostgreSQL when configured). */
export function describePersistenceRestart(only: "sqlite" | "postgres"): void {
  const { stores, cleanup } = demoStores("P4", "p4", { ddata: true, only });
  afterAll(cleanup);
  // PostgreSQL not configured: demoStores printed the SKIP line; the file still needs a test.
  if (stores.length === 0) it.skip(`${only}: not configured`, () => {});
  describe.each(stores)("P4 on %s: full cluster stop and start", (_name, makeStore) => {
    it("remembered entities run again without a message, allocations are recovered, balances kept", async () => {
      const store = makeStore();
      const ddata = store.kind === "sqlite" && store.ddataDir !== undefined;
      const c = await demoCluster(store, { accounts: ACCOUNTS, remember: true });
      // ddata: the third member joins a loaded cluster (S7), and the member killed below is
      // the coordinator's (S5): the new coordinator reads the allocations with `majority`.
      const first = (ddata ? [0, 1] : [0, 1, 2]).map((i) => startDemoNode(c, i));
      await waitRegions(first);
      const n0 = first[0] as Child;
      const expected: Record<string, number> = {};
      for (let i = 0; i < ACCOUNTS; i++) {
        const id = `account-${i}`;
        expected[id] = Number(
          (await cmd(n0, { cmd: "deposit", account: id, amount: i + 1 })).balance,
        );
      }
      expect(await liveEntities(first)).toBe(ACCOUNTS);
      if (ddata) {
        first.push(startDemoNode(c, 2));
        await waitRegions(first);
        await until(
          "S7: shards rebalanced to the joining member, their accounts remembered there",
          async () =>
            Number((await cmd(first[2] as Child, { cmd: "stats" })).entities) > 0 &&
            (await liveEntities(first)) === ACCOUNTS,
          40_000,
        );
      }
      const spread = await Promise.all(
        first.map(async (n) => Number((await cmd(n, { cmd: "stats" })).entities)),
      );
      expect(spread.filter((k) => k > 0).length).toBeGreaterThan(1);
      // S11 crash: kill -9 of a member; once it is downed, its remembered accounts start on
      // the other two without any message.
      const victim = ddata ? 0 : (spread[2] as number) > 0 ? 2 : 1;
      await kill(first[victim] as Child, "SIGKILL");
      const survivors = first.filter((_, i) => i !== victim);
      await until(
        "the killed member's remembered accounts run on the survivors",
        async () => (await liveEntities(survivors)) === ACCOUNTS,
        40_000,
      );
      await Promise.all(survivors.map((n) => kill(n, "SIGKILL")));

      // The new cluster: info logs, to see the coordinator load its state.
      const second = [0, 1, 2].map((i) => startDemoNode(c, i, "info"));
      await waitUp(second);
      // From the journal (events) or, with ddata, the replicated register (one snapshot).
      await waitForStderr(
        second[0] as Child,
        store.kind === "sqlite" && store.ddataDir !== undefined
          ? /coordinator state loaded.*snapshot=true/
          : /coordinator state loaded.*events=[1-9]/,
        20_000,
      );
      // No message has been sent to any account: they are running because they are remembered.
      await until(
        "every remembered account runs again",
        async () => (await liveEntities(second)) === ACCOUNTS,
        40_000,
      );
      const read = await cmd(second[1] as Child, { cmd: "balances", accounts: ACCOUNTS }, 60_000);
      expect(read.balances).toEqual(expected);
    }, 150_000);
  });
}
