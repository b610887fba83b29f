/**
 * The examples must run: the actor demo, the Distributed Data, cluster, outbox and README
 * examples, each as a real child process (run-example.ts). `npm start`'s sharding demo has
 * its own file (sharding-demo.test.ts), so the two run side by side.
 */
import { describe, expect, it } from "vitest";
import { freeRange, killExamplesAfterEach, run } from "./run-example.js";

killExamplesAfterEach();

describe("examples", () => {
  it("the ddata example: majority writes on 3 members, every majority read sees them all", async () => {
    const { code, out } = await run(["examples/ddata-counter.ts", "--base-port", "25620"], 40_000);
    for (const k of [0, 1, 2])
      expect(out).toContain(`node-${k} reads visits=6 visitors=node-0,node-1,node-2`);
    expect(code).toBe(0);
  }, 50_000);

  it("the actor demo conserves money and exits 0", async () => {
    const { code, out } = await run(
      ["examples/actor-demo.ts", "--seconds", "2", "--accounts", "200"],
      30_000,
    );
    expect(out).toMatch(/t=1\.\ds transfers\/s=\d+/);
    expect(out).toContain("money conserved (200000/200000)");
    expect(code).toBe(0);
  }, 40_000);

  it("three cluster members over TCP join, agree, and one leaves", async () => {
    const base = await freeRange(3);
    const { code, out } = await run(
      ["examples/cluster-three-nodes.ts", "--base-port", String(base)],
      30_000,
    );
    expect(out).toContain("all three Up");
    expect(out).toMatch(/node \d+ left; members now \d+, \d+/);
    expect(code).toBe(0);
  }, 40_000);

  it("the README sharding example runs on a one-node cluster", async () => {
    const port = await freeRange(1);
    const { code, out } = await run(["examples/readme-sharding.ts", String(port)], 30_000);
    expect(out).toContain("tea, scones");
    expect(code).toBe(0);
  }, 40_000);

  it("the README persistence example: an event-sourced, remembered cart on SQLite survives a restart", async () => {
    const port = await freeRange(1);
    const { code, out } = await run(["examples/readme-persistence.ts", String(port)], 40_000);
    expect(out).toContain("round 1: tea, scones");
    expect(out).toContain("round 2: cart-42 restarted without a message (remembered)");
    expect(out).toContain("round 2: tea, scones");
    expect(code).toBe(0);
  }, 50_000);

  it("the outbox demo redelivers unconfirmed messages after a restart on SQLite", async () => {
    const { code, out } = await run(["examples/outbox-demo.ts"], 30_000);
    expect(out).toMatch(/run 1: 20 sent, \d+ deliveries, \d+ lost, 6 unconfirmed at the crash/);
    expect(out).toMatch(/run 2: recovered, \d+ redeliveries, all 20 confirmed/);
    expect(code).toBe(0);
  }, 40_000);

  it("the README actor example runs", async () => {
    const { code, out } = await run(["examples/readme-actor.ts"], 20_000);
    expect(out.split("\n")[0]).toBe("2");
    expect(code).toBe(0);
  }, 30_000);
});
