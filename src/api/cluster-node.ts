/**
 * ClusterNode: one call to start a cluster member — actor system, remoting over TCP
 * (optionally TLS and a shared secret), membership, coordinated shutdown and (in the
 * real runtime) SIGTERM/SIGINT handling. `node.shutdown(reason)` runs the shutdown
 * phases: leave the cluster, wait until removed, stop the actor system.
 *
 * In the simulator, pass `runtime` and `transport` from runtime/sim; signals are then
 * not installed.
 */

import { ActorSystem } from "../actor/actor-system.js";
import type { ActorSettings } from "../actor/settings.js";
import type { Disposable } from "../base/disposable.js";
import { ConfigError } from "../base/errors.js";
import { Cluster, type ClusterOptions } from "../cluster/membership/cluster.js";
import { Remoting } from "../cluster/remoting/remoting.js";
import { type RemotingSettings, remotingSettings } from "../cluster/remoting/remoting-settings.js";
import type { ShardLeaseOption } from "../cluster/sharding/sharding-type.js";
import { installClusterShutdown } from "../cluster/shutdown/cluster-shutdown.js";
import { CoordinatedShutdown } from "../cluster/shutdown/coordinated-shutdown.js";
import { resolveSbrSettings } from "../core/downing/sbr-settings.js";
import { resolveClusterSettings } from "../core/membership/cluster-settings.js";
import { parseSeedAddresses } from "../core/membership/seed-address.js";
import type { ShutdownReason } from "../core/shutdown/shutdown-reason.js";
import {
  resolveShutdownSettings,
  type ShutdownSettingsOverrides,
} from "../core/shutdown/shutdown-settings.js";
import type { Crypto } from "../ports/crypto.js";
import type { Runtime } from "../ports/runtime.js";
import type { Tracing } from "../ports/tracing.js";
import type { Transport } from "../ports/transport.js";
import type { SerializerRegistry } from "../protocol/serializer-registry.js";
import { createNodeRuntime } from "../runtime/node/index.js";
import { nodeCrypto } from "../runtime/node/node-crypto.js";
import { installSignalHandlers } from "../runtime/node/signals.js";
import { TcpTransport } from "../runtime/node/tcp-transport.js";
import type { TcpTransportOptions } from "../runtime/node/tcp-transport-options.js";
import { MemberLogger, MemberLogState, type RecentLogEntry } from "./member-logger.js";
import {
  type DiscoveryOptions,
  type ManagementOptions,
  type NodeExtensionHandle,
  type NodeExtensionKey,
  nodeExtension,
} from "./node-extensions.js";
import { loadTracing, type TracingOptions, validateTracingOptions } from "./otel-tracing.js";

export interface ClusterNodeOptions extends Omit<ClusterOptions, "onSelfRemoved"> {
  /** Actor system (cluster) name; every member of a cluster uses the same. */
  readonly systemName: string;
  readonly host?: string;
  /** 0 = any free port. */
  readonly port?: number;
  /** Remoting settings besides host and port (secret, bounds, timeouts). */
  readonly remoting?: Omit<Partial<RemotingSettings>, "host" | "port">;
  /** TCP/TLS options of the default transport. */
  readonly tcp?: TcpTransportOptions;
  readonly actor?: Partial<ActorSettings>;
  readonly shutdown?: ShutdownSettingsOverrides;
  /** Register user serializers. */
  readonly configureSerializers?: (registry: SerializerRegistry) => void;
  /** The runtime to use (default: the real one). */
  readonly runtime?: Runtime;
  /** The transport to use (default: TCP; the simulator passes its virtual network's). */
  readonly transport?: Transport;
  /** Default: node:crypto, unless a custom transport (the simulator) is given. */
  readonly crypto?: Crypto;
  /** Run coordinated shutdown on SIGTERM/SIGINT. Default: with the default TCP
   * transport, as `shutdown.runOnSignals` says (true unless set to false). */
  readonly handleSignals?: boolean;
  /**
   * Start the management HTTP server (cluster members, shards, health probes; see
   * docs/operations.md). Bound to 127.0.0.1 unless `host` is given, which then requires
   * a `token`.
   */
  readonly management?: ManagementOptions;
  /**
   * Join by discovery instead of `seedNodes`: look up contact points (static, DNS),
   * probe their management endpoints, join an existing cluster or let the lowest address
   * form one. Needs `management`.
   */
  readonly discovery?: DiscoveryOptions;
  /**
   * Shard leases for every entity type started on this node (a type's own `lease` option
   * wins). See docs/sharding.md, "Leases and fencing".
   */
  readonly shardLeases?: ShardLeaseOption;
  /**
   * OpenTelemetry spans for entity messages sent on this node and their remote hops (the
   * W3C trace context travels with a traced message only), through `@opentelemetry/api`,
   * an optional peer dependency. Off unless `enabled`; a type's `tracing: false` turns it
   * off for that type. See docs/observability.md, "Tracing".
   */
  readonly tracing?: TracingOptions;
}

/** Option keys served by node extensions, in start order. */
const EXTENSION_KEYS: readonly NodeExtensionKey[] = ["management", "discovery"];

export class ClusterNode {
  private constructor(
    readonly system: ActorSystem,
    readonly remoting: Remoting,
    readonly cluster: Cluster,
    readonly coordinatedShutdown: CoordinatedShutdown,
    private readonly signals: Disposable | undefined,
    private readonly logState?: MemberLogState,
    /** The node-wide shard lease setting (ClusterNodeOptions.shardLeases). */
    readonly shardLeases: ShardLeaseOption | undefined = undefined,
    /** Spans of this node (ClusterNodeOptions.tracing); undefined: tracing is off. */
    readonly tracing: Tracing | undefined = undefined,
  ) {}

  /** The last warnings and errors this node logged (at most RECENT_WARNINGS_MAX), oldest first. */
  recentWarnings(): readonly RecentLogEntry[] {
    return this.logState === undefined ? [] : [...this.logState.recent];
  }

  private readonly extensions: NodeExtensionHandle[] = [];

  /**
   * Starts a member and begins joining (through `seedNodes`, or call `cluster.join`).
   * Every option is validated before anything is bound (ConfigError naming the key, e.g.
   * `seedNodes[0]`); if a later step fails, everything opened so far is released before
   * the error is thrown.
   */
  static async start(options: ClusterNodeOptions): Promise<ClusterNode> {
    validateClusterNodeOptions(options);
    const tracing = await loadTracing(options.tracing);
    // A custom transport means custom wiring (the simulator): no process signals, no
    // node:crypto nonces unless asked for.
    const real = options.transport === undefined;
    const baseRuntime = options.runtime ?? createNodeRuntime();
    const logState = new MemberLogState(baseRuntime.clock);
    // known before binding unless the port is chosen by the system (0)
    if (options.port !== 0)
      logState.member = `${options.systemName}@${options.host ?? "127.0.0.1"}:${options.port ?? 2552}`;
    const runtime: Runtime = {
      ...baseRuntime,
      logger: new MemberLogger(baseRuntime.logger, logState),
    };
    const transport =
      options.transport ?? new TcpTransport({ logger: runtime.logger, ...options.tcp });
    const system = ActorSystem.create({
      name: options.systemName,
      runtime,
      settings: options.actor,
    });
    let remoting: Remoting | undefined;
    let node: ClusterNode | undefined;
    let signals: Disposable | undefined;
    try {
      remoting = await Remoting.start(system, {
        transport,
        settings: {
          ...options.remoting,
          host: options.host ?? "127.0.0.1",
          port: options.port ?? 2552,
        },
        crypto: options.crypto ?? (real ? nodeCrypto : undefined),
        configureSerializers: options.configureSerializers,
      });
      logState.member = remoting.address;
      const shutdown = new CoordinatedShutdown({ runtime, settings: options.shutdown });
      // Being downed or removed runs the shutdown phases (installClusterShutdown watches
      // for it), instead of the Cluster's default of terminating the system at once.
      const cluster = Cluster.start(system, remoting, { ...options, onSelfRemoved: () => {} });
      installClusterShutdown(shutdown, cluster, system);
      signals =
        (options.handleSignals ?? real) && shutdown.settings.runOnSignals
          ? installSignalHandlers((reason) => shutdown.run(reason), { logger: runtime.logger })
          : undefined;
      node = new ClusterNode(
        system,
        remoting,
        cluster,
        shutdown,
        signals,
        logState,
        options.shardLeases,
        tracing,
      );
      const started = node;
      for (const key of EXTENSION_KEYS)
        if (options[key] !== undefined)
          started.extensions.push(await nodeExtension(key).start(started, options[key]));
      system.whenTerminated.then(() => started.stopExtensions());
      return started;
    } catch (error) {
      signals?.dispose();
      await node?.stopExtensions();
      await system.terminate().catch(() => undefined);
      await remoting?.shutdown().catch(() => undefined);
      await transport.close().catch(() => undefined);
      throw error;
    }
  }

  private async stopExtensions(): Promise<void> {
    for (const e of this.extensions.splice(0).reverse()) await e.stop().catch(() => undefined);
  }

  /** This node as `system@host:port`. */
  get address(): string {
    return this.remoting.address;
  }

  /** True once the coordinated shutdown has started (the readiness probe turns 503). */
  get isShuttingDown(): boolean {
    return this.coordinatedShutdown.shutdownReason !== undefined;
  }

  /** Runs coordinated shutdown (leave, wait for removal, stop); resolves with the reason. */
  async shutdown(reason: ShutdownReason = "user"): Promise<ShutdownReason> {
    try {
      return await this.coordinatedShutdown.run(reason);
    } finally {
      this.signals?.dispose();
    }
  }
}

/**
 * Validates the options of `ClusterNode.start` that can be checked without binding
 * anything: seed nodes, cluster, downing, remoting and shutdown settings, extensions.
 * @throws ConfigError naming the key.
 */
export function validateClusterNodeOptions(options: ClusterNodeOptions): void {
  parseSeedAddresses(options.seedNodes, "seedNodes", options.systemName);
  resolveClusterSettings(options.settings);
  resolveSbrSettings(options.downing);
  remotingSettings({
    ...options.remoting,
    host: options.host ?? "127.0.0.1",
    port: options.port ?? 2552,
  });
  resolveShutdownSettings(options.shutdown);
  validateTracingOptions(options.tracing);
  if (options.discovery !== undefined) {
    if (options.management === undefined)
      throw new ConfigError(
        "discovery",
        options.discovery.method,
        "a `management` option too: members probe each other's management endpoints",
      );
    if ((options.seedNodes ?? []).length > 0)
      throw new ConfigError(
        "seedNodes",
        options.seedNodes,
        "no seed nodes when `discovery` is set",
      );
  }
  for (const key of EXTENSION_KEYS)
    if (options[key] !== undefined) nodeExtension(key).validate(options[key]);
}
