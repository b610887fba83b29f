/**
 * The dashboard in a real browser: a 3-member cluster (sharding-node-main.ts children
 * with the management server), the page of member A opened in headless Chromium (the
 * system's /usr/bin/chromium driven by playwright-core). The page must show the 3
 * members Up and the shard counts per member; then C leaves gracefully (SIGTERM runs its
 * coordinated shutdown) and the page must show C's shards on A and B, the moves in its
 * timeline, and C gone. A screenshot is saved in the test's temp dir (non-empty PNG).
 *
 * Without Chromium (and no way to install it) the test prints a SKIP line.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePorts, seedNodesOf, stopMember, waitAllUp } from "../cluster-real/cluster-node.js";
import {
  cmd,
  currentRegions,
  ids,
  type ShardingNode,
  startShardingNode,
  until,
} from "../cluster-real/sharding-node.js";
import type { EntityTypeConfig } from "../cluster-real/sharding-node-main.js";
import { installChildTeardown } from "../support/child-teardown.js";

installChildTeardown("perFile");

/** The part of the browser's DOM the page functions use (the tests compile without lib dom). */
interface DomElement {
  getAttribute(name: string): string | null;
  readonly textContent: string | null;
}
declare const document: { querySelectorAll(selector: string): ArrayLike<DomElement> };

const CHROMIUM = process.env.SHARDKIT_CHROMIUM ?? "/usr/bin/chromium";
const TYPE = "Counter";
const SHARDS = 12;
const counter: EntityTypeConfig = {
  name: TYPE,
  numberOfShards: SHARDS,
  settings: { coordinator: { rebalanceIntervalMs: 3_600_000 } },
};

function urlOf(n: ShardingNode): string {
  const ready = n.child.events.find((e) => e.event === "ready");
  return String(ready?.managementUrl);
}

const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.log(
    `SKIP dashboard browser test: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set SHARDKIT_CHROMIUM)`,
  );

interface Row {
  node: string;
  shards: number;
  entities: number;
}

describe.skipIf(!hasChromium)("dashboard in headless Chromium", () => {
  it("shows 3 members and their shards, then the shards of a leaving member moving", async () => {
    const { chromium } = await import("playwright-core");
    const ports = (await freePorts(3)).sort((x, y) => x - y);
    const seeds = seedNodesOf(ports);
    const mgmt = { port: 0, dashboardRefreshMs: 300 };
    const nodes = await Promise.all(
      ["A", "B", "C"].map((name, i) =>
        startShardingNode({ name, types: [counter], management: mgmt }, ports[i] as number, seeds),
      ),
    );
    const [a, , c] = nodes as [ShardingNode, ShardingNode, ShardingNode];
    await waitAllUp(nodes, nodes);
    // Every region registered before the first message: a shard is allocated to the
    // least-loaded region registered at that moment, and C registering late would get none
    // (CI saw C with 0 shards once).
    await until(
      async () => ((await currentRegions(a)).length === 3 ? true : undefined),
      30_000,
      "3 regions registered",
    );
    await cmd(a, "tell", { ids: ids("d", 60) });
    const cNode = `sk@${c.hostPort}`;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    const dir = mkdtempSync(join(tmpdir(), "shardkit-dashboard-"));
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${urlOf(a)}/dashboard`);
      const rows = async (): Promise<Row[]> =>
        page.$$eval('[data-testid="type-row"]', (els) =>
          els.map((e) => ({
            node: e.getAttribute("data-node") ?? "",
            shards: Number(e.getAttribute("data-shards")),
            entities: Number(e.getAttribute("data-entities")),
          })),
        );
      // 3 members Up
      await page.waitForFunction(
        () =>
          document.querySelectorAll('[data-testid="member-row"][data-status="up"]').length === 3,
        undefined,
        { timeout: 30_000 },
      );
      // every shard and entity counted, on all three members
      await page.waitForFunction(
        ([shards, entities]) => {
          const rs = Array.from(document.querySelectorAll('[data-testid="type-row"]'));
          const sum = (k: string) => rs.reduce((n, e) => n + Number(e.getAttribute(k)), 0);
          return (
            rs.length === 3 && sum("data-shards") === shards && sum("data-entities") === entities
          );
        },
        [SHARDS, 60] as const,
        { timeout: 30_000 },
      );
      const before = await rows();
      const cShards = before.find((r) => r.node === cNode)?.shards ?? 0;
      expect(cShards).toBeGreaterThan(0);
      await page.screenshot({ path: join(dir, "dashboard-before.png"), fullPage: true });

      // C leaves gracefully (SIGTERM runs its coordinated shutdown). Without remembered
      // entities a handed-off shard is allocated again by the next message for it: A keeps
      // sending until every shard runs on A or B.
      await stopMember(c, "SIGTERM");
      const settled = page.waitForFunction(
        ([node, shards]) => {
          const rs = Array.from(document.querySelectorAll('[data-testid="type-row"]'));
          const total = rs.reduce((n, e) => n + Number(e.getAttribute("data-shards")), 0);
          return (
            rs.length === 2 &&
            !rs.some((e) => e.getAttribute("data-node") === node) &&
            total === shards
          );
        },
        [cNode, SHARDS] as const,
        { timeout: 60_000 },
      );
      let done = false;
      void settled.then(
        () => {
          done = true;
        },
        () => {
          done = true;
        },
      );
      while (!done) {
        await cmd(a, "tell", { ids: ids("d", 60) }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 1_000));
      }
      await settled;
      const moved = await page.$$eval('[data-testid="timeline-entry"][data-kind="moved"]', (els) =>
        els.map((e) => e.textContent ?? ""),
      );
      expect(moved.length).toBe(cShards);
      for (const m of moved) expect(m).toContain(`from ${cNode}`);
      await page.waitForFunction(
        (node) =>
          !Array.from(document.querySelectorAll('[data-testid="member-row"]')).some(
            (e) => e.getAttribute("data-node") === node && e.getAttribute("data-status") === "up",
          ),
        cNode,
        { timeout: 30_000 },
      );
      const after = await rows();
      expect(after.reduce((n, r) => n + r.shards, 0)).toBe(SHARDS);
      const shot = join(dir, "dashboard.png");
      await page.screenshot({ path: shot, fullPage: true });
      const png = readFileSync(shot);
      expect(png.length).toBeGreaterThan(1000);
      expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      console.log(`dashboard screenshots in ${dir}`);
    } finally {
      await browser.close();
    }
  }, 150_000);
});
