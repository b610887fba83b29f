/**
 * Boot storm and idle cost with real processes (`npm run bench -- bootstorm`; issue 21,
 * docs/cluster-scale.md "Capacity guide"), default timings, 3 seed nodes:
 * - membership.bootstorm.50.real.ms: 50 member processes started at the same moment on
 *   this machine, until every member sees all 50 Up with convergence (fails with 0 downs
 *   or not at all: a down aborts the run); membership.bootstorm.50.real.downs;
 * - membership.idle.cpu.pct.25: median CPU per idle member (percent of one core, over
 *   20 s) with 25 members; membership.idle.rss.mib.25 its resident memory.
 * This group saturates both cores for one to three minutes (more than the usual 2-minute
 * budget of a group): run it alone (`--only=membership.idle` runs only the 25-member part).
 */
import { bootStorm } from "../test/cluster-real/bootstorm.js";
import { type BenchGroup, wants } from "./harness.js";

export const bootstormGroup: BenchGroup = {
  name: "bootstorm",
  description: "real processes started at once: formation time, downs, idle CPU and memory",
  async run(report) {
    if (wants("membership.bootstorm")) {
      const r = await bootStorm(50);
      report({ metric: "membership.bootstorm.50.real.ms", value: r.formedMs, unit: "ms" });
      report({ metric: "membership.bootstorm.50.real.downs", value: r.downs, unit: "downs" });
      report({ metric: "membership.idle.cpu.pct.50", value: r.idleCpuPctMedian, unit: "%" });
      report({ metric: "membership.idle.rss.mib.50", value: r.rssMiBMedian, unit: "MiB" });
    }
    if (wants("membership.idle")) {
      const r = await bootStorm(25);
      report({ metric: "membership.idle.cpu.pct.25", value: r.idleCpuPctMedian, unit: "%" });
      report({ metric: "membership.idle.rss.mib.25", value: r.rssMiBMedian, unit: "MiB" });
      report({ metric: "membership.bootstorm.25.real.ms", value: r.formedMs, unit: "ms" });
    }
  },
};
