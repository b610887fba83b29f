/**
 * Vitest wiring of the child-process harness: after each test and after the file, every
 * child still running is SIGKILLed and awaited, so no test can leak a process.
 */
import { afterAll, afterEach } from "vitest";
import { killAll } from "./child-process.js";

/** Kills leftover children after every test (`perTest`) or only after the file. */
export function installChildTeardown(scope: "perTest" | "perFile"): void {
  if (scope === "perTest") afterEach(killAll, 15_000);
  afterAll(killAll, 15_000);
}
