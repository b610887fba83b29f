/** The real EventLoopMonitor (src/runtime/node/node-event-loop.ts). */
import { describe, expect, it } from "vitest";
import { NodeEventLoopMonitor } from "../../src/runtime/node/node-event-loop.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("node event-loop monitor", () => {
  it("reports a blocked loop, then starts a new period", async () => {
    const m = new NodeEventLoopMonitor();
    try {
      expect(m.takeMaxDelayMs()).toBe(0); // starts sampling
      await sleep(100);
      const until = Date.now() + 300;
      while (Date.now() < until) {
        // blocked
      }
      await sleep(100);
      expect(m.takeMaxDelayMs()).toBeGreaterThanOrEqual(200);
      await sleep(100);
      expect(m.takeMaxDelayMs()).toBeLessThan(200);
    } finally {
      m.dispose();
    }
  });
});
