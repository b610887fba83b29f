/**
 * Seeds for simulator scenarios. Each scenario file runs a fixed list (deterministic CI);
 * `SHARDKIT_SIM_SEEDS` overrides it to replay a failure or explore more:
 *   SHARDKIT_SIM_SEEDS=42 npx vitest run test/cluster/membership.sim.test.ts
 *   SHARDKIT_SIM_SEEDS=1-500 npx vitest run test/cluster/membership.sim.test.ts
 * (`npm run sim -- --scenario membership --seeds 500` does the latter.)
 */
export function simSeeds(defaults: readonly number[]): number[] {
  const env = process.env.SHARDKIT_SIM_SEEDS;
  if (env === undefined || env.trim() === "") return [...defaults];
  const out: number[] = [];
  for (const part of env.split(",")) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (m === null)
      throw new Error(`SHARDKIT_SIM_SEEDS: expected "n", "a-b" or a comma list, got "${part}"`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let s = from; s <= to; s++) out.push(s);
  }
  return out;
}

/** The command that replays one seed of a scenario file. */
export function replayCommand(seed: number, file: string): string {
  return `SHARDKIT_SIM_SEEDS=${seed} npx vitest run ${file}`;
}
