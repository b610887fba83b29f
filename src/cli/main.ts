#!/usr/bin/env node
/**
 * The `shardkit` command (package.json "bin"). Thin entry: everything else is in
 * ./cli.ts so it can be read and tested without touching the process.
 */
import { runCli } from "./cli.js";

const code = await runCli(
  process.argv.slice(2),
  {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  },
  process.env,
);
// exitCode (not exit()) lets stdout/stderr drain; the pool is already ended.
process.exitCode = code;
