/**
 * Node extensions: optional parts of a ClusterNode that live in higher layers (the
 * management HTTP server in src/management) and plug into `ClusterNode.start` through
 * an option key. An extension registers itself when its module is loaded (the package's
 * root entry point loads the management module), so `ClusterNode.start({ management })`
 * works without the api layer importing it.
 *
 * Each extension validates its option before anything is bound, and starts after the
 * node's remoting and cluster are up; its handle is stopped when the node stops (and when
 * a later step of `ClusterNode.start` fails).
 */
import { ConfigError } from "../base/errors.js";

/** Options of the management HTTP server (see docs/operations.md). */
export interface ManagementOptions {
  /** TCP port; default 8558; 0 = any free port. */
  readonly port?: number;
  /** Interface to bind; default 127.0.0.1. Any other host requires `token`. */
  readonly host?: string;
  /** Bearer token: required for every write and, when set, for every request. */
  readonly token?: string;
  /** Largest accepted request body in bytes; default 16384. */
  readonly requestBodyMaxBytes?: number;
  /** Requests accepted per client address and rate window; default 100. */
  readonly requestsPerWindowMax?: number;
  /** Length of the rate window in ms; default 1000. */
  readonly rateWindowMs?: number;
  /** A request not answered within this many ms gets 503; default 10000. */
  readonly requestTimeoutMs?: number;
  /** Serve `GET /metrics` (Prometheus text) and keep the node's metrics; default true. */
  readonly metrics?: boolean;
  /** Serve the live dashboard at `GET /dashboard`; default true. */
  readonly dashboard?: boolean;
  /** How often the dashboard page polls, in ms; default 1000. */
  readonly dashboardRefreshMs?: number;
}

/** Cluster bootstrap by discovery (see docs/operations.md, "Bootstrap by discovery"). */
export interface DiscoveryOptions {
  /** "static": `contactPoints`; "dns"/"kubernetes-dns": look up `serviceName`. */
  readonly method: "static" | "dns" | "kubernetes-dns";
  /** DNS name of the members (a headless Kubernetes Service). */
  readonly serviceName?: string;
  /** With DNS: look up SRV `_<portName>._tcp.<serviceName>` (its port: the management port). */
  readonly portName?: string;
  /** "static": management endpoints as "host:port". */
  readonly contactPoints?: readonly string[];
  /** Management port of contact points found by A/AAAA lookups; default: this node's. */
  readonly managementPort?: number;
  /** Fewest contact points before a new cluster may be formed; default 2. */
  readonly requiredContactPoints?: number;
  /** The contact-point set must be unchanged this long before a cluster is formed; default 5000. */
  readonly stableMarginMs?: number;
  /** Lookup and probe interval; default 1000. */
  readonly probeIntervalMs?: number;
  /** Bound of one probe (HTTP request); default 1000. */
  readonly probeTimeoutMs?: number;
  /** DNS servers to ask ("ip" or "ip:port"); default: the system's. */
  readonly dnsServers?: readonly string[];
}

/** A started extension: stopped with the node. */
export interface NodeExtensionHandle {
  stop(): Promise<void>;
}

/** Which option keys of ClusterNodeOptions an extension serves. */
export type NodeExtensionKey = "management" | "discovery";

/** An extension of ClusterNode.start (host: the node, typed loosely to keep layers apart). */
export interface NodeExtension<Node, Options> {
  readonly key: NodeExtensionKey;
  /** Throws ConfigError naming the key; runs before anything is bound. */
  validate(options: Options): void;
  start(node: Node, options: Options): Promise<NodeExtensionHandle>;
}

const registered = new Map<NodeExtensionKey, NodeExtension<unknown, unknown>>();

/** Registers (or replaces) the extension serving `extension.key`. */
export function registerNodeExtension<Node, Options>(
  extension: NodeExtension<Node, Options>,
): void {
  registered.set(extension.key, extension as NodeExtension<unknown, unknown>);
}

/** The extension serving `key`; ConfigError naming the key when none is loaded. */
export function nodeExtension(key: NodeExtensionKey): NodeExtension<unknown, unknown> {
  const e = registered.get(key);
  if (e === undefined)
    throw new ConfigError(
      key,
      "(set)",
      `the ${key} module to be loaded: import ClusterNode from "shardkit" (the root entry point loads it)`,
    );
  return e;
}
