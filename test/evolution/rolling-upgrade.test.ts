/**
 * A rolling upgrade with real processes (docs/evolution.md, "Safe rolling upgrades"): two
 * builds of one application (./rolling-upgrade-node.ts) — v2 renames the message
 * `deposit` to `credit` and the event `Deposited` (v1) to `Credited` (v2, with a new field
 * `currency`) — on one SQLite file. Three members start on v1 with a client member sending
 * `deposit` asks; then each member in turn is shut down gracefully and started again on
 * v2, under load. Checked:
 * - no ask failed, and every wallet's balance is exactly what the client saw acknowledged
 *   (nothing lost, nothing twice);
 * - v2 recovered v1 events through the alias and the upcaster (`eur` counts them);
 * - during the mixed phase v2 members accepted the old message, and once every member
 *   reports appVersion 2.0.0 the client's new `credit` messages are accepted everywhere.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, onTestFailed } from "vitest";
import { freePorts } from "../cluster-real/cluster-node.js";
import {
  type Child,
  kill,
  request,
  spawnNode,
  stderrTail,
  waitFor,
} from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import type { UpgradeNodeConfig } from "./rolling-upgrade-node.js";

installChildTeardown("perFile");

const WALLETS = 24;
const START_TIMEOUT_MS = 40_000;
const COMMAND_TIMEOUT_MS = 30_000;
/** How long the load runs between two steps of the upgrade. */
const LOAD_BETWEEN_STEPS_MS = 1_500;

const dir = mkdtempSync(join(tmpdir(), "shardkit-upgrade-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface WalletView {
  balance: number;
  eur: number;
  usd: number;
}

/** Every member started, for the log file written when the test fails. */
const started: Child[] = [];

function start(build: UpgradeNodeConfig["build"], port: number, seeds: readonly string[]): Child {
  const config: UpgradeNodeConfig = {
    build,
    port,
    seedNodes: seeds,
    db: join(dir, "wallets.db"),
    wallets: WALLETS,
  };
  const child = spawnNode("test/evolution/rolling-upgrade-node.ts", [JSON.stringify(config)], {
    name: `${build}:${port}`,
    env: { SHARDKIT_LOG_LEVEL: process.env.SHARDKIT_UPGRADE_LOG_LEVEL ?? "info" },
  });
  started.push(child);
  return child;
}

const up = (c: Child) => waitFor(c, (e) => e.event === "up", START_TIMEOUT_MS, "member Up");
const cmd = (c: Child, command: Record<string, unknown>) => request(c, command, COMMAND_TIMEOUT_MS);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`not reached within ${timeoutMs} ms: ${what}`);
    await sleep(200);
  }
}

describe("rolling upgrade v1 -> v2 under load (real processes, SQLite)", () => {
  it("loses and fails nothing, upcasts v1 events, accepts old and new messages", async () => {
    onTestFailed(() => {
      // every member's log (at info unless SHARDKIT_UPGRADE_LOG_LEVEL says otherwise)
      const file = join(tmpdir(), `shardkit-upgrade-failed-${process.pid}.log`);
      writeFileSync(file, started.map((c) => `=== ${c.name}\n${c.stderr.join("\n")}`).join("\n"));
      console.log(`logs of every member: ${file}`);
    });
    const [p0, p1, p2, pc] = (await freePorts(4)) as [number, number, number, number];
    const seeds = [p0, p1, p2].map((p) => `127.0.0.1:${p}`);
    const hosts = [p0, p1, p2].map((p) => start("v1", p, seeds));
    const client = start("client", pc, seeds);
    await Promise.all([...hosts, client].map(up));
    await until(
      "3 regions registered",
      async () => Number((await cmd(client, { cmd: "regions" })).regions) === 3,
      START_TIMEOUT_MS,
    );

    await cmd(client, { cmd: "load", workers: 8, mode: "deposit" });
    await sleep(LOAD_BETWEEN_STEPS_MS);
    const ports = [p0, p1, p2];
    for (let i = 0; i < 3; i++) {
      const old = hosts[i] as Child;
      await cmd(old, { cmd: "shutdown" });
      await waitFor(old, (e) => e.event === "shutdown-done", COMMAND_TIMEOUT_MS, "shutdown-done");
      await old.exited;
      const next = start("v2", ports[i] as number, seeds);
      hosts[i] = next;
      await up(next);
      await until(
        `3 regions again after upgrading member ${i}`,
        async () => Number((await cmd(client, { cmd: "regions" })).regions) === 3,
        START_TIMEOUT_MS,
      );
      await sleep(LOAD_BETWEEN_STEPS_MS);
      const midway = await cmd(client, { cmd: "load-stats" });
      expect(midway.failed, `asks failed after upgrading member ${i}`).toBe(0);
    }
    // Every member now reports the new build: only now may the client send `credit`.
    await until(
      "every member reports appVersion 2.0.0",
      async () => {
        const v = (await cmd(client, { cmd: "versions" })).versions as string[];
        return v.filter((x) => x === "2.0.0").length === 3;
      },
      START_TIMEOUT_MS,
    );
    await cmd(client, { cmd: "load", mode: "credit" });
    await sleep(LOAD_BETWEEN_STEPS_MS);
    const load = await cmd(client, { cmd: "stop-load" });
    expect(load.errors, "errors of failed asks").toEqual([]);
    expect(load.failed).toBe(0);
    expect(Number(load.completed)).toBeGreaterThan(50);

    const acked = load.acked as Record<string, number>;
    const { wallets } = (await cmd(client, { cmd: "wallets", n: WALLETS })) as unknown as {
      wallets: Record<string, WalletView>;
    };
    let upcast = 0;
    let written = 0;
    for (let w = 0; w < WALLETS; w++) {
      const id = `wallet-${w}`;
      const view = wallets[id] as WalletView;
      // Nothing lost, nothing applied twice: every acknowledged deposit/credit, once.
      expect(view.balance, `${id} balance`).toBe(acked[id] ?? 0);
      // A v2 view counts upcast v1 events as EUR and its own writes as USD.
      expect(view.eur + view.usd, `${id} events by currency`).toBe(view.balance);
      upcast += view.eur;
      written += view.usd;
    }
    expect(upcast, "v1 events recovered on v2 through the upcaster").toBeGreaterThan(0);
    expect(written, "events written by v2").toBeGreaterThan(0);

    for (const h of hosts) {
      if (h.exit !== undefined)
        throw new Error(`${h.name} exited early: ${JSON.stringify(h.exit)}\n${stderrTail(h)}`);
    }
    await Promise.all([...hosts, client].map((c) => kill(c, "SIGKILL")));
  }, 240_000);
});
