/**
 * CoordinatedShutdown in the simulator: phase order with asynchronous tasks, per-phase
 * timeouts in virtual time (recover on and off), idempotent run, task registration
 * rules; then a 3-node cluster where one node shuts down (by run, by another node's
 * leave, by being downed) and the others see it leave. Every case runs in virtual time
 * from a seed; a failure names its seed.
 */
import { describe, expect, it } from "vitest";
import { installClusterShutdown } from "../../src/cluster/shutdown/cluster-shutdown.js";
import { CoordinatedShutdown } from "../../src/cluster/shutdown/coordinated-shutdown.js";
import {
  ShutdownAbortedError,
  ShutdownPhase,
  ShutdownPhaseStartedError,
  type ShutdownReason,
  type ShutdownSettingsOverrides,
  UnknownShutdownPhaseError,
} from "../../src/core/shutdown/index.js";
import { type SimRuntime, SimWorld } from "../../src/runtime/sim/index.js";
import { SimClusterHarness, type SimMember } from "./sim-cluster.js";

const SEEDS = [1, 2, 3];

function sleep(runtime: SimRuntime, ms: number): Promise<void> {
  return new Promise((resolve) => runtime.scheduler.schedule(ms, resolve));
}

function single(seed: number, settings?: ShutdownSettingsOverrides) {
  const world = new SimWorld({ seed, keepTrace: true, traceLogLevel: "info" });
  const runtime = world.createRuntime("n");
  const shutdown = new CoordinatedShutdown({ runtime, settings });
  return { world, runtime, shutdown };
}

/** Observes a run's promise without awaiting it (the simulator must drive it). */
function observe(p: Promise<ShutdownReason>) {
  const o: { value?: ShutdownReason; error?: unknown; settled: boolean } = { settled: false };
  p.then(
    (value) => Object.assign(o, { value, settled: true }),
    (error: unknown) => Object.assign(o, { error, settled: true }),
  );
  return o;
}

function logMessages(world: SimWorld, node: string): string[] {
  return world.trace
    .filter((e) => e.node === node && e.kind === "log")
    .map((e) => String(e.detail));
}

describe.each(SEEDS)("coordinated shutdown driver (seed %i)", (seed) => {
  it("runs phases in order, the tasks of a phase in parallel, the next phase after the slowest", async () => {
    const { world, runtime, shutdown } = single(seed);
    const events: string[] = [];
    const phases = [...shutdown.phaseNames].reverse(); // register out of run order
    for (const [i, phase] of phases.entries()) {
      const ms = 10 * (i + 1);
      shutdown.addTask(phase, `${phase}-slow`, async () => {
        events.push(`start ${phase}-slow @${world.now}`);
        await sleep(runtime, 2 * ms);
        events.push(`end ${phase}-slow @${world.now}`);
      });
      shutdown.addTask(phase, `${phase}-fast`, async () => {
        events.push(`start ${phase}-fast @${world.now}`);
        await sleep(runtime, ms);
        events.push(`end ${phase}-fast @${world.now}`);
      });
    }
    const t0 = world.now;
    const run = observe(shutdown.run("user"));
    await world.runUntil(() => run.settled, 60_000);
    expect(run.value).toBe("user");

    const expected: string[] = [];
    let t = t0;
    for (const phase of shutdown.phaseNames) {
      const ms = 10 * (phases.indexOf(phase) + 1);
      expected.push(`start ${phase}-slow @${t}`, `start ${phase}-fast @${t}`);
      expected.push(`end ${phase}-fast @${t + ms}`, `end ${phase}-slow @${t + 2 * ms}`);
      t += 2 * ms;
    }
    expect(events).toEqual(expected);
    expect(world.now).toBe(t);
    expect(runtime.scheduler.liveTimers).toBe(0);
    const started = logMessages(world, "n").filter((l) =>
      l.startsWith("info shutdown phase started"),
    );
    expect(started.map((l) => /"phase":"([^"]+)"/.exec(l)?.[1])).toEqual(shutdown.phaseNames);
  });

  it("a hanging task times out after its phase timeout in virtual time; the next phase runs", async () => {
    const { world, runtime, shutdown } = single(seed, {
      phases: { [ShutdownPhase.ServiceRequestsDone]: { timeoutMs: 1_234 } },
    });
    let abortedAt: number | undefined;
    const marks: string[] = [];
    shutdown.addTask(ShutdownPhase.ServiceUnbind, "hangs", ({ signal }) => {
      signal.addEventListener("abort", () => {
        abortedAt = world.now;
      });
      return new Promise<void>(() => {});
    });
    shutdown.addTask(ShutdownPhase.ServiceRequestsDone, "hangs-too", () => new Promise(() => {}));
    shutdown.addTask(ShutdownPhase.ServiceStop, "next", () => {
      marks.push(`service-stop @${world.now}`);
    });
    const t0 = world.now;
    const run = observe(shutdown.run("user"));
    await world.runUntil(() => run.settled, 60_000);
    expect(run.value).toBe("user");
    expect(abortedAt).toBe(t0 + 5_000); // the default phase timeout
    expect(marks).toEqual([`service-stop @${t0 + 5_000 + 1_234}`]);
    expect(runtime.scheduler.liveTimers).toBe(0);
    const timedOut = logMessages(world, "n").filter((l) =>
      l.startsWith("warn shutdown phase timed out"),
    );
    expect(timedOut).toHaveLength(2);
    expect(timedOut[0]).toContain('"pendingTasks":["hangs"]');
  });

  it("recover: false — a timeout or a failure aborts: later phases do not run, run rejects", async () => {
    const timed = single(seed, {
      phases: { [ShutdownPhase.ClusterLeave]: { recover: false, timeoutMs: 300 } },
    });
    let terminated = false;
    timed.shutdown.addTask(ShutdownPhase.ClusterLeave, "hangs", () => new Promise(() => {}));
    timed.shutdown.addTask(ShutdownPhase.ActorSystemTerminate, "terminate", () => {
      terminated = true;
    });
    const t0 = timed.world.now;
    const run = observe(timed.shutdown.run("sigterm"));
    await timed.world.runUntil(() => run.settled, 60_000);
    expect(run.error).toBeInstanceOf(ShutdownAbortedError);
    expect(run.error).toMatchObject({
      code: "SHUTDOWN_ABORTED",
      phase: "cluster-leave",
      abortCause: "timeout",
    });
    expect(timed.world.now).toBe(t0 + 300);
    await timed.world.advance(30_000);
    expect(terminated).toBe(false);
    expect(timed.shutdown.state).toEqual({
      type: "aborted",
      reason: "sigterm",
      phase: "cluster-leave",
    });

    const failing = single(seed, { phases: { [ShutdownPhase.ServiceStop]: { recover: false } } });
    const boom = new Error("boom");
    let later = false;
    failing.shutdown.addTask(ShutdownPhase.ServiceStop, "throws", () => {
      throw boom;
    });
    failing.shutdown.addTask(ShutdownPhase.ClusterLeave, "later", () => {
      later = true;
    });
    const run2 = observe(failing.shutdown.run("user"));
    await failing.world.runUntil(() => run2.settled, 60_000);
    expect(run2.error).toMatchObject({
      phase: "service-stop",
      abortCause: "task-failed",
      cause: boom,
    });
    expect(later).toBe(false);
    expect(failing.runtime.scheduler.liveTimers).toBe(0);
  });

  it("with recover (the default) a failing task is logged and the shutdown goes on", async () => {
    const { world, shutdown } = single(seed);
    const ran: string[] = [];
    shutdown.addTask(ShutdownPhase.ServiceStop, "rejects", () => Promise.reject(new Error("nope")));
    shutdown.addTask(ShutdownPhase.ServiceStop, "throws", () => {
      throw new Error("sync");
    });
    shutdown.addTask(ShutdownPhase.ClusterLeave, "later", () => {
      ran.push("later");
    });
    const run = observe(shutdown.run("user"));
    await world.runUntil(() => run.settled, 60_000);
    expect(run.value).toBe("user");
    expect(ran).toEqual(["later"]);
    expect(
      logMessages(world, "n").filter((l) => l.startsWith("warn shutdown task failed")),
    ).toHaveLength(2);
  });

  it("run is idempotent: the second call returns the same promise and keeps the first reason", async () => {
    const { world, shutdown } = single(seed);
    let runs = 0;
    shutdown.addTask(ShutdownPhase.BeforeServiceUnbind, "count", () => {
      runs++;
    });
    expect(shutdown.shutdownReason).toBeUndefined();
    const p1 = shutdown.run("user");
    const p2 = shutdown.run("sigterm");
    expect(p2).toBe(p1);
    expect(shutdown.shutdownReason).toBe("user");
    const run = observe(p1);
    await world.runUntil(() => run.settled, 60_000);
    expect(run.value).toBe("user");
    expect(await shutdown.run("cluster-downing")).toBe("user");
    expect(runs).toBe(1);
  });

  it("addTask: unknown phase and started phase are typed errors; later phases accept; dispose removes", async () => {
    const { world, shutdown } = single(seed);
    expect(() => shutdown.addTask("no-such-phase", "x", () => {})).toThrow(
      UnknownShutdownPhaseError,
    );
    let removedRan = false;
    shutdown
      .addTask(ShutdownPhase.ServiceStop, "removed", () => {
        removedRan = true;
      })
      .dispose();
    const outcomes: string[] = [];
    shutdown.addTask(ShutdownPhase.ClusterLeave, "adds", () => {
      for (const phase of [ShutdownPhase.ServiceUnbind, ShutdownPhase.ClusterLeave])
        try {
          shutdown.addTask(phase, "too-late", () => {});
        } catch (error) {
          if (error instanceof ShutdownPhaseStartedError) outcomes.push(`${error.code} ${phase}`);
        }
      shutdown.addTask(ShutdownPhase.ClusterShutdown, "added-while-running", () => {
        outcomes.push("added task ran");
      });
    });
    const run = observe(shutdown.run("user"));
    await world.runUntil(() => run.settled, 60_000);
    expect(outcomes).toEqual([
      "SHUTDOWN_PHASE_STARTED service-unbind",
      "SHUTDOWN_PHASE_STARTED cluster-leave",
      "added task ran",
    ]);
    expect(removedRan).toBe(false);
    expect(() => shutdown.addTask(ShutdownPhase.ActorSystemTerminate, "x", () => {})).toThrow(
      ShutdownPhaseStartedError,
    );
  });
});

// ------------------------------------------------------------------ in a cluster

const seeds = ["a:2552", "b:2552", "c:2552"];

async function threeNodes(seed: number): Promise<SimClusterHarness> {
  const h = new SimClusterHarness(seed);
  for (const n of ["a", "b", "c"]) await h.member(n, { seedNodes: seeds });
  await h.until(() => upEverywhere(h, ["a", "b", "c"]), 30_000);
  return h;
}

function upEverywhere(h: SimClusterHarness, names: string[]): boolean {
  return names.every((n) => {
    const st = h.members.get(n)?.cluster.state;
    return (
      st !== undefined &&
      st.members.length === names.length &&
      st.members.every((m) => m.status === "up") &&
      st.convergence
    );
  });
}

function withShutdown(m: SimMember): CoordinatedShutdown {
  const shutdown = new CoordinatedShutdown({ runtime: m.runtime });
  installClusterShutdown(shutdown, m.cluster, m.system);
  return shutdown;
}

/** Records the events other members see about `host`. */
function watchHost(h: SimClusterHarness, observers: string[], host: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  for (const o of observers) {
    const list: string[] = [];
    seen.set(o, list);
    h.members.get(o)?.cluster.subscribe((e) => {
      if ("member" in e && e.member.uniqueAddress.address.host === host) list.push(e.type);
    });
  }
  return seen;
}

function member(h: SimClusterHarness, name: string): SimMember {
  const m = h.members.get(name);
  if (m === undefined) throw new Error(`no member ${name}`);
  return m;
}

describe.each(SEEDS)("coordinated shutdown in a cluster (seed %i)", (seed) => {
  it.each(["c", "a"])(
    "run('user') on %s: it leaves (others see Leaving -> Exiting -> Removed), then its system terminates",
    async (name) => {
      const h = await threeNodes(seed);
      const others = ["a", "b", "c"].filter((n) => n !== name);
      const m = member(h, name);
      const shutdown = withShutdown(m);
      const seen = watchHost(h, others, name);
      const marks: string[] = [];
      shutdown.addTask(ShutdownPhase.BeforeClusterShutdown, "mark", () => {
        marks.push(`before: ${m.cluster.selfMember?.status}`);
      });
      shutdown.addTask(ShutdownPhase.ClusterExitingDone, "mark", () => {
        marks.push(`exiting-done: terminated=${m.system.isTerminated}`);
      });
      const t0 = h.world.now;
      const run = observe(shutdown.run("user"));
      await h.until(() => run.settled, 30_000);
      expect(run.value).toBe("user");
      // Every wait ended on a membership change, not on a phase timeout (cluster-leave: 5 s).
      expect(h.world.now - t0).toBeLessThan(5_000);
      expect(marks).toEqual(["before: up", "exiting-done: terminated=false"]);
      expect(m.system.isTerminated).toBe(true);
      await h.until(() => upEverywhere(h, others), 30_000);
      for (const o of others)
        expect(seen.get(o)).toEqual(["member-left", "member-exited", "member-removed"]);
      expect(m.runtime.scheduler.liveTimers).toBe(0);
    },
  );

  it("a node that never joined, and a lone node that formed its own cluster, shut down without waiting for timeouts", async () => {
    const h = new SimClusterHarness(seed);
    const loner = await h.member("x", { seedNodes: [] });
    const solo = await h.member("y", { seedNodes: ["y:2552"] });
    await h.until(() => solo.cluster.selfMember?.status === "up", 30_000);
    for (const m of [loner, solo]) {
      const shutdown = withShutdown(m);
      const t0 = h.world.now;
      const run = observe(shutdown.run("user"));
      await h.until(() => run.settled, 30_000);
      expect(run.value).toBe("user");
      expect(m.system.isTerminated).toBe(true);
      expect(h.world.now - t0).toBeLessThan(5_000); // the cluster-leave timeout
    }
  });

  // Found by simulator S20wL seed 373: a process shut down while it still tried to join
  // was welcomed into a cluster during its later phases, became up and then stopped
  // without leaving; the cluster waited for the failure detector and the resolver.
  it("a node still trying to join when its shutdown starts joins nothing during the rest of it", async () => {
    const h = await threeNodes(seed);
    h.network.partition(["z"], ["a", "b", "c"]);
    const z = await h.member("z", { seedNodes: seeds });
    await h.world.advance(6_000);
    expect(z.cluster.selfMember).toBeUndefined();
    const shutdown = withShutdown(z);
    // a slow task after cluster-leave: the cut heals meanwhile, the seeds answer again
    shutdown.addTask(ShutdownPhase.ClusterExiting, "slow", async () => {
      h.network.heal(["z"], ["a", "b", "c"]);
      await sleep(z.runtime, 8_000);
    });
    const run = observe(shutdown.run("user"));
    await h.until(() => run.settled, 60_000);
    expect(run.value).toBe("user");
    expect(z.system.isTerminated).toBe(true);
    // z never became a member anywhere
    for (const n of ["a", "b", "c"])
      expect(
        h.members.get(n)?.cluster.state.members.map((m) => m.uniqueAddress.address.host),
      ).toEqual(["a", "b", "c"]);
  });

  it("another node's leave(c) makes c run its shutdown with reason cluster-leaving", async () => {
    const h = await threeNodes(seed);
    const c = member(h, "c");
    const shutdown = withShutdown(c);
    const seen = watchHost(h, ["a", "b"], "c");
    member(h, "a").cluster.leave("c:2552");
    await h.until(() => c.system.isTerminated, 30_000);
    expect(shutdown.shutdownReason).toBe("cluster-leaving");
    await h.until(() => upEverywhere(h, ["a", "b"]), 30_000);
    expect(seen.get("b")).toEqual(["member-left", "member-exited", "member-removed"]);
  });

  // Found by the real-process sharding test S8: the leader removed a member that another
  // node made leave while its regions were still handing off; what they buffered was lost.
  it("another node's leave(c): c is removed only after its shutdown tasks before cluster-leave (the sharding hand-off) have finished", async () => {
    const h = await threeNodes(seed);
    const c = member(h, "c");
    const shutdown = withShutdown(c);
    const HAND_OFF_MS = 3_000;
    let handOffDoneAt: number | undefined;
    shutdown.addTask(ShutdownPhase.ClusterShardingShutdownRegion, "slow-hand-off", async () => {
      await sleep(c.runtime, HAND_OFF_MS);
      handOffDoneAt = h.world.now;
    });
    let removedAt: number | undefined;
    member(h, "a").cluster.subscribe((e) => {
      if (e.type === "member-removed" && e.member.uniqueAddress.address.host === "c")
        removedAt = h.world.now;
    });
    const t0 = h.world.now;
    member(h, "a").cluster.leave("c:2552");
    await h.until(() => c.system.isTerminated, 30_000);
    expect(shutdown.shutdownReason).toBe("cluster-leaving");
    expect(handOffDoneAt, "the slow task finished").toBeDefined();
    expect(removedAt, "a saw c removed").toBeDefined();
    expect(removedAt as number).toBeGreaterThanOrEqual(handOffDoneAt as number);
    expect((handOffDoneAt as number) - t0).toBeGreaterThanOrEqual(HAND_OFF_MS);
    await h.until(() => upEverywhere(h, ["a", "b"]), 30_000);
  });

  it("a member downed by the split brain resolver runs its shutdown with reason cluster-downing", async () => {
    const h = await threeNodes(seed);
    const c = member(h, "c");
    const shutdown = withShutdown(c);
    h.network.partition(["a", "b"], ["c"]);
    await h.until(() => c.system.isTerminated, 60_000);
    expect(shutdown.shutdownReason).toBe("cluster-downing");
    expect(await shutdown.run("user")).toBe("cluster-downing");
    await h.until(() => upEverywhere(h, ["a", "b"]), 60_000);
  });
});
