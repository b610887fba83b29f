/**
 * Issue 13 item 6c with real processes: a rolling restart by SIGTERM under load loses no
 * ask. Three members host the event-sourced accounts of the `npm start` demo node (role
 * "accounts", SQLite); a fourth member without the role (a proxy region: it hosts nothing
 * and is never restarted) runs the load, deposit asks with a 5 s timeout. Each account
 * member in turn gets SIGTERM (coordinated shutdown: its shards are handed off, the
 * coordinator moves when it was the oldest), exits, and starts again on the same port.
 * Checked: not one failed ask, nothing left in flight, and every acknowledged deposit is
 * in the balances (sum of balances = deposits acknowledged).
 *
 * `npm test` runs it once; `npm run test:rolling` runs it SHARDKIT_ROLLING_RUNS (10)
 * times in a row, each on a fresh cluster and database.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Child, kill, spawnNode } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import { freePorts } from "./cluster-node.js";
import { cmd, waitRegions, waitUp } from "./demo-cluster.js";

installChildTeardown("perTest");

const RUNS = Math.max(1, Number(process.env.SHARDKIT_ROLLING_RUNS ?? 1));
const ACCOUNTS = 60;
const WORKERS = 20;
/** SIGTERM to exit: the shutdown phases of the demo node take a few seconds. */
const SHUTDOWN_EXIT_MS = 25_000;
/**
 * Pause after a restarted member is up and its region registered, before the next
 * SIGTERM (like minReadySeconds). Without it about 1 run in 3-6 failed until a restarted
 * first seed node stopped forming a cluster of its own (docs/testing.md, "Known issues");
 * `SHARDKIT_ROLLING_GRACE_MS=0` runs without it (8 of 8 passed after the fix).
 */
const READY_GRACE_MS = Number(process.env.SHARDKIT_ROLLING_GRACE_MS ?? 2_000);
/** One run: four starts, three graceful stops and restarts, on a loaded 2-core machine. */
const RUN_TIMEOUT_MS = 150_000;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Cluster {
  readonly ports: readonly number[];
  readonly db: string;
}

function start(c: Cluster, index: number, accounts: boolean): Child {
  const port = c.ports[index] as number;
  const config = {
    name: `n${index}`,
    port,
    seedNodes: c.ports.slice(0, 3).map((p) => `127.0.0.1:${p}`),
    accounts: ACCOUNTS,
    db: c.db,
    role: "accounts",
    roles: accounts ? ["accounts"] : [],
  };
  return spawnNode("examples/sharding-demo/node.ts", [JSON.stringify(config)], {
    name: `n${index}:${port}`,
    env: { SHARDKIT_LOG_LEVEL: process.env.SHARDKIT_ROLLING_LOG_LEVEL ?? "info" },
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`not reached within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function completed(client: Child): Promise<number> {
  return Number((await cmd(client, { cmd: "load-stats" })).completed);
}

describe("rolling restart by SIGTERM under load (issue 13, 6c)", () => {
  for (let run = 1; run <= RUNS; run++) {
    it(
      `run ${run} of ${RUNS}: every member restarted in turn, 0 failed asks, every acknowledged deposit kept`,
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "shardkit-rolling-"));
        dirs.push(dir);
        const c: Cluster = { ports: await freePorts(4), db: join(dir, "accounts.db") };
        const members = [0, 1, 2].map((i) => start(c, i, true));
        const all = [...members];
        // On failure every member's log goes to a file (its path is printed), at the level
        // SHARDKIT_ROLLING_LOG_LEVEL (default info); SHARDKIT_ROLLING_DUMP names the file.
        const dumpLogs = () => {
          const file =
            process.env.SHARDKIT_ROLLING_DUMP ??
            join(tmpdir(), `shardkit-rolling-failed-${process.pid}`);
          writeFileSync(
            `${file}-${run}.log`,
            all.map((m) => `==== ${m.name}\n${m.stderr.join("\n")}`).join("\n"),
          );
          console.log(`logs of every member: ${file}-${run}.log`);
        };
        let step = "start";
        try {
          await waitUp(members);
          const client = start(c, 3, false);
          all.push(client);
          await waitRegions([client], 3);
          await cmd(client, { cmd: "load", workers: WORKERS });
          await until("load runs", async () => (await completed(client)) > 200, 20_000);

          const failedAfter: number[] = [];
          for (let i = 0; i < 3; i++) {
            step = `restart n${i}`;
            const before = await completed(client);
            const info = await Promise.race([
              kill(members[i] as Child, "SIGTERM"),
              new Promise<never>((_, fail) =>
                setTimeout(() => fail(new Error("no exit after SIGTERM")), SHUTDOWN_EXIT_MS),
              ),
            ]);
            expect(info.code, `n${i} exit after SIGTERM`).toBe(0);
            members[i] = start(c, i, true);
            all.push(members[i] as Child);
            await waitUp([members[i] as Child]);
            await waitRegions([client], 3);
            // Like a readiness gate with minReadySeconds: the next member is stopped only
            // a moment after this one is up and registered (see docs/testing.md).
            await new Promise((r) => setTimeout(r, READY_GRACE_MS));
            // Traffic flowed through this step (and keeps flowing before the next one).
            await until(
              `load continues after restarting n${i}`,
              async () => (await completed(client)) > before + 100,
              20_000,
            );
            failedAfter.push(Number((await cmd(client, { cmd: "load-stats" })).failed));
          }

          step = "end";
          await cmd(client, { cmd: "stop-load" });
          await until(
            "no ask left in flight",
            async () => Number((await cmd(client, { cmd: "load-stats" })).inFlight) === 0,
            10_000,
          );
          const stats = await cmd(client, { cmd: "load-stats" });
          expect(
            stats.failed,
            `failed asks (after each restart: ${failedAfter.join(", ")}; ${JSON.stringify(stats.errors)})`,
          ).toBe(0);
          const read = await cmd(client, { cmd: "balances", accounts: ACCOUNTS }, 60_000);
          expect(read.sum, "sum of balances = acknowledged deposits").toBe(stats.completed);
        } catch (error) {
          dumpLogs();
          throw new Error(`${step}: ${String(error)}`);
        } finally {
          await Promise.all(all.map((m) => kill(m, "SIGKILL")));
        }
      },
      RUN_TIMEOUT_MS,
    );
  }
});
