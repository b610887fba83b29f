/**
 * The cluster commands of the `shardkit` CLI, on the management HTTP API
 * (docs/operations.md, "The shardkit CLI"):
 *
 *   shardkit members | shards <type> | entity <type> <id> | leave <address> |
 *            down <address> | ready   [--url URL] [--token T] [--json] [--timeout-ms N]
 *
 * Human tables by default, the API's JSON with --json. --url defaults to
 * $SHARDKIT_MANAGEMENT_URL or http://127.0.0.1:8558, --token to $SHARDKIT_MANAGEMENT_TOKEN.
 * Exit codes: 0 ok, 1 failure (unreachable, refused, not found), 2 usage error,
 * 3 `ready`: the node answered but is not ready.
 */

import { parseArgs } from "node:util";
import {
  CliFailure,
  type CliIo,
  EXIT_OK,
  EXIT_RUNTIME,
  EXIT_USAGE,
  oneLine,
  UsageError,
} from "./io.js";

/** `ready`: the node answered 503 (not ready). */
export const EXIT_NOT_READY = 3;
export const MANAGEMENT_URL_DEFAULT = "http://127.0.0.1:8558";
export const REQUEST_TIMEOUT_MS_DEFAULT = 10_000;

export const CLUSTER_COMMANDS = ["members", "shards", "entity", "leave", "down", "ready"] as const;
export type ClusterCommand = (typeof CLUSTER_COMMANDS)[number];

export const CLUSTER_USAGE = `Usage: shardkit <command> [arguments] [options]

Commands on a running node's management API:
  members                 the cluster's members as this node sees them
  shards <type>           regions, shards and entity counts of an entity type
  entity <type> <id>      where an entity lives
  leave <address>         make a member leave gracefully (needs --token)
  down <address>          mark a member down: it is removed and must stop (needs --token)
  ready                   the node's readiness (exit 3 when not ready)

<address> is system@host:port or host:port (the member's remoting address).

Options:
  --url <url>             management URL (default $SHARDKIT_MANAGEMENT_URL or ${MANAGEMENT_URL_DEFAULT})
  --token <token>         bearer token (default $SHARDKIT_MANAGEMENT_TOKEN)
  --json                  print the API's JSON answer instead of a table
  --timeout-ms <ms>       give up after this long (default ${REQUEST_TIMEOUT_MS_DEFAULT})
  -h, --help              show this help

Exit codes: 0 ok, 1 failure (unreachable, refused, not found), 2 usage error, 3 not ready.`;

interface Args {
  readonly command: ClusterCommand;
  readonly positionals: readonly string[];
  readonly url: string;
  readonly token: string | undefined;
  readonly json: boolean;
  readonly timeoutMs: number;
}

const ARITY: Record<ClusterCommand, readonly string[]> = {
  members: [],
  shards: ["<type>"],
  entity: ["<type>", "<id>"],
  leave: ["<address>"],
  down: ["<address>"],
  ready: [],
};

function parse(
  command: ClusterCommand,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Args | "help" {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        url: { type: "string" },
        token: { type: "string" },
        json: { type: "boolean", default: false },
        "timeout-ms": { type: "string", default: String(REQUEST_TIMEOUT_MS_DEFAULT) },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    throw new UsageError(oneLine(error));
  }
  if (values.help === true) return "help";
  const want = ARITY[command];
  if (positionals.length !== want.length)
    throw new UsageError(
      `expected ${want.length === 0 ? "no arguments" : want.join(" ")}, got ${positionals.length === 0 ? "none" : positionals.map((p) => `"${p}"`).join(" ")}`,
    );
  const url =
    (values.url as string | undefined) ?? env.SHARDKIT_MANAGEMENT_URL ?? MANAGEMENT_URL_DEFAULT;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url "${url}" is not a URL (expected e.g. ${MANAGEMENT_URL_DEFAULT})`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new UsageError(`--url must be http:// or https://, not ${parsed.protocol}//`);
  const raw = values["timeout-ms"] as string;
  const timeoutMs = Number(raw);
  if (!/^\d+$/.test(raw) || timeoutMs < 1 || timeoutMs > 600_000)
    throw new UsageError(`invalid --timeout-ms "${raw}": expected an integer 1 .. 600000`);
  return {
    command,
    positionals,
    url: url.replace(/\/+$/, ""),
    token: (values.token as string | undefined) ?? env.SHARDKIT_MANAGEMENT_TOKEN,
    json: values.json === true,
    timeoutMs,
  };
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** Why a request did not get an answer, explained for an operator. */
export function describeConnectError(url: string, error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  const name = error instanceof Error ? error.name : "";
  if (name === "TimeoutError" || name === "AbortError")
    return `no answer from ${url} in time (--timeout-ms)`;
  switch (code) {
    case "ECONNREFUSED":
      return `cannot reach the management API at ${url}: connection refused (is the node running with the management option, on this port? set --url or $SHARDKIT_MANAGEMENT_URL)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot reach the management API at ${url}: the host name does not resolve`;
    case "ECONNRESET":
      return `the management API at ${url} closed the connection`;
    default:
      return `cannot reach the management API at ${url}: ${oneLine(cause?.message ?? error)}`;
  }
}

async function call(args: Args, method: string, path: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (args.token !== undefined) headers.authorization = `Bearer ${args.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const send = () =>
    fetch(`${args.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(args.timeoutMs),
    });
  let res: Response;
  try {
    // a read may be sent again once: a pooled connection the server just closed fails
    // before the request went out
    res = await send().catch((error: unknown) => {
      if (method !== "GET" || (error as Error).name === "TimeoutError") throw error;
      return send();
    });
  } catch (error) {
    throw new CliFailure(describeConnectError(args.url, error));
  }
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new CliFailure(
      `${args.url} answered ${res.status} without JSON: is this a shardkit management port?`,
    );
  }
}

/** Left-aligned columns separated by two spaces. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

const seg = encodeURIComponent;

function requestOf(args: Args): { method: string; path: string; body?: unknown } {
  const [p0, p1] = args.positionals as [string, string];
  switch (args.command) {
    case "members":
      return { method: "GET", path: "/cluster/members" };
    case "shards":
      return { method: "GET", path: `/cluster/shards/${seg(p0)}` };
    case "entity":
      return { method: "GET", path: `/cluster/shards/${seg(p0)}/entities/${seg(p1)}` };
    case "leave":
      return { method: "PUT", path: `/cluster/members/${seg(p0)}`, body: { operation: "leave" } };
    case "down":
      return { method: "PUT", path: `/cluster/members/${seg(p0)}`, body: { operation: "down" } };
    case "ready":
      return { method: "GET", path: "/health/ready" };
  }
}

type Json = Record<string, unknown>;

function render(command: ClusterCommand, b: Json): string[] {
  switch (command) {
    case "members": {
      const members = (b.members ?? []) as Json[];
      const rows = members.map((m) => {
        const tags = [
          m.node === b.self ? "self" : "",
          m.node === b.leader ? "leader" : "",
          m.node === b.oldest ? "oldest" : "",
        ].filter((t) => t !== "");
        return [
          String(m.node),
          String(m.status),
          m.reachable === true ? "yes" : "NO",
          ((m.roles ?? []) as string[]).join(",") || "-",
          String(m.appVersion),
          tags.join(",") || "-",
        ];
      });
      const out = table(["NODE", "STATUS", "REACHABLE", "ROLES", "VERSION", ""], rows);
      for (const u of (b.unreachable ?? []) as Json[])
        out.push(
          `unreachable: ${u.node} (observed by ${((u.observedBy ?? []) as string[]).join(", ")})`,
        );
      out.push(
        `${members.length} member(s); leader ${b.leader ?? "none"}; convergence ${b.convergence === true ? "yes" : "no"}`,
      );
      return out;
    }
    case "shards": {
      const regions = (b.regions ?? []) as Json[];
      const out = table(
        ["REGION NODE", "SHARDS", "ENTITIES"],
        regions.map((r) => [String(r.node), String(r.shardCount), String(r.entityCount)]),
      );
      out.push(
        `${b.type}: ${b.shardCount} shard(s), ${b.entityCount} entit(ies) in ${regions.length} region(s)`,
      );
      const failed = (b.failed ?? []) as string[];
      if (failed.length > 0) out.push(`no answer from: ${failed.join(", ")}`);
      return out;
    }
    case "entity":
      return [
        b.node === null
          ? `${b.type} ${b.entityId}: shard ${b.shardId} has no home yet`
          : `${b.type} ${b.entityId}: shard ${b.shardId} on ${b.node}, ${b.alive === true ? "running" : "not running (starts on the next message)"}`,
      ];
    case "leave":
    case "down":
      return [String(b.message)];
    case "ready": {
      const checks = (b.checks ?? []) as Json[];
      return [
        b.status === "ready" ? `${b.node}: ready` : `${b.node}: NOT ready`,
        ...checks.map(
          (c) =>
            `  ${c.ok === true ? "ok  " : "FAIL"} ${c.name}${c.reason === undefined ? "" : `: ${c.reason}`}`,
        ),
      ];
    }
  }
}

/** Runs a cluster command; returns the exit code. */
export async function runClusterCommand(
  command: ClusterCommand,
  argv: readonly string[],
  io: CliIo,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  let args: Args | "help";
  try {
    args = parse(command, argv, env);
  } catch (error) {
    io.err(`shardkit ${command}: ${oneLine(error)} (see shardkit ${command} --help)`);
    return EXIT_USAGE;
  }
  if (args === "help") {
    io.out(CLUSTER_USAGE);
    return EXIT_OK;
  }
  const req = requestOf(args);
  let answer: Answer;
  try {
    answer = await call(args, req.method, req.path, req.body);
  } catch (error) {
    io.err(`shardkit ${command}: ${oneLine(error)}`);
    return EXIT_RUNTIME;
  }
  const { status, body } = answer;
  if (command === "ready" && status === 503) {
    if (args.json) io.out(JSON.stringify(body, null, 2));
    else for (const l of render("ready", { ...body, status: "not-ready" })) io.out(l);
    return EXIT_NOT_READY;
  }
  if (status < 200 || status >= 300) {
    if (args.json) io.out(JSON.stringify(body, null, 2));
    const hint =
      status === 401 || (status === 403 && body.code === "FORBIDDEN")
        ? " (pass --token or set $SHARDKIT_MANAGEMENT_TOKEN)"
        : "";
    io.err(
      `shardkit ${command}: ${status} ${body.code ?? ""}: ${body.error ?? "request failed"}${hint}`,
    );
    return EXIT_RUNTIME;
  }
  if (args.json) io.out(JSON.stringify(body, null, 2));
  else for (const l of render(command, body)) io.out(l);
  return EXIT_OK;
}
