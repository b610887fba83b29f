/**
 * The state of a simulated network and the internal operations its parts share: links
 * and their configs, partitions, hosts and ports, transports per node, live connections,
 * crashed nodes. `SimNetwork` is the public control surface on top of it.
 *
 * Invariants:
 * - Everything happens in world events (virtual time); the only randomness is each
 *   link's stream derived from (world seed, from, to).
 * - Live connections are kept in creation order; every sweep over them (partition
 *   changes, crashes) follows that order, so it is deterministic.
 * - A host belongs to exactly one node, for the life of the network.
 */
import { fail } from "../../../base/assert.js";
import type { Disposable } from "../../../base/disposable.js";
import type { HostPort } from "../../../ports/transport.js";
import { SeededRandom } from "../seeded-random.js";
import { nodeSeed } from "../seeds.js";
import type { SimWorld } from "../sim-world.js";
import type { AttemptHost } from "./connect-attempt.js";
import { Link } from "./link.js";
import { PartitionTable } from "./partition-table.js";
import { PortTable } from "./port-table.js";
import { CLIENT, SERVER, type SimEndpoint } from "./sim-endpoint.js";
import type { SimListener } from "./sim-listener.js";
import {
  type LinkConfig,
  resolveLinkConfig,
  resolveNetworkOptions,
  type SimNetworkOptions,
  type SimNetworkSettings,
} from "./sim-network-settings.js";
import { SimTransport, type TransportHost } from "./sim-transport.js";
import { type ConnectionHost, VirtualConnection } from "./virtual-connection.js";

/** Node name of the network's trace records. */
export const NET_TRACE_NODE = "net";

/** Shared state and internal operations of the simulated network. */
export class NetCore implements TransportHost, AttemptHost, ConnectionHost {
  readonly settings: SimNetworkSettings;
  readonly partitions = new PartitionTable();
  private readonly defaultLink: LinkConfig;
  private readonly linkConfigs = new Map<string, LinkConfig>();
  private readonly links = new Map<string, Link>();
  /** The links from each node, in creation order (a crash releases them). */
  private readonly linksFrom = new Map<string, Link[]>();
  private readonly nodeByHost = new Map<string, string>();
  private readonly hostByNode = new Map<string, string>();
  private readonly portTables = new Map<string, PortTable<SimListener>>();
  private readonly transports = new Map<string, Set<SimTransport>>();
  private readonly connections = new Set<VirtualConnection>();
  /** The live connections with an end at each node, in creation order (a crash kills them). */
  private readonly connectionsOf = new Map<string, Set<VirtualConnection>>();
  private readonly crashed = new Set<string>();
  private nextConnectionNo = 1;

  constructor(
    readonly world: SimWorld,
    options: SimNetworkOptions | undefined,
  ) {
    const resolved = resolveNetworkOptions(options);
    this.settings = resolved.settings;
    this.defaultLink = resolved.defaultLink;
  }

  get now(): number {
    return this.world.now;
  }
  get partitionResetAfterMs(): number {
    return this.settings.partitionResetAfterMs;
  }
  get connectTimeoutMs(): number {
    return this.settings.connectTimeoutMs;
  }
  get sendBufferHighWaterBytes(): number {
    return this.settings.sendBufferHighWaterBytes;
  }
  get recordSegments(): boolean {
    return this.settings.recordSegments;
  }
  /** Number of live connections (not yet closed on both sides). */
  get connectionCount(): number {
    return this.connections.size;
  }

  scheduleAt(timeMs: number, fn: () => void): Disposable {
    return this.world.scheduleAt(timeMs, fn);
  }

  schedule(delayMs: number, fn: () => void): Disposable {
    return this.world.schedule(delayMs, fn);
  }

  record(kind: string, detail: unknown): void {
    this.world.record(NET_TRACE_NODE, kind, detail);
  }

  isBlocked(link: Link): boolean {
    return this.partitions.isBlocked(link.from, link.to);
  }

  /** The directed link from -> to (created on first use). */
  link(from: string, to: string): Link {
    const key = linkKey(from, to);
    let link = this.links.get(key);
    if (link === undefined) {
      const random = new SeededRandom(nodeSeed(this.world.seed, `\u0000net\u0000${key}`));
      link = new Link(from, to, this.linkConfig(from, to), random);
      this.links.set(key, link);
      const fromNode = this.linksFrom.get(from);
      if (fromNode === undefined) this.linksFrom.set(from, [link]);
      else fromNode.push(link);
    }
    return link;
  }

  linkConfig(from: string, to: string): LinkConfig {
    return this.linkConfigs.get(linkKey(from, to)) ?? this.defaultLink;
  }

  configureLink(from: string, to: string, overrides: Partial<LinkConfig>): LinkConfig {
    const prefix = `simNetwork.link[${from}->${to}].`;
    const config = resolveLinkConfig(this.linkConfig(from, to), overrides, prefix);
    this.linkConfigs.set(linkKey(from, to), config);
    const link = this.links.get(linkKey(from, to));
    if (link !== undefined) link.config = config;
    return config;
  }

  drawConnectFail(from: string, to: string): boolean {
    return this.link(from, to).drawConnectFail();
  }

  /** A handshake packet: one sampled delay, held by clogs, swallowed by partitions. */
  sendPacket(from: string, to: string, onArrive: () => void): void {
    const link = this.link(from, to);
    this.scheduleAt(this.now + link.sampleDelayMs(), () => this.onPacket(link, onArrive));
  }

  private onPacket(link: Link, onArrive: () => void): void {
    if (this.isBlocked(link)) return;
    if (link.clogUntil > this.now) {
      this.scheduleAt(link.clogUntil, () => this.onPacket(link, onArrive));
      return;
    }
    onArrive();
  }

  /** Registers (or checks) the host of a node. */
  registerNode(nodeName: string, host: string): void {
    const known = this.hostByNode.get(nodeName);
    if (!(known === undefined || known === host))
      fail(`sim node ${nodeName} already has host ${known}`);
    const owner = this.nodeByHost.get(host);
    if (!(owner === undefined || owner === nodeName)) fail(`host ${host} belongs to ${owner}`);
    this.hostByNode.set(nodeName, host);
    this.nodeByHost.set(host, nodeName);
  }

  /** Nodes that have a host, in registration order. */
  get nodeNames(): readonly string[] {
    return [...this.hostByNode.keys()];
  }

  nodeOfHost(host: string): string | undefined {
    return this.nodeByHost.get(host);
  }

  ports(host: string): PortTable<SimListener> {
    let table = this.portTables.get(host);
    if (table === undefined) {
      table = new PortTable<SimListener>();
      this.portTables.set(host, table);
    }
    return table;
  }

  listenerAt(address: HostPort): SimListener | undefined {
    if (this.nodeOfHost(address.host) === undefined) return undefined;
    return this.ports(address.host).listenerAt(address.port);
  }

  /** A new transport for a node that is not crashed. */
  createTransport(nodeName: string, host: string): SimTransport {
    if (this.crashed.has(nodeName)) fail(`sim node ${nodeName} is crashed: restart it first`);
    this.registerNode(nodeName, host);
    const transport = new SimTransport(this, nodeName, host);
    let set = this.transports.get(nodeName);
    if (set === undefined) {
      set = new Set();
      this.transports.set(nodeName, set);
    }
    set.add(transport);
    return transport;
  }

  transportClosed(transport: SimTransport): void {
    this.transports.get(transport.nodeName)?.delete(transport);
  }

  establish(client: SimTransport, target: HostPort, listener: SimListener): SimEndpoint {
    const localPort = this.ports(client.host).allocate();
    if (!(localPort !== undefined)) fail(`no free ephemeral port on ${client.host}`);
    const clientAddress: HostPort = { host: client.host, port: localPort };
    const server = listener.owner;
    const conn = new VirtualConnection(
      this,
      this.nextConnectionNo++,
      [this.link(client.nodeName, server.nodeName), this.link(server.nodeName, client.nodeName)],
      [
        {
          id: client.allocateConnectionId(),
          nodeName: client.nodeName,
          local: clientAddress,
          remote: target,
          owner: client,
        },
        {
          id: server.allocateConnectionId(),
          nodeName: server.nodeName,
          local: target,
          remote: clientAddress,
          owner: server,
        },
      ],
      listener,
    );
    this.connections.add(conn);
    for (const end of conn.ends) {
      const of = this.connectionsOf.get(end.nodeName);
      if (of === undefined) this.connectionsOf.set(end.nodeName, new Set([conn]));
      else of.add(conn);
    }
    client.adopt(conn.ends[CLIENT]);
    conn.start();
    return conn.ends[CLIENT];
  }

  forget(connection: VirtualConnection): void {
    this.connections.delete(connection);
    for (const end of connection.ends) this.connectionsOf.get(end.nodeName)?.delete(connection);
    const { local } = connection.ends[CLIENT];
    this.ports(local.host).release(local.port);
  }

  /** Re-evaluates every live connection after the partitions changed. */
  onBlocksChanged(): void {
    for (const conn of [...this.connections]) conn.onPartitionChanged();
  }

  isCrashed(nodeName: string): boolean {
    return this.crashed.has(nodeName);
  }

  /** Kills a node's process: transports die, its connection ends vanish, peers get RST. */
  crash(nodeName: string): void {
    this.crashed.add(nodeName);
    for (const transport of this.transports.get(nodeName) ?? []) transport.kill();
    this.transports.delete(nodeName);
    for (const link of this.linksFrom.get(nodeName) ?? []) link.releaseTransmitter(this.now);
    for (const conn of [...(this.connectionsOf.get(nodeName) ?? [])]) {
      for (const side of [CLIENT, SERVER] as const) {
        if (conn.ends[side].nodeName === nodeName) conn.killSide(side);
      }
    }
  }

  restart(nodeName: string): void {
    this.crashed.delete(nodeName);
  }
}

function linkKey(from: string, to: string): string {
  return `${from}\u0000${to}`;
}
