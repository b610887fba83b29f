/**
 * The live dashboard (docs/observability.md, "Dashboard"):
 * - `GET /dashboard`, `/dashboard/app.js`, `/dashboard/style.css`: the page and its
 *   assets, shipped in the package (dashboard-assets.ts), no CDN: it works offline. They
 *   hold no cluster data and are public; the page sends the token from `#token=...`;
 * - `GET /dashboard/state`: what the page polls (every `dashboardRefreshMs`): members
 *   with status and reachability, shards and entities per member per type, this member's
 *   messages per second, a timeline of shard moves and local shard starts/stops, and the
 *   last warnings. Reading it needs the token when one is configured.
 *
 * Shard moves are found by comparing each answer's allocation with the previous one, so
 * the timeline shows moves that happened while someone was watching (plus this member's
 * own shard starts and stops, which are always recorded).
 */
import type { ClusterNode } from "../api/cluster-node.js";
import { ClusterSharding, EntityTypeKey } from "../api/cluster-sharding.js";
import { metricsOf } from "../observability/index.js";
import { membersJson } from "./cluster-routes.js";
import { DASHBOARD_APP_JS, DASHBOARD_CSS, dashboardHtml } from "./dashboard-assets.js";
import type { Router } from "./router.js";

/** Bound of the timeline of shard moves kept by the dashboard. */
export const DASHBOARD_TIMELINE_MAX = 200;

interface TimelineEntry {
  readonly atMs: number;
  readonly kind: "moved" | "allocated" | "shard-started" | "shard-stopped";
  readonly type: string;
  readonly shardId: string;
  readonly text: string;
}

function regionNode(region: string): string {
  const slash = region.indexOf("/");
  return slash < 0 ? region : region.slice(0, slash);
}

/** State of the dashboard of one node between polls. */
class DashboardState {
  private readonly homes = new Map<string, Map<string, string>>();
  private readonly timeline: TimelineEntry[] = [];
  private last: { atMs: number; messages: number } | undefined;
  private rate = 0;

  constructor(
    private readonly node: ClusterNode,
    private readonly queryTimeoutMs: () => number,
  ) {}

  async snapshot() {
    const node = this.node;
    const nowMs = Date.now();
    const monoNow = node.system.core.clock.now();
    const toWall = (mono: number) => nowMs - (monoNow - mono);
    const sharding = ClusterSharding.get(node);
    const types = [];
    for (const type of sharding.typeNames()) {
      const stats = await sharding
        .getClusterShardingStats(EntityTypeKey<unknown>(type), { timeoutMs: this.queryTimeoutMs() })
        .catch(() => ({ regions: [], failed: [] as readonly string[] }));
      const regions = stats.regions.map((r) => {
        const shards = Object.entries(r.shards).sort((a, b) =>
          a[0].localeCompare(b[0], "en", { numeric: true }),
        );
        return {
          node: regionNode(r.region),
          shardCount: shards.length,
          entityCount: shards.reduce((n, [, e]) => n + e, 0),
          shards: shards.map(([shardId, entities]) => ({ shardId, entities })),
        };
      });
      this.diff(type, regions, nowMs);
      types.push({ type, regions, failed: stats.failed.map(regionNode) });
    }
    const st = node.remoting.stats;
    const messages = st.userMessagesIn + st.userMessagesOut;
    if (this.last !== undefined && nowMs > this.last.atMs)
      this.rate = ((messages - this.last.messages) * 1000) / (nowMs - this.last.atMs);
    this.last = { atMs: nowMs, messages };
    const metrics = metricsOf(node);
    const local = metrics.shardEvents.map((e) => ({
      atMs: toWall(e.atMs),
      kind: e.kind,
      type: e.type,
      shardId: e.shardId,
      text: `${e.kind === "shard-started" ? "started" : "stopped"} shard ${e.shardId} of ${e.type} here`,
    }));
    const timeline = [...this.timeline, ...local].sort((a, b) => a.atMs - b.atMs).slice(-100);
    return {
      nowMs,
      self: node.address,
      members: membersJson(node),
      types,
      messagesPerSecond: Math.max(0, Math.round(this.rate * 10) / 10),
      remoteMessages: { in: st.userMessagesIn, out: st.userMessagesOut },
      askPending: node.system.stats.pendingAsks,
      deadLetters: node.system.stats.deadLetters,
      timeline,
      warnings: node
        .recentWarnings()
        .slice(-20)
        .map((w) => ({ atMs: toWall(w.atMs), level: w.level, message: w.message })),
    };
  }

  private diff(
    type: string,
    regions: readonly { node: string; shards: readonly { shardId: string }[] }[],
    nowMs: number,
  ): void {
    let prev = this.homes.get(type);
    const first = prev === undefined;
    if (prev === undefined) {
      prev = new Map();
      this.homes.set(type, prev);
    }
    for (const r of regions)
      for (const s of r.shards) {
        const before = prev.get(s.shardId);
        if (before === r.node) continue;
        prev.set(s.shardId, r.node);
        if (first) continue;
        this.push({
          atMs: nowMs,
          kind: before === undefined ? "allocated" : "moved",
          type,
          shardId: s.shardId,
          text:
            before === undefined
              ? `shard ${s.shardId} of ${type} allocated to ${r.node}`
              : `shard ${s.shardId} of ${type} moved from ${before} to ${r.node}`,
        });
      }
  }

  private push(e: TimelineEntry): void {
    this.timeline.push(e);
    if (this.timeline.length > DASHBOARD_TIMELINE_MAX) this.timeline.shift();
  }
}

export function registerDashboardRoutes(
  router: Router,
  node: ClusterNode,
  queryTimeoutMs: () => number,
  refreshMs: number,
): void {
  metricsOf(node); // the shard-event observer must see the types started from now on
  const state = new DashboardState(node, queryTimeoutMs);
  const html = dashboardHtml(refreshMs);
  const asset = (body: string, contentType: string) => () => ({ status: 200, body, contentType });
  router.register("GET", "/dashboard", asset(html, "text/html; charset=utf-8"), { public: true });
  router.register(
    "GET",
    "/dashboard/app.js",
    asset(DASHBOARD_APP_JS, "text/javascript; charset=utf-8"),
    { public: true },
  );
  router.register("GET", "/dashboard/style.css", asset(DASHBOARD_CSS, "text/css; charset=utf-8"), {
    public: true,
  });
  router.register("GET", "/dashboard/state", async () => ({
    status: 200,
    body: await state.snapshot(),
  }));
}
