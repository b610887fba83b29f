/**
 * The management HTTP API on a real 3-member cluster (sharding-node-main.ts children with
 * the `management` option; A and B with a token, C without one). The steps run in order
 * on one cluster: readiness during start-up, every read route, authorisation and bad
 * requests, readiness during a coordinated shutdown (a 4th member D), then leave and down
 * through the API (shards move; nothing delivered is lost; every counter answers).
 */
import { describe, expect, it } from "vitest";
import { freePorts, seedNodesOf, waitAllUp } from "../cluster-real/cluster-node.js";
import {
  cmd,
  expectAllDelivered,
  getReports,
  ids,
  incarnationViolations,
  type SentCounts,
  type ShardingNode,
  startShardingNode,
  until,
} from "../cluster-real/sharding-node.js";
import type { EntityTypeConfig } from "../cluster-real/sharding-node-main.js";
import { installChildTeardown } from "../support/child-teardown.js";

installChildTeardown("perFile");

const TOKEN = "management-test-token-0123456789";
const TYPE = "Counter";
const counter: EntityTypeConfig = {
  name: TYPE,
  numberOfShards: 10,
  settings: { coordinator: { rebalanceIntervalMs: 3_600_000 } },
};
const ENTITIES = ids("m", 30);
const EXIT_TIMEOUT_MS = 20_000;
const BODY_MAX = 1_024;

interface Reply {
  readonly status: number;
  readonly json: Record<string, unknown>;
}

async function api(
  base: string,
  path: string,
  init: { method?: string; token?: string; body?: unknown; rawBody?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  const send = () =>
    fetch(`${base}${path}`, {
      method: init.method ?? "GET",
      headers,
      body: init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
      signal: AbortSignal.timeout(10_000),
    });
  // A pooled keep-alive connection the server closed meanwhile fails the request before
  // it was sent ("fetch failed", other side closed): a GET is safely sent again once.
  const res = await send().catch((error: unknown) => {
    if ((init.method ?? "GET") !== "GET") throw error;
    return send();
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as Record<string, unknown> };
}

function urlOf(n: ShardingNode): string {
  const ready = n.child.events.find((e) => e.event === "ready");
  return String(ready?.managementUrl);
}

function nodeName(n: ShardingNode): string {
  return `sk@${n.hostPort}`;
}

async function exitOf(node: ShardingNode) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new Error(`${node.name} did not exit within ${EXIT_TIMEOUT_MS} ms`)),
      EXIT_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([node.child.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function waitReady(n: ShardingNode, timeoutMs = 30_000): Promise<Reply> {
  return until(
    async () => {
      const r = await api(urlOf(n), "/health/ready");
      return r.status === 200 ? r : undefined;
    },
    timeoutMs,
    `${n.name} ready`,
  );
}

let a: ShardingNode;
let b: ShardingNode;
let c: ShardingNode;
let seeds: string[];
const sent: Record<string, SentCounts> = {};

describe("management API on a real 3-member cluster", () => {
  it("readiness is 503 with a reason while the member is not Up, then 200", async () => {
    const ports = (await freePorts(3)).sort((x, y) => x - y);
    seeds = seedNodesOf(ports);
    const withToken = { port: 0, token: TOKEN, requestBodyMaxBytes: BODY_MAX };
    a = await startShardingNode(
      { name: "A", types: [counter], management: withToken },
      ports[0] as number,
      seeds,
    );
    // A is the first seed: it waits seedNodeTimeoutMs for the others before it forms a cluster.
    const early = await api(urlOf(a), "/health/ready");
    expect(early.status).toBe(503);
    expect(early.json.code).toBe("NOT_READY");
    expect(String(early.json.error)).toContain("not up");
    const alive = await api(urlOf(a), "/health/alive");
    expect(alive.status).toBe(200);
    expect(alive.json.status).toBe("alive");
    [b, c] = await Promise.all([
      startShardingNode(
        { name: "B", types: [counter], management: withToken },
        ports[1] as number,
        seeds,
      ),
      startShardingNode(
        { name: "C", types: [counter], management: { port: 0, requestBodyMaxBytes: BODY_MAX } },
        ports[2] as number,
        seeds,
      ),
    ]);
    await waitAllUp([a, b, c], [a, b, c]);
    for (const n of [a, b, c]) {
      const r = await waitReady(n);
      expect(r.json.status).toBe("ready");
      expect((r.json.checks as { name: string }[]).map((x) => x.name)).toEqual([
        "member-up",
        "not-shutting-down",
        "sharding-regions-registered",
      ]);
    }
  }, 60_000);

  it("GET /cluster/members and /cluster/members/{address}", async () => {
    const r = await api(urlOf(b), "/cluster/members", { token: TOKEN });
    expect(r.status).toBe(200);
    expect(r.json.self).toBe(nodeName(b));
    expect(r.json.leader).toBe(nodeName(a));
    expect(r.json.oldest).toBe(nodeName(a));
    const members = r.json.members as { node: string; status: string; reachable: boolean }[];
    expect(members.map((m) => m.node)).toEqual([a, b, c].map(nodeName));
    for (const m of members) {
      expect(m.status).toBe("up");
      expect(m.reachable).toBe(true);
    }
    expect(r.json.unreachable).toEqual([]);

    const one = await api(urlOf(a), `/cluster/members/${encodeURIComponent(nodeName(c))}`, {
      token: TOKEN,
    });
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ node: nodeName(c), status: "up", appVersion: "1.0.0" });
    const byHostPort = await api(urlOf(a), `/cluster/members/${c.hostPort}`, { token: TOKEN });
    expect(byHostPort.json.node).toBe(nodeName(c));
    const unknown = await api(urlOf(a), "/cluster/members/127.0.0.1:1", { token: TOKEN });
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe("MEMBER_NOT_FOUND");
    const bad = await api(urlOf(a), "/cluster/members/nope", { token: TOKEN });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe("INVALID_ADDRESS");
  }, 30_000);

  it("GET /cluster/shards/{type}, entities/{id} and /cluster/singletons", async () => {
    await cmd(a, "tell", { ids: ENTITIES });
    const stats = await until(
      async () => {
        const r = await api(urlOf(a), `/cluster/shards/${TYPE}`, { token: TOKEN });
        return r.status === 200 && r.json.entityCount === ENTITIES.length ? r : undefined;
      },
      15_000,
      `${ENTITIES.length} entities counted`,
    );
    const regions = stats.json.regions as { node: string; entityCount: number }[];
    expect(regions.map((x) => x.node).sort()).toEqual([a, b, c].map(nodeName).sort());
    expect(stats.json.failed).toEqual([]);
    // A settled cluster has no hand-off in progress (the sim test catches one in flight).
    expect(stats.json.handOffs).toEqual([]);

    const id = ENTITIES[0] as string;
    // A sent the messages: its region knows every shard's home
    const loc = await api(urlOf(a), `/cluster/shards/${TYPE}/entities/${id}`, { token: TOKEN });
    expect(loc.status).toBe(200);
    expect(loc.json.alive).toBe(true);
    const report = (await getReports(a, [id]))[0];
    expect(loc.json.node).toBe(`sk@${report?.node}`);

    const noType = await api(urlOf(a), "/cluster/shards/NoSuchType", { token: TOKEN });
    expect(noType.status).toBe(404);
    expect(noType.json.code).toBe("SHARDING_TYPE_NOT_STARTED");

    const onA = await api(urlOf(a), "/cluster/singletons", { token: TOKEN });
    const onB = await api(urlOf(b), "/cluster/singletons", { token: TOKEN });
    expect(onA.json.singletons).toEqual([{ name: `shardCoordinator-${TYPE}`, runningHere: true }]);
    expect(onB.json.singletons).toEqual([{ name: `shardCoordinator-${TYPE}`, runningHere: false }]);
  }, 30_000);

  it("401 without token, 403 with a wrong one or a write without a configured token; health is public", async () => {
    const none = await api(urlOf(a), "/cluster/members");
    expect(none.status).toBe(401);
    expect(none.json.code).toBe("UNAUTHORIZED");
    const wrong = await api(urlOf(a), "/cluster/members", { token: "wrong-token-0123456789" });
    expect(wrong.status).toBe(403);
    expect(wrong.json.code).toBe("FORBIDDEN");
    const wrongWrite = await api(urlOf(a), `/cluster/members/${b.hostPort}`, {
      method: "PUT",
      token: "wrong-token-0123456789",
      body: { operation: "down" },
    });
    expect(wrongWrite.status).toBe(403);
    // C has no token: reads are open on loopback, writes are refused
    expect((await api(urlOf(c), "/cluster/members")).status).toBe(200);
    const write = await api(urlOf(c), `/cluster/members/${b.hostPort}`, {
      method: "DELETE",
    });
    expect(write.status).toBe(403);
    expect(write.json.code).toBe("TOKEN_REQUIRED");
    expect((await api(urlOf(a), "/health/ready")).status).toBe(200);
    // nobody was made to leave by the refused writes
    const members = (await api(urlOf(a), "/cluster/members", { token: TOKEN })).json.members as {
      status: string;
    }[];
    expect(members.map((m) => m.status)).toEqual(["up", "up", "up"]);
  }, 30_000);

  it("400 on bad JSON or operation, 413 on a large body, 404 unknown route, 405 wrong method", async () => {
    const path = `/cluster/members/${b.hostPort}`;
    const badJson = await api(urlOf(a), path, { method: "PUT", token: TOKEN, rawBody: "{oops" });
    expect(badJson.status).toBe(400);
    expect(badJson.json.code).toBe("BAD_JSON");
    const badOp = await api(urlOf(a), path, {
      method: "PUT",
      token: TOKEN,
      body: { operation: "jump" },
    });
    expect(badOp.status).toBe(400);
    expect(badOp.json.code).toBe("BAD_OPERATION");
    const large = await api(urlOf(a), path, {
      method: "PUT",
      token: TOKEN,
      body: { operation: "leave", pad: "x".repeat(BODY_MAX * 2) },
    });
    expect(large.status).toBe(413);
    expect(large.json.code).toBe("PAYLOAD_TOO_LARGE");
    const missing = await api(urlOf(a), "/cluster/nothing", { token: TOKEN });
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe("NOT_FOUND");
    const method = await api(urlOf(a), "/cluster/members", { method: "DELETE", token: TOKEN });
    expect(method.status).toBe(405);
    const members = (await api(urlOf(a), "/cluster/members", { token: TOKEN })).json.members as {
      status: string;
    }[];
    expect(members).toHaveLength(3);
  }, 30_000);

  it("readiness turns 503 as soon as the coordinated shutdown starts; liveness stays 200", async () => {
    const [port] = await freePorts(1);
    const d = await startShardingNode(
      { name: "D", types: [counter], management: { port: 0, token: TOKEN } },
      port as number,
      seeds,
    );
    await waitAllUp([a, d], [a, b, c, d]);
    await waitReady(d);
    await cmd(d, "shutdown");
    const notReady = await until(
      async () => {
        const r = await api(urlOf(d), "/health/ready");
        return r.status === 503 ? r : undefined;
      },
      10_000,
      "D not ready",
    );
    expect(String(notReady.json.error)).toContain("coordinated shutdown is running");
    expect((await api(urlOf(d), "/health/alive")).status).toBe(200);
    expect(await exitOf(d)).toEqual({ code: 0, signal: null });
    await waitAllUp([a, b, c], [a, b, c], EXIT_TIMEOUT_MS);
  }, 60_000);

  it("PUT {operation: leave} makes a member leave: its shards move, nothing is lost", async () => {
    for (const n of [a, c]) await cmd(n, "load", { ids: ENTITIES, intervalMs: 100 });
    await new Promise((r) => setTimeout(r, 500));
    const r = await api(urlOf(a), `/cluster/members/${encodeURIComponent(nodeName(b))}`, {
      method: "PUT",
      token: TOKEN,
      body: { operation: "leave" },
    });
    expect(r.status).toBe(200);
    expect(r.json.message).toBe(`leaving ${nodeName(b)}`);
    expect(await exitOf(b)).toEqual({ code: 0, signal: null });
    expect(b.child.events.find((x) => x.event === "shutdown-started")?.reason).toBe(
      "cluster-leaving",
    );
    await waitAllUp([a, c], [a, c], EXIT_TIMEOUT_MS);
    for (const n of [a, c]) sent[n.hostPort] = (await cmd(n, "load-stop")).sent as SentCounts;
    const { reports } = await expectAllDelivered([a, b, c], a, TYPE, ENTITIES, sent, 10_000);
    for (const rep of reports) expect([a.hostPort, c.hostPort]).toContain(rep.node);
    expect(incarnationViolations([a, b, c], TYPE)).toEqual([]);
    const members = (await api(urlOf(a), "/cluster/members", { token: TOKEN })).json.members as {
      node: string;
    }[];
    expect(members.map((m) => m.node)).toEqual([nodeName(a), nodeName(c)]);
  }, 60_000);

  it("PUT {operation: down} downs a member: it shuts down, every counter answers from the rest", async () => {
    const r = await api(urlOf(a), `/cluster/members/${c.hostPort}`, {
      method: "PUT",
      token: TOKEN,
      body: { operation: "down" },
    });
    expect(r.status).toBe(200);
    expect(r.json.message).toBe(`downing ${nodeName(c)}`);
    expect(await exitOf(c)).toEqual({ code: 0, signal: null });
    expect(c.child.events.find((x) => x.event === "shutdown-started")?.reason).toBe(
      "cluster-downing",
    );
    await waitAllUp([a], [a], EXIT_TIMEOUT_MS);
    const reports = await getReports(a, ENTITIES, { timeoutMs: 3_000, retryForMs: 15_000 });
    expect(reports).toHaveLength(ENTITIES.length);
    for (const rep of reports) expect(rep.node).toBe(a.hostPort);
    expect(incarnationViolations([a, b, c], TYPE)).toEqual([]);
    const members = (await api(urlOf(a), "/cluster/members", { token: TOKEN })).json.members as {
      node: string;
    }[];
    expect(members.map((m) => m.node)).toEqual([nodeName(a)]);
  }, 60_000);
});
