/**
 * Distributed Data on real processes: 3 members update an ORSet and a PNCounter
 * concurrently, one is killed (SIGKILL) mid-load and restarted: every replica converges
 * to the same values, which hold everything the survivors did. A member whose durable
 * file is corrupt fails to start with an error naming the file.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installChildTeardown } from "../support/child-teardown.js";
import {
  type ClusterNode,
  command,
  freePorts,
  seedNodesOf,
  startChildMember,
  stopMember,
  waitAllUp,
} from "./cluster-node.js";
import type { DDataNodeConfig } from "./ddata-node-main.js";

installChildTeardown("perTest");
const MAIN = "test/cluster-real/ddata-node-main.ts";
const dir = mkdtempSync(join(tmpdir(), "sk-ddata-real-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const start = (name: string, config: DDataNodeConfig) => startChildMember(MAIN, name, config);

interface Values {
  set: string[];
  counter: number;
}
const values = async (n: ClusterNode): Promise<Values> => {
  const r = (await command(n, "values")) as unknown as Values;
  return { set: r.set, counter: r.counter };
};

async function waitConverged(nodes: readonly ClusterNode[], timeoutMs: number): Promise<Values> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const vs = await Promise.all(nodes.map(values));
    const same = vs.every((v) => JSON.stringify(v) === JSON.stringify(vs[0]));
    if (same) return vs[0] as Values;
    if (Date.now() > deadline)
      throw new Error(
        `not converged after ${timeoutMs} ms: ${vs.map((v) => `${v.set.length}/${v.counter}`).join(" ")}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("ddata real processes", () => {
  it("3 members update an ORSet and a PNCounter; one killed and restarted; values converge", async () => {
    const ports = (await freePorts(3)).sort((a, b) => a - b);
    const seedNodes = seedNodesOf(ports);
    const names = ["A", "B", "C"];
    const nodes = await Promise.all(names.map((n, i) => start(n, { port: ports[i], seedNodes })));
    await waitAllUp(nodes, nodes, 20_000);
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    for (const [i, n] of nodes.entries())
      await command(n, "load", { count: 200, intervalMs: 5, prefix: `${names[i]}-` });
    await new Promise((r) => setTimeout(r, 400));
    await stopMember(c, "SIGKILL");
    // The survivors see C removed (SBR), then C comes back as a new incarnation.
    await waitAllUp([a, b], [a, b], 20_000);
    const c2 = await start("C2", { port: ports[2], seedNodes });
    await command(c2, "load", { count: 100, intervalMs: 5, prefix: "C2-" });
    await waitAllUp([a, b, c2], [a, b, c2], 20_000);
    // Let every load finish.
    for (const n of [a, b, c2])
      for (let i = 0; i < 100; i++) {
        const s = (await command(n, "load-status")) as unknown as { done: number };
        if (s.done >= (n === c2 ? 100 : 200)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    const v = await waitConverged([a, b, c2], 20_000);
    const sa = (await command(a, "load-status")) as unknown as { sum: number };
    const sb = (await command(b, "load-status")) as unknown as { sum: number };
    const sc2 = (await command(c2, "load-status")) as unknown as { sum: number };
    const survivors = sa.sum + sb.sum + sc2.sum;
    expect(v.counter).toBeGreaterThanOrEqual(survivors);
    // C's first incarnation did at most 200 updates of at most 3 each.
    expect(v.counter).toBeLessThanOrEqual(survivors + 600);
    for (const p of ["A-", "B-"]) for (let i = 0; i < 200; i++) expect(v.set).toContain(`${p}${i}`);
    for (let i = 0; i < 100; i++) expect(v.set).toContain(`C2-${i}`);
    expect(v.set.some((e) => e.startsWith("C-"))).toBe(true);
  }, 90_000);

  it("a member whose durable file is corrupt fails to start, naming the file", async () => {
    const path = join(dir, "corrupt.db");
    writeFileSync(path, "garbage, not a database ".repeat(100));
    const [port] = await freePorts(1);
    const child = start("X", {
      port,
      seedNodes: seedNodesOf([port as number]),
      durablePath: path,
    }).catch((e: unknown) => e);
    const err = await child;
    expect(String(err)).toContain(path);
  }, 30_000);
});
