#!/usr/bin/env node
// The npm registry reachable from this project's machines serves only some platform
// builds of packages such as @biomejs/cli-*, @rollup/rollup-*, @esbuild/*. `npm install`
// then leaves the other platforms' optional packages out of package-lock.json, and
// `npm ci` refuses the lockfile ("Missing: ... from lock file"). This script records each
// missing optional package with the os/cpu/libc its name declares, so `npm ci` skips it
// by platform without fetching it. Run after every `npm install`: `node scripts/lockfile-platform-stubs.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const packages = lock.packages;
const OS = [
  "android",
  "darwin",
  "freebsd",
  "linux",
  "netbsd",
  "openbsd",
  "sunos",
  "win32",
  "aix",
  "openharmony",
  "cygwin",
];
const CPU = [
  "arm64",
  "x64",
  "ia32",
  "arm",
  "loong64",
  "mips64el",
  "ppc64",
  "riscv64",
  "s390x",
  "wasm32",
  "mips64",
];

function platformOf(name) {
  const tokens = name.split("/").pop().split("-");
  const os = OS.find((o) => tokens.includes(o)) ?? (tokens.includes("win32") ? "win32" : undefined);
  const cpu =
    CPU.find((c) => tokens.includes(c)) ?? (tokens.includes("arm64") ? "arm64" : undefined);
  const libc = tokens.includes("musl")
    ? "musl"
    : tokens.includes("gnu") || tokens.includes("gnueabihf")
      ? "glibc"
      : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [key, entry] of Object.entries(packages)) {
  const optional = entry.optionalDependencies ?? {};
  const base = key === "" ? "node_modules/" : `${key}/node_modules/`;
  for (const [dep, version] of Object.entries(optional)) {
    if (packages[`${base}${dep}`] || packages[`node_modules/${dep}`]) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (os === undefined && cpu === undefined) continue; // not a platform package: leave it
    packages[`node_modules/${dep}`] = {
      version: version.replace(/^[\^~]/, ""),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...(os ? { os: [os] } : {}),
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(libc ? { libc: [libc] } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lockfile: recorded ${added} platform-specific optional packages`);
