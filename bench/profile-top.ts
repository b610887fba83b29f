/**
 * `node --import tsx bench/profile-top.ts <file> [n]`: the `n` (default 10) functions at
 * the top of a V8 profile.
 *
 * - CPU profile (`.cpuprofile`, from --cpu-prof or node:inspector's Profiler): most self
 *   time, as `self % of busy (non-idle) time | self ms | function (file)`. Time per node is
 *   the sum of its samples' time deltas.
 * - Sampling heap profile (`.heapprofile`, HeapProfiler.stopSampling): most bytes
 *   allocated, as `% of sampled bytes | KiB | function (file)`.
 *
 * Nodes of the same function are merged. Under tsx, line numbers are of transpiled code,
 * so only function and file are shown.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}
interface HeapNode {
  readonly callFrame: CallFrame;
  readonly selfSize: number;
  readonly children: readonly HeapNode[];
}
interface HeapProfile {
  readonly head: HeapNode;
}

const DEFAULT_TOP = 10;

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write("usage: bench/profile-top.ts <file.cpuprofile|file.heapprofile> [n]\n");
  process.exit(2);
}
const top = Number(process.argv[3] ?? DEFAULT_TOP);
const parsed = JSON.parse(readFileSync(file, "utf8")) as CpuProfile | HeapProfile;

function keyOf(f: CallFrame): string {
  const where =
    f.url === "" ? "" : ` (${relative(process.cwd(), f.url.replace(/^file:\/\//, ""))})`;
  return `${f.functionName === "" ? "(anonymous)" : f.functionName}${where}`;
}

const self = new Map<string, number>();
let total = 0;
const add = (key: string, amount: number) => {
  self.set(key, (self.get(key) ?? 0) + amount);
  total += amount;
};

if ("head" in parsed) {
  const stack: HeapNode[] = [parsed.head];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.selfSize > 0) add(keyOf(node.callFrame), node.selfSize);
    stack.push(...node.children);
  }
  process.stdout.write(`${file}: ${(total / 1024).toFixed(0)} KiB sampled; % of sampled bytes\n`);
  for (const [key, bytes] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(
      `${((100 * bytes) / total).toFixed(1).padStart(5)} % ${(bytes / 1024).toFixed(0).padStart(8)} KiB  ${key}\n`,
    );
} else {
  const byId = new Map(parsed.nodes.map((n) => [n.id, n]));
  parsed.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (node !== undefined) add(keyOf(node.callFrame), parsed.timeDeltas[i] ?? 0);
  });
  const idle = self.get("(idle)") ?? 0;
  const busy = total - idle;
  process.stdout.write(
    `${file}: ${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms busy (not idle); % of busy\n`,
  );
  for (const [key, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(
      `${key === "(idle)" ? "    -" : ((100 * us) / busy).toFixed(1).padStart(5)} % ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}\n`,
    );
}
