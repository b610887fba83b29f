/**
 * installSignalHandlers against a fake process: which reason a signal maps to, the exit
 * code after a completed or aborted shutdown, a second signal, exit: false, disposal,
 * and validation. The real SIGTERM path is covered by shutdown.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import { installSignalHandlers, type SignalTarget } from "../../src/runtime/node/signals.js";

class FakeProcess implements SignalTarget {
  readonly listeners = new Map<NodeJS.Signals, ((s: NodeJS.Signals) => void)[]>();
  readonly exits: number[] = [];
  exitCode: number | string | undefined;
  on(signal: NodeJS.Signals, listener: (s: NodeJS.Signals) => void): void {
    this.listeners.set(signal, [...(this.listeners.get(signal) ?? []), listener]);
  }
  removeListener(signal: NodeJS.Signals, listener: (s: NodeJS.Signals) => void): void {
    this.listeners.set(
      signal,
      (this.listeners.get(signal) ?? []).filter((l) => l !== listener),
    );
  }
  exit(code: number): void {
    this.exits.push(code);
  }
  kill(signal: NodeJS.Signals): void {
    for (const l of this.listeners.get(signal) ?? []) l(signal);
  }
  count(): number {
    return [...this.listeners.values()].reduce((n, ls) => n + ls.length, 0);
  }
}

function deferred() {
  let resolve!: (v: string) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<string>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const flush = () => new Promise((r) => setImmediate(r));

describe("installSignalHandlers", () => {
  it("SIGTERM runs the shutdown with reason sigterm, then exits 0; SIGINT maps to sigint", async () => {
    for (const [signal, reason] of [
      ["SIGTERM", "sigterm"],
      ["SIGINT", "sigint"],
    ] as const) {
      const target = new FakeProcess();
      const reasons: string[] = [];
      const d = deferred();
      installSignalHandlers(
        (r) => {
          reasons.push(r);
          return d.promise;
        },
        { target },
      );
      expect(target.count()).toBe(2);
      target.kill(signal);
      expect(reasons).toEqual([reason]);
      await flush();
      expect(target.exits).toEqual([]); // not before the shutdown is over
      d.resolve(reason);
      await flush();
      expect(target.exits).toEqual([0]);
      expect(target.exitCode).toBe(0);
    }
  });

  it("an aborted shutdown exits with failureExitCode; a configured exitCode is used on success", async () => {
    const failing = new FakeProcess();
    installSignalHandlers(() => Promise.reject(new Error("aborted")), {
      target: failing,
      failureExitCode: 3,
    });
    failing.kill("SIGTERM");
    await flush();
    expect(failing.exits).toEqual([3]);

    const throwing = new FakeProcess();
    installSignalHandlers(
      () => {
        throw new Error("sync");
      },
      { target: throwing },
    );
    throwing.kill("SIGINT");
    await flush();
    expect(throwing.exits).toEqual([1]);

    const custom = new FakeProcess();
    installSignalHandlers(() => Promise.resolve("sigterm"), { target: custom, exitCode: 143 });
    custom.kill("SIGTERM");
    await flush();
    expect(custom.exits).toEqual([143]);
  });

  it("a second signal during the shutdown exits at once (unless forceOnRepeat is false)", async () => {
    const target = new FakeProcess();
    let runs = 0;
    installSignalHandlers(
      () => {
        runs++;
        return new Promise(() => {});
      },
      { target },
    );
    target.kill("SIGINT");
    target.kill("SIGINT");
    expect(runs).toBe(1);
    expect(target.exits).toEqual([1]);

    const patient = new FakeProcess();
    installSignalHandlers(() => new Promise(() => {}), { target: patient, forceOnRepeat: false });
    patient.kill("SIGTERM");
    patient.kill("SIGTERM");
    expect(patient.exits).toEqual([]);
  });

  it("exit: false only sets exitCode and removes the handlers; dispose removes them too", async () => {
    const target = new FakeProcess();
    installSignalHandlers(() => Promise.resolve("x"), {
      target,
      exit: false,
      signals: ["SIGTERM"],
    });
    expect(target.count()).toBe(1);
    target.kill("SIGTERM");
    await flush();
    expect(target.exits).toEqual([]);
    expect(target.exitCode).toBe(0);
    expect(target.count()).toBe(0);

    const other = new FakeProcess();
    const handle = installSignalHandlers(() => Promise.resolve("x"), { target: other });
    handle.dispose();
    handle.dispose();
    expect(other.count()).toBe(0);
  });

  it("rejects an invalid exit code naming the key", () => {
    expect(() => installSignalHandlers(() => Promise.resolve(""), { exitCode: 256 })).toThrow(
      ConfigError,
    );
    expect(() => installSignalHandlers(() => Promise.resolve(""), { failureExitCode: -1 })).toThrow(
      expect.objectContaining({ key: "signals.failureExitCode" }),
    );
  });
});
