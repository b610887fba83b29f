/**
 * The package a user installs: `npm pack` (which builds dist/ through `prepack`), then the
 * tarball installed into a fresh temporary project that runs a small sharding program
 * importing `shardkit`, `shardkit/sqlite` and `shardkit/testing`. Also checks the
 * tarball's contents against package.json's `exports`, and the clear error of
 * `shardkit/sqlite` when its optional peer dependency is missing.
 */
import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/child-process.js";

const run = promisify(execFile);
const PACK_TIMEOUT_MS = 240_000;
const RUN_TIMEOUT_MS = 60_000;

interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly exports: Record<string, string | Record<string, string>>;
  readonly bin: Record<string, string>;
  readonly dependencies: Record<string, string>;
  readonly peerDependencies: Record<string, string>;
  readonly peerDependenciesMeta: Record<string, { optional?: boolean }>;
}
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as PackageJson;

let dir = "";
let tarball = "";
let files: string[] = [];

/** dist/ was built after the last change to src/ (CI builds right before the tests). */
function distIsFresh(): boolean {
  const built = join(ROOT, "dist", "index.js");
  if (!existsSync(built)) return false;
  const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" });
  const newest = Math.max(...sources.map((f) => statSync(join(ROOT, "src", f)).mtimeMs));
  return statSync(built).mtimeMs >= newest;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "shardkit-pack-"));
  // `prepack` builds dist/; skip it only when dist/ is already newer than every source.
  const args = ["pack", "--json", "--pack-destination", dir];
  if (distIsFresh()) args.push("--ignore-scripts");
  const { stdout } = await run("npm", args, {
    cwd: ROOT,
    timeout: PACK_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  // npm prints the prepack script's output before the JSON array.
  const json = JSON.parse(stdout.slice(stdout.search(/^\[/m))) as {
    filename: string;
    files: { path: string }[];
  }[];
  const [packed] = json;
  if (packed === undefined) throw new Error(`npm pack printed no result: ${stdout}`);
  tarball = join(dir, packed.filename);
  files = packed.files.map((f) => f.path);
}, PACK_TIMEOUT_MS);

afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

describe("the npm package", () => {
  it("ships every exported file, the bin, the license and the changelog, and no sources or tests", () => {
    const targets = Object.values(pkg.exports).flatMap((e) =>
      typeof e === "string" ? [e] : Object.values(e),
    );
    targets.push(...Object.values(pkg.bin));
    for (const target of targets) expect(files).toContain(target.replace(/^\.\//, ""));
    for (const f of ["LICENSE", "CHANGELOG.md", "README.md", "package.json"])
      expect(files).toContain(f);
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/"))).toEqual([]);
  });

  it("pins msgpackr exactly and keeps the database drivers optional peers", () => {
    expect(pkg.dependencies.msgpackr).toMatch(/^\d+\.\d+\.\d+$/);
    // msgpackr, plus the Standard Schema types (no runtime code) that the API names.
    expect(Object.keys(pkg.dependencies).sort()).toEqual(["@standard-schema/spec", "msgpackr"]);
    for (const driver of ["better-sqlite3", "pg"]) {
      expect(pkg.peerDependencies[driver]).toBeDefined();
      expect(pkg.peerDependenciesMeta[driver]?.optional).toBe(true);
    }
  });

  it(
    "installs into a fresh project, names a missing driver, and runs a sharding program on SQLite",
    async () => {
      const app = join(dir, "app");
      mkdirSync(app);
      writeFileSync(
        join(app, "package.json"),
        JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }),
      );
      await run(
        "npm",
        ["install", tarball, "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"],
        { cwd: app, timeout: PACK_TIMEOUT_MS },
      );

      // Without better-sqlite3, shardkit/sqlite fails with a typed error naming it.
      writeFileSync(
        join(app, "missing.mjs"),
        `import("shardkit/sqlite").then(
          () => console.log("loaded"),
          (e) => console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })));`,
      );
      const missing = await run("node", ["missing.mjs"], { cwd: app, timeout: RUN_TIMEOUT_MS });
      const err = JSON.parse(missing.stdout) as { name: string; code: string; message: string };
      expect(err.name).toBe("MissingPeerDependencyError");
      expect(err.code).toBe("MISSING_PEER_DEPENDENCY");
      expect(err.message).toContain("npm install better-sqlite3");

      // The application installs the driver it uses (here: the repository's build of it).
      symlinkSync(
        join(ROOT, "node_modules", "better-sqlite3"),
        join(app, "node_modules", "better-sqlite3"),
        "dir",
      );
      writeFileSync(join(app, "main.mjs"), APP_PROGRAM);
      const { stdout } = await run("node", ["main.mjs", join(dir, "app.db")], {
        cwd: app,
        timeout: RUN_TIMEOUT_MS,
      });
      expect(stdout.trim().split("\n")).toEqual([
        "testing exports ShardingOracle: function",
        "cart-1: tea,scones",
        "cart-2: jam",
        "journal holds 3 cart events",
      ]);
    },
    PACK_TIMEOUT_MS + RUN_TIMEOUT_MS,
  );
});

/** A user's program, importing only the installed package's public entry points. */
const APP_PROGRAM = `
import { createServer } from "node:net";
import {
  ClusterNode, ClusterSharding, Effect, EntityTypeKey, EventSourcedBehavior, msgpackCodec,
  persistenceIdOf,
} from "shardkit";
import { sqlitePersistence } from "shardkit/sqlite";
import { ShardingOracle } from "shardkit/testing";

console.log("testing exports ShardingOracle: " + typeof ShardingOracle);
const port = await new Promise((resolve) => {
  const s = createServer();
  s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
});
const store = sqlitePersistence({ path: process.argv[2] });
const Cart = EntityTypeKey("Cart");
const Eff = Effect.of();
const node = await ClusterNode.start({
  systemName: "app", port, seedNodes: ["127.0.0.1:" + port],
  settings: { periodicTasksInitialDelayMs: 0, seedNodeTimeoutMs: 500 },
});
const sharding = ClusterSharding.get(node);
sharding.init({
  typeKey: Cart,
  createBehavior: ({ entityId }) => EventSourcedBehavior.create({
    persistenceId: persistenceIdOf("Cart", entityId),
    emptyState: [],
    commandHandler: (items, cmd) => cmd.type === "add"
      ? Eff.persist({ type: "added", sku: cmd.sku }).thenReply(cmd.replyTo, () => "ok")
      : Eff.reply(cmd.replyTo, items),
    eventHandler: (items, e) => [...items, e.sku],
    journal: store.journal,
    eventCodec: msgpackCodec(),
  }),
});
const ask = (id, msg) => sharding.entityRefFor(Cart, id).ask((replyTo) => ({ ...msg, replyTo }), { timeoutMs: 20000 });
await ask("cart-1", { type: "add", sku: "tea" });
await ask("cart-1", { type: "add", sku: "scones" });
await ask("cart-2", { type: "add", sku: "jam" });
console.log("cart-1: " + (await ask("cart-1", { type: "get" })).join(","));
console.log("cart-2: " + (await ask("cart-2", { type: "get" })).join(","));
let events = 0;
for (const id of ["cart-1", "cart-2"])
  events += (await store.journal.highestSequenceNr(persistenceIdOf("Cart", id)));
console.log("journal holds " + events + " cart events");
await node.shutdown("done");
await store.close();
`;
