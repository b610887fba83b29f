/**
 * `npm run test:bootstorm [-- <members>]` (default 50): one boot storm of real processes
 * (bootstorm.ts); exits 1 on a down, a timeout or any other failure. Not in `npm test`.
 */
import { bootStorm } from "./bootstorm.js";

const n = Number(process.argv[2] ?? 50);
const t = setTimeout(() => {
  process.stderr.write("boot storm: overall timeout (5 min)\n");
  process.exit(1);
}, 300_000);
bootStorm(n, { log: (l) => process.stdout.write(`${l}\n`) }).then(
  (r) => {
    clearTimeout(t);
    process.stdout.write(`${JSON.stringify(r)}\n`);
    if (r.downs > 0) {
      process.stderr.write(`boot storm: ${r.downs} downs\n`);
      process.exit(1);
    }
    process.exit(0);
  },
  (error: unknown) => {
    clearTimeout(t);
    process.stderr.write(
      `boot storm failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
