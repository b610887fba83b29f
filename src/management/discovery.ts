/**
 * Cluster bootstrap by discovery: the driver around decideBootstrap
 * (core/membership/bootstrap-decision.ts). Every probeIntervalMs, until this node is a
 * member: look up the contact points (a static list, DNS A/AAAA, or DNS SRV through
 * node:dns), probe each one's `GET /bootstrap/seed-nodes`, feed the decision, and act on
 * it (join an existing cluster, form a new one, or wait). The `/bootstrap/seed-nodes`
 * route itself is registered by the management server (registerBootstrapRoute).
 */
import { Resolver } from "node:dns/promises";
import type { ClusterNode } from "../api/cluster-node.js";
import type { DiscoveryOptions, NodeExtensionHandle } from "../api/node-extensions.js";
import { ConfigError } from "../base/errors.js";
import { int, ms, oneOf, type RulesOf, resolveSettings } from "../base/settings.js";
import { type ContactPointProbe, decideBootstrap } from "../core/membership/bootstrap-decision.js";
import type { Router } from "./router.js";

export interface DiscoverySettings {
  readonly method: "static" | "dns" | "kubernetes-dns";
  readonly serviceName: string | undefined;
  readonly portName: string | undefined;
  readonly contactPoints: readonly string[];
  readonly managementPort: number | undefined;
  readonly requiredContactPoints: number;
  readonly stableMarginMs: number;
  readonly probeIntervalMs: number;
  readonly probeTimeoutMs: number;
  readonly dnsServers: readonly string[] | undefined;
}

const DEFAULTS: DiscoverySettings = Object.freeze({
  method: "static",
  serviceName: undefined,
  portName: undefined,
  contactPoints: [],
  managementPort: undefined,
  requiredContactPoints: 2,
  stableMarginMs: 5_000,
  probeIntervalMs: 1_000,
  probeTimeoutMs: 1_000,
  dnsServers: undefined,
});

const optionalName = (key: string, value: unknown) => {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^[A-Za-z0-9_.-]+$/.test(value))
    throw new ConfigError(key, value, "a DNS name (letters, digits, '.', '-', '_')");
  return value;
};
const hostPorts = (key: string, value: unknown) => {
  if (!Array.isArray(value)) throw new ConfigError(key, value, 'an array of "host:port"');
  return value.map((v, i) => {
    if (typeof v !== "string" || !/^[^\s/]+:\d{1,5}$/.test(v))
      throw new ConfigError(`${key}[${i}]`, v, 'a management endpoint "host:port"');
    return v;
  });
};

const RULES: RulesOf<DiscoverySettings> = {
  method: oneOf("static", "dns", "kubernetes-dns"),
  serviceName: optionalName,
  portName: optionalName,
  contactPoints: hostPorts,
  managementPort: (key, value) => (value === undefined ? undefined : int(1, 65_535)(key, value)),
  requiredContactPoints: int(1),
  stableMarginMs: ms(0),
  probeIntervalMs: ms(10),
  probeTimeoutMs: ms(10),
  dnsServers: (key, value) => {
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || v === ""))
      throw new ConfigError(key, value, 'DNS servers as "ip" or "ip:port"');
    return value as string[];
  },
};

/** Defaults merged with `options`, validated (ConfigError naming `discovery.<key>`). */
export function resolveDiscoverySettings(options: DiscoveryOptions): DiscoverySettings {
  const s = resolveSettings("discovery.", DEFAULTS, RULES, options as Partial<DiscoverySettings>);
  if (s.method === "static" && s.contactPoints.length === 0)
    throw new ConfigError(
      "discovery.contactPoints",
      [],
      "at least one contact point with method static",
    );
  if (s.method !== "static" && s.serviceName === undefined)
    throw new ConfigError("discovery.serviceName", undefined, `a DNS name with method ${s.method}`);
  return s;
}

/** `GET /bootstrap/seed-nodes`: this node's address and, once it is Up, its cluster's Up members. */
export function registerBootstrapRoute(router: Router, node: ClusterNode): void {
  router.register(
    "GET",
    "/bootstrap/seed-nodes",
    () => {
      const up = node.cluster.selfMember?.status === "up";
      const seedNodes = up
        ? node.cluster.state.members
            .filter((m) => m.status === "up")
            .map((m) => {
              const a = m.uniqueAddress.address;
              return `${a.system}@${a.host}:${a.port}`;
            })
        : [];
      return { status: 200, body: { self: node.address, seedNodes } };
    },
    { public: true },
  );
}

/** Contact points found by `s` (sorted, unique). */
export async function lookupContactPoints(
  s: DiscoverySettings,
  ownManagementPort: number,
): Promise<string[]> {
  if (s.method === "static") return [...new Set(s.contactPoints)].sort();
  const resolver = new Resolver({ timeout: s.probeTimeoutMs, tries: 1 });
  if (s.dnsServers !== undefined) resolver.setServers([...s.dnsServers]);
  const name = s.serviceName as string;
  const withPort = (ip: string, port: number) =>
    ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
  const addressesOf = async (host: string): Promise<string[]> => {
    const [v4, v6] = await Promise.all([
      resolver.resolve4(host).catch(() => [] as string[]),
      resolver.resolve6(host).catch(() => [] as string[]),
    ]);
    return [...v4, ...v6];
  };
  const out = new Set<string>();
  if (s.portName !== undefined) {
    const srv = await resolver.resolveSrv(`_${s.portName}._tcp.${name}`);
    for (const r of srv) {
      const ips = await addressesOf(r.name);
      for (const ip of ips.length > 0 ? ips : [r.name]) out.add(withPort(ip, r.port));
    }
  } else {
    const port = s.managementPort ?? ownManagementPort;
    for (const ip of await addressesOf(name)) out.add(withPort(ip, port));
  }
  return [...out].sort();
}

async function probe(contactPoint: string, timeoutMs: number): Promise<ContactPointProbe> {
  try {
    const res = await fetch(`http://${contactPoint}/bootstrap/seed-nodes`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json()) as { self?: unknown; seedNodes?: unknown };
    if (!res.ok || typeof body.self !== "string" || !Array.isArray(body.seedNodes))
      return { type: "failed", reason: `answered ${res.status} without seed nodes` };
    return { type: "answered", self: body.self, seedNodes: body.seedNodes.map(String) };
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } }).cause;
    return {
      type: "failed",
      reason:
        typeof cause?.code === "string"
          ? cause.code
          : error instanceof Error
            ? error.name
            : String(error),
    };
  }
}

/** `system@host:port` -> `host:port`. */
function hostPortOf(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1);
}

/** Starts the bootstrap loop for `node`; it ends once the node is a member. */
export function startDiscovery(
  node: ClusterNode,
  options: DiscoveryOptions,
  ownManagementPort: number,
): NodeExtensionHandle {
  const s = resolveDiscoverySettings(options);
  const log = node.system.log.child({ component: "bootstrap" });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let contactPoints: string[] = [];
  let stableSince = Date.now();
  let lastReason = "";
  let joinAttempt = 0;
  const probes = new Map<string, ContactPointProbe>();

  const tick = async () => {
    if (stopped || node.cluster.selfMember !== undefined) return;
    try {
      const found = await lookupContactPoints(s, ownManagementPort);
      if (found.join(",") !== contactPoints.join(",")) {
        contactPoints = found;
        stableSince = Date.now();
        log.info("contact points", { contactPoints: found });
      }
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      if (why !== lastReason)
        log.warn("contact point lookup failed", { service: s.serviceName, error: why });
      lastReason = why;
      return;
    }
    const results = await Promise.all(contactPoints.map((cp) => probe(cp, s.probeTimeoutMs)));
    probes.clear();
    for (const [i, cp] of contactPoints.entries()) probes.set(cp, results[i] as ContactPointProbe);
    if (stopped || node.cluster.selfMember !== undefined) return;
    const d = decideBootstrap({
      self: node.address,
      contactPoints,
      probes,
      contactPointsStableSinceMs: stableSince,
      nowMs: Date.now(),
      requiredContactPoints: s.requiredContactPoints,
      stableMarginMs: s.stableMarginMs,
    });
    if (d.type === "join") {
      const seed = d.seedNodes[joinAttempt++ % d.seedNodes.length] as string;
      log.info("joining an existing cluster found through discovery", { seed });
      node.cluster.join(hostPortOf(seed));
    } else if (d.type === "form") {
      log.info(
        "forming a new cluster: this node has the lowest address of a stable contact-point set",
        {
          contactPoints,
        },
      );
      node.cluster.join(node.remoting.node.hostPort);
    } else if (d.reason !== lastReason) {
      log.info("bootstrap waiting", { reason: d.reason });
      lastReason = d.reason;
    }
  };

  const loop = () => {
    timer = setTimeout(() => {
      tick().then(
        () => {
          if (!stopped && node.cluster.selfMember === undefined) loop();
        },
        (error: unknown) => {
          log.error("bootstrap step failed", { error });
          if (!stopped) loop();
        },
      );
    }, s.probeIntervalMs);
  };
  loop();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
