/**
 * `npm run bench -- <group> [<group>...] [--json] [--only=<metric prefix>,...]`: runs
 * benchmark groups (with --only, only the parts whose metrics start with one of the
 * prefixes, where the group supports it: sharding, failover, proxy). Without a group it lists them. Run through `node --expose-gc` so memory figures are exact.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BenchGroup, formatTable, type Metric, setOnly } from "./harness.js";

const groups: Record<string, () => Promise<BenchGroup>> = {
  actor: async () => (await import("./actor.js")).actorGroup,
  remote: async () => (await import("./remote.js")).remoteGroup,
  "remote-floor": async () => (await import("./remote-floor.js")).remoteFloorGroup,
  membership: async () => (await import("./membership.js")).membershipGroup,
  membership1000: async () => (await import("./membership-scale.js")).membershipScaleGroup,
  persistence: async () => (await import("./persistence.js")).persistenceGroup,
  sharding: async () => (await import("./sharding.js")).shardingGroup,
  failover: async () => (await import("./sharding.js")).failoverGroup,
  ddata: async () => (await import("./ddata.js")).ddataGroup,
  bootstorm: async () => (await import("./bootstorm.js")).bootstormGroup,
  proxy: async () => (await import("./proxy.js")).proxyGroup,
};

/** Set in the child that runs a compiled group from the bundle. */
const BUNDLED_ENV = "SHARDKIT_BENCH_BUNDLED";

/**
 * This file and everything it imports (the groups, src/, the test helpers they use) as
 * one ES module under node_modules/.cache, packages left as imports. esbuild does not
 * keep function names unless asked (keepNames), which is the point (BenchGroup.compiled).
 */
async function bundleBenchmarks(): Promise<string> {
  const { build } = await import("esbuild");
  const here = fileURLToPath(import.meta.url);
  const outfile = join(dirname(here), "..", "node_modules", ".cache", "shardkit-bench", "run.mjs");
  await build({
    entryPoints: [here],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: `node${process.versions.node}`,
    packages: "external",
    logLevel: "warning",
  });
  return outfile;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const json = args.includes("--json");
  const names = args.filter((a) => !a.startsWith("--"));
  const flagArgs = args.filter((a) => a.startsWith("--"));
  const onlyArg = args.find((a) => a.startsWith("--only="));
  if (onlyArg)
    setOnly(
      onlyArg
        .slice("--only=".length)
        .split(",")
        .filter((p) => p !== ""),
    );
  if (names.length === 0) {
    process.stdout.write(
      `usage: npm run bench -- <group>... [--json] [--only=<metric prefix>,...]\ngroups: ${Object.keys(groups).join(", ")}\n`,
    );
    return;
  }
  for (const name of names) {
    const load = groups[name];
    if (!load) {
      process.stderr.write(
        `unknown bench group "${name}"; groups: ${Object.keys(groups).join(", ")}\n`,
      );
      process.exitCode = 2;
      return;
    }
    const group = await load();
    if (group.compiled === true && process.env[BUNDLED_ENV] === undefined) {
      // this group alone, from the bundle, without tsx (harness.ts BenchGroup.compiled)
      const bundle = await bundleBenchmarks();
      const flags = [
        ...process.execArgv.filter((f) => f === "--expose-gc"),
        ...(group.nodeFlags ?? []),
      ];
      const child = spawnSync(process.execPath, [...flags, bundle, name, ...flagArgs], {
        stdio: "inherit",
        env: { ...process.env, [BUNDLED_ENV]: "1" },
      });
      if (child.status !== 0) {
        process.exitCode = child.status ?? 1;
        return;
      }
      continue;
    }
    const missing = (group.nodeFlags ?? []).filter((f) => !process.execArgv.includes(f));
    if (missing.length > 0) {
      // this group alone, in a child process with the flags it needs
      const child = spawnSync(
        process.execPath,
        [...process.execArgv, ...missing, process.argv[1] as string, name, ...flagArgs],
        { stdio: "inherit" },
      );
      if (child.status !== 0) {
        process.exitCode = child.status ?? 1;
        return;
      }
      continue;
    }
    const rows: Metric[] = [];
    if (!json) process.stdout.write(`# ${group.name}: ${group.description}\n`);
    await group.run((m) => {
      rows.push(m);
      if (json)
        process.stdout.write(
          `${JSON.stringify({ metric: m.metric, value: m.value, unit: m.unit })}\n`,
        );
    });
    if (!json) process.stdout.write(`${formatTable(rows)}\n\n`);
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
