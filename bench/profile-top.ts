/**
 * `node --import tsx bench/profile-top.ts <file.cpuprofile> [n]`: the `n` (default 10)
 * functions with the most self time in a V8 CPU profile (from --cpu-prof or
 * node:inspector's Profiler), as `self % of busy (non-idle) time | self ms | function (file)`. Time per
 * node is the sum of its samples' time deltas; nodes of the same function are merged.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const DEFAULT_TOP = 10;

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write("usage: bench/profile-top.ts <file.cpuprofile> [n]\n");
  process.exit(2);
}
const top = Number(process.argv[3] ?? DEFAULT_TOP);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const node = byId.get(id);
  const dt = profile.timeDeltas[i] ?? 0;
  if (node === undefined) return;
  const f = node.callFrame;
  const where =
    f.url === "" ? "" : ` (${relative(process.cwd(), f.url.replace(/^file:\/\//, ""))})`; // tsx: line numbers are of transpiled code
  const key = `${f.functionName === "" ? "(anonymous)" : f.functionName}${where}`;
  selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
  total += dt;
});
const idle = [...selfUs.entries()].find(([k]) => k === "(idle)")?.[1] ?? 0;
const busy = total - idle;
const rows = [...selfUs.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
process.stdout.write(
  `${file}: ${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms busy (not idle); % of busy\n`,
);
for (const [key, us] of rows)
  process.stdout.write(
    `${key === "(idle)" ? "    -" : ((100 * us) / busy).toFixed(1).padStart(5)} % ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}\n`,
  );
