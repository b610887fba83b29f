/**
 * Coordinated shutdown with real processes: three cluster members as child processes on
 * 127.0.0.1 (ports chosen by the test); SIGTERM to one of them makes it run its phases,
 * leave the cluster gracefully (the others see it Leaving -> Exiting -> Removed, never
 * unreachable or downed) and exit with code 0 within a bound.
 */
import { createServer, type Server } from "node:net";
import { describe, expect, it } from "vitest";
import { BUILT_IN_PHASE_NAMES } from "../../src/core/shutdown/index.js";
import { type Child, type ChildEvent, spawnNode, waitFor } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import type { ShutdownNodeConfig } from "./shutdown-node-main.js";

installChildTeardown("perTest");

/** tsx compile + remoting listen of three processes at once, on a busy 2-core box. */
const START_TIMEOUT_MS = 30_000;
/** Seed-node join and leader actions with 200 ms gossip; generous for a loaded box. */
const CONVERGE_TIMEOUT_MS = 20_000;
/**
 * SIGTERM -> exit. With 200 ms gossip and leader ticks, leave -> exiting -> removed takes
 * a few rounds (about a second). A shutdown that fell back on the phase timeouts
 * (cluster-leave 5 s + cluster-exiting 10 s) would take longer than this bound.
 */
const EXIT_BOUND_MS = 10_000;

/** Ports the OS says are free right now (held together so they are distinct). */
async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = createServer();
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    servers.push(s);
    const address = s.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    ports.push(address.port);
  }
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function start(name: string, config: ShutdownNodeConfig): Child {
  return spawnNode("test/cluster-real/shutdown-node-main.ts", [JSON.stringify(config)], { name });
}

function memberEvents(child: Child, node: string): string[] {
  return child.events
    .filter((e: ChildEvent) => e.event === "member" && e.node === node)
    .map((e) => String(e.type));
}

function upCount(child: Child): number {
  return new Set(
    child.events.filter((e) => e.event === "member" && e.type === "member-up").map((e) => e.node),
  ).size;
}

describe("coordinated shutdown, real processes", () => {
  it("SIGTERM -> the node leaves the cluster (others see it removed) and exits with code 0", async () => {
    const ports = await freePorts(3);
    const seedNodes = ports.map((p) => `127.0.0.1:${p}`);
    const [a, b, c] = ["A", "B", "C"].map((name, i) =>
      start(name, { port: ports[i] as number, seedNodes }),
    ) as [Child, Child, Child];
    const cNode = seedNodes[2] as string;
    await Promise.all(
      [a, b, c].map((child) =>
        waitFor(child, (e) => e.event === "ready", START_TIMEOUT_MS, "ready"),
      ),
    );
    await Promise.all(
      [a, b, c].map((child) =>
        waitFor(child, () => upCount(child) === 3, CONVERGE_TIMEOUT_MS, "three members up"),
      ),
    );

    const signalledAt = Date.now();
    c.process.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      c.exited,
      new Promise<never>((_, fail) => {
        timer = setTimeout(
          () => fail(new Error(`C did not exit within ${EXIT_BOUND_MS} ms of SIGTERM`)),
          EXIT_BOUND_MS,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const elapsedMs = Date.now() - signalledAt;

    console.log(`[shutdown] SIGTERM -> exit code ${exit.code} in ${elapsedMs} ms`);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(elapsedMs).toBeLessThan(EXIT_BOUND_MS);
    // C ran every phase in order, then finished with the signal's reason.
    expect(c.events.filter((e) => e.event === "phase").map((e) => e.phase)).toEqual(
      BUILT_IN_PHASE_NAMES,
    );
    expect(c.events.find((e) => e.event === "shutdown-done")?.reason).toBe("sigterm");
    expect(c.stderr.some((l) => l.includes("coordinated shutdown completed"))).toBe(true);
    expect(c.stderr.some((l) => l.includes("timed out"))).toBe(false);
    // The others saw a graceful leave: Leaving -> Exiting -> Removed, never unreachable.
    for (const other of [a, b]) {
      await waitFor(
        other,
        (e) => e.event === "member" && e.node === cNode && e.type === "member-removed",
        CONVERGE_TIMEOUT_MS,
        "C removed",
      );
      // (Whether an observer saw C as joined first depends on gossip timing.)
      const events = memberEvents(other, cNode);
      expect(events.slice(events.indexOf("member-up"))).toEqual([
        "member-up",
        "member-left",
        "member-exited",
        "member-removed",
      ]);
    }
  }, 90_000);
});
