/**
 * `node --import tsx bench/membership-scale-run.ts <N> [seed] [crashPct] [stopAtMs] [upPerRound]
 * [joinsPerSecond]`: one simulator run
 * of the 1 000-member scenario at size N (all N start at once, converge, crashPct % are
 * killed with kill -9 semantics, the survivors converge again), printing the phases'
 * virtual and wall times. For profiling: `node --cpu-prof --import tsx bench/membership-scale-run.ts 250`;
 * with `PROFILE_CRASH=<file>` in the environment, only the crash phase is profiled (a
 * `.cpuprofile` written to that file when the run ends; summarize it with profile-top.ts);
 * with `PROFILE_STEADY=<file>`, only the 10 idle seconds after formation; with
 * `PROFILE_CRASH_HEAP=<file>`, a sampling allocation profile (`.heapprofile`, garbage
 * included) of the crash phase; with `CRASH_PHASE_MS=<ms>`, the crash phase (and its
 * profiles) ends after that much virtual time; with `PROFILE_CRASH_FROM_MS=<ms>`, the crash
 * profile starts that much virtual time after the crash; with `HEAP_SNAPSHOT_STEADY=<file>`, a
 * heap snapshot is written after the idle seconds.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { writeHeapSnapshot } from "node:v8";
import { MeteredSimCluster, nodeNames } from "../test/cluster/sim-gossip-meter.js";

const size = Number(process.argv[2] ?? 250);
const seed = Number(process.argv[3] ?? 1);
const crashPct = Number(process.argv[4] ?? 10);
/** Optional: stop after this much virtual time (profiling a part of the run). */
const stopAtMs = Number(process.argv[5] ?? Number.POSITIVE_INFINITY);
/** Optional: maxMembersUpPerLeaderRound and maxJoinsAdmittedPerSecond (default settings without). */
const upPerRound = process.argv[6] === undefined ? undefined : Number(process.argv[6]);
const joinsPerSecond = process.argv[7] === undefined ? undefined : Number(process.argv[7]);
const DEFAULTS = {
  settings: {
    ...(upPerRound === undefined ? {} : { maxMembersUpPerLeaderRound: upPerRound }),
    ...(joinsPerSecond === undefined ? {} : { maxJoinsAdmittedPerSecond: joinsPerSecond }),
  },
  failureDetector: {},
  downing: {},
} as const;

const wall0 = performance.now();
const h = new MeteredSimCluster(seed);
const names = nodeNames(size);
const seedNodes = names.slice(0, 3).map((n) => `${n}:2552`);
for (const n of names) await h.member(n, { seedNodes, ...DEFAULTS });
const t0 = h.world.now;
const lap = (what: string) =>
  console.log(
    `${what}: virtual ${Math.round(h.world.now - t0)} ms, wall ${Math.round(performance.now() - wall0)} ms, ` +
      `cpu ${Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000)} ms, events ${h.world.stepsRun}, ` +
      `full gossips ${h.traffic.fullGossip.frames} (${(h.traffic.fullGossip.bytes / 1048576).toFixed(1)} MiB), gossip ${(h.traffic.gossip.bytes / 1048576).toFixed(1)} MiB, ` +
      `statuses ${h.traffic.gossip.frames - h.traffic.fullGossip.frames} (${((h.traffic.gossip.bytes - h.traffic.fullGossip.bytes) / 1048576).toFixed(1)} MiB)`,
  );
let nextReport = 0;
const progress = () => {
  if (h.world.now - t0 >= nextReport) {
    nextReport += 5_000;
    const st = h.members.get(names[0] as string)?.cluster.state;
    lap(
      `  n000 sees ${st?.members.length} (${st?.members.filter((m) => m.status === "up").length} up)`,
    );
  }
  if (h.world.now - t0 > stopAtMs) {
    lap("stopped");
    process.exit(0);
  }
  return false;
};
const formed = h.throttled(() => h.allUpAndConverged(names), 100);
await h.until(() => progress() || formed(), 600_000);
lap("formed");
h.resetTraffic();
const steadyProfileFile = process.env.PROFILE_STEADY;
const steadyProfiler = steadyProfileFile === undefined ? undefined : new Session();
if (steadyProfiler !== undefined) {
  steadyProfiler.connect();
  await steadyProfiler.post("Profiler.enable");
  await steadyProfiler.post("Profiler.start");
}
await h.world.advance(10_000);
if (steadyProfiler !== undefined && steadyProfileFile !== undefined) {
  const { profile } = await steadyProfiler.post("Profiler.stop");
  writeFileSync(steadyProfileFile, JSON.stringify(profile));
  steadyProfiler.disconnect();
}
console.log(`steady gossip ${(h.traffic.gossip.bytes / size / 10).toFixed(1)} B/node/s`);
lap("steady");
if (process.env.HEAP_SNAPSHOT_STEADY !== undefined)
  writeHeapSnapshot(process.env.HEAP_SNAPSHOT_STEADY);
const profileFile = process.env.PROFILE_CRASH;
const profiler = profileFile === undefined ? undefined : new Session();
/** `PROFILE_CRASH_HEAP=<file>`: a sampling allocation profile of the crash phase. */
const heapFile = process.env.PROFILE_CRASH_HEAP;
const heapProfiler = heapFile === undefined ? undefined : new Session();
if (crashPct > 0) {
  /** `PROFILE_CRASH_FROM_MS=<ms>`: the crash profile starts this much virtual time after the crash. */
  const profileFromMs = Number(process.env.PROFILE_CRASH_FROM_MS ?? 0);
  if (profiler !== undefined) {
    profiler.connect();
    await profiler.post("Profiler.enable");
    if (profileFromMs === 0) await profiler.post("Profiler.start");
  }
  if (heapProfiler !== undefined) {
    heapProfiler.connect();
    await heapProfiler.post("HeapProfiler.enable");
    // garbage included: where the collector's work comes from (flags newer than the
    // inspector typings of @types/node)
    const post = heapProfiler.post.bind(heapProfiler) as (m: string, p: object) => Promise<unknown>;
    await post("HeapProfiler.startSampling", {
      samplingInterval: 65_536,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  h.resetTraffic();
  const victims = names.slice(size - Math.round((size * crashPct) / 100));
  for (const v of victims) {
    const m = h.members.get(v);
    if (m) h.crash(m);
    h.members.delete(v);
  }
  const rest = names.slice(0, size - victims.length);
  const t1 = h.world.now;
  const reconverged = h.throttled(() => h.allUpAndConverged(rest), 100);
  const versionEntries = () =>
    h.members.get(names[0] as string)?.cluster.membershipState.latestGossip.version.entries.length;
  let nextCrashReport = t1 + 1_000;
  let profiling = profileFromMs === 0;
  const crashProgress = () => {
    if (!profiling && profiler !== undefined && h.world.now - t1 >= profileFromMs) {
      profiling = true;
      // the in-process session runs the command at once; its promise is not awaited here
      void profiler.post("Profiler.start");
    }
    if (h.world.now >= nextCrashReport) {
      nextCrashReport += 1_000;
      const st = h.members.get(names[0] as string)?.cluster.state;
      lap(
        `  after the crash n000 sees ${st?.members.length} (${st?.unreachable.length} unreachable, ` +
          `${st?.members.filter((m) => m.status === "down").length} down, version of ${versionEntries()} entries)`,
      );
    }
    return false;
  };
  /** `CRASH_PHASE_MS=<ms>`: the crash phase ends after this much virtual time (profiling its start). */
  const crashPhaseMs = Number(process.env.CRASH_PHASE_MS ?? Number.POSITIVE_INFINITY);
  await h.until(
    () => crashProgress() || reconverged() || h.world.now - t1 >= crashPhaseMs,
    600_000,
  );
  console.log(`reconverged after ${Math.round(h.world.now - t1)} ms virtual`);
  lap("reconverged");
  if (heapProfiler !== undefined && heapFile !== undefined) {
    const { profile } = await heapProfiler.post("HeapProfiler.stopSampling");
    writeFileSync(heapFile, JSON.stringify(profile));
  }
  if (profiler !== undefined && profileFile !== undefined) {
    const { profile } = await profiler.post("Profiler.stop");
    writeFileSync(profileFile, JSON.stringify(profile));
  }
}
process.exit(0);
