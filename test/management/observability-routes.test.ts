/**
 * The observability routes of the management server on one in-process member (real TCP
 * on 127.0.0.1, any free ports): `GET /metrics` answers the Prometheus text format,
 * the dashboard page and assets are public and self-contained (no external URL), and
 * `/dashboard/state` needs the token like every other read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterNode, managementOf } from "../../src/index.js";
import { createNodeRuntime } from "../../src/runtime/node/index.js";

const TOKEN = "observability-test-token-0123456789";
let node: ClusterNode;
let base: string;

beforeAll(async () => {
  node = await ClusterNode.start({
    systemName: "obs",
    port: 0,
    handleSignals: false,
    runtime: createNodeRuntime({ logLevel: "warn" }),
    settings: { periodicTasksInitialDelayMs: 0 },
    management: { port: 0, token: TOKEN },
  });
  node.cluster.join(node.address.slice(node.address.indexOf("@") + 1));
  base = managementOf(node)?.url as string;
  for (let i = 0; i < 200 && node.cluster.selfMember?.status !== "up"; i++)
    await new Promise((r) => setTimeout(r, 25));
}, 20_000);

afterAll(async () => {
  await node?.shutdown();
}, 20_000);

const get = (path: string, token?: string) =>
  fetch(`${base}${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(5_000),
  });

describe("observability routes", () => {
  it("GET /metrics: Prometheus text with the node's metrics, token required", {
    timeout: 10_000,
  }, async () => {
    expect((await get("/metrics")).status).toBe(401);
    const r = await get("/metrics", TOKEN);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await r.text();
    expect(text).toContain("# TYPE shardkit_cluster_members gauge");
    expect(text).toContain('shardkit_cluster_members{status="up"} 1');
    expect(text).toContain("# TYPE shardkit_ask_duration_seconds histogram");
    expect(text).toMatch(/^shardkit_remote_messages_total\{direction="out",lane="user"\} \d+$/m);
  });

  it("GET /dashboard: public page and assets, no external URLs; state needs the token", {
    timeout: 10_000,
  }, async () => {
    const page = await get("/dashboard");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain('src="/dashboard/app.js"');
    for (const asset of ["/dashboard/app.js", "/dashboard/style.css"]) {
      const r = await get(asset);
      expect(r.status).toBe(200);
      expect(await r.text()).not.toMatch(/https?:\/\//);
    }
    expect(html).not.toMatch(/https?:\/\//);
    expect((await get("/dashboard/state")).status).toBe(401);
    const st = await get("/dashboard/state", TOKEN);
    expect(st.status).toBe(200);
    const body = (await st.json()) as {
      self: string;
      members: { members: unknown[] };
      warnings: unknown[];
    };
    expect(body.self).toBe(node.address);
    expect(body.members.members.length).toBe(1);
    expect(Array.isArray(body.warnings)).toBe(true);
  });
});
