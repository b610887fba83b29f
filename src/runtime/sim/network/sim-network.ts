/**
 * The simulated network: a `Transport` per simulated node, all in one process, driven
 * by the SimWorld's virtual time and seed, with faults a test controls.
 *
 * Model (docs/simulator.md has the long form):
 * - A connection is a pair of directed byte streams. Each `send` is one segment. It
 *   waits for the link's transmitter (bandwidth, shared by all connections on the
 *   directed link), then travels latency + uniform jitter. Within one direction
 *   delivery is in order and gap-free: a segment arrives at max(sampled time, previous
 *   arrival). Reordering therefore happens only between different connections.
 * - Loss ends connections, it never punches holes in them: with `lossProbability` per
 *   segment the connection is reset on both sides when the segment would have arrived.
 *   Byte streams are never duplicated (TCP); duplicate *messages* arise at the remoting
 *   layer, which reconnects and resends unacknowledged messages after such resets.
 * - Connect: SYN / SYN-ACK / ACK over the links. Nobody listening -> "connect-refused"
 *   after one round trip; `connectFailProbability` -> handshake reset ("other") after
 *   one round trip; a partition or unknown host -> "connect-timeout".
 * - Partitions block directions between nodes (one-way or two-way). Blocked segments
 *   are held (TCP keeps retransmitting) and, if the block lasts `partitionResetAfterMs`,
 *   the connection is reset on both sides; healing earlier lets them through one
 *   one-way delay after the heal. Handshake packets into a block vanish.
 * - A clog holds every arrival on a link until it ends (delays, never drops).
 * - Crash: the node's listeners and connection ends vanish without callbacks; peers
 *   receive an RST (after the in-flight bytes) and close with an error. Restart allows
 *   a new transport for the node.
 * - All callbacks run in world events, never inside the API call that caused them.
 */
import { assert, fail } from "../../../base/assert.js";
import type { SimWorld } from "../sim-world.js";
import { NET_TRACE_NODE, NetCore } from "./net-core.js";
import type { LinkConfig, SimNetworkOptions } from "./sim-network-settings.js";
import type { SimTransport } from "./sim-transport.js";

/** Options of `partition` and `clog`. */
export interface DirectionOptions {
  /** Affect only the direction from the first group to the second. Default false. */
  readonly oneWay?: boolean;
}

/** One or several node names. */
export type NodeNames = string | readonly string[];

/** The simulated network of a SimWorld. */
export class SimNetwork {
  private readonly core: NetCore;

  constructor(
    readonly world: SimWorld,
    options?: SimNetworkOptions,
  ) {
    this.core = new NetCore(world, options);
  }

  /** Node name used for this network's trace records. */
  static readonly traceNode = NET_TRACE_NODE;

  /**
   * A new Transport for `nodeName` (one per process incarnation). Its listeners bind
   * `host` (default: the node name), which peers use to connect; a host belongs to one
   * node for the life of the network.
   */
  transportFor(nodeName: string, host: string = nodeName): SimTransport {
    assert(nodeName !== "" && host !== "", "node name and host must be non-empty");
    return this.core.createTransport(nodeName, host);
  }

  /** The effective config of the directed link from -> to. */
  linkConfig(from: string, to: string): LinkConfig {
    return this.core.linkConfig(from, to);
  }

  /** Overrides the config of the directed link from -> to (merged onto its current one). */
  configureLink(from: string, to: string, config: Partial<LinkConfig>): LinkConfig {
    const resolved = this.core.configureLink(from, to, config);
    this.core.record("link-config", { from, to, ...config });
    return resolved;
  }

  /** Blocks a -> b (and b -> a unless oneWay) until healed. */
  partition(a: NodeNames, b: NodeNames, options: DirectionOptions = {}): void {
    const from = names(a);
    const to = names(b);
    assert(!from.some((n) => to.includes(n)), "a node cannot be on both sides of a partition");
    this.core.partitions.block(from, to);
    if (options.oneWay !== true) this.core.partitions.block(to, from);
    this.core.record("partition", { a: from, b: to, oneWay: options.oneWay === true });
    this.core.onBlocksChanged();
  }

  /** Cuts `node` off from every other node known to the network (both ways). */
  isolate(node: string): void {
    const others = this.core.nodeNames.filter((n) => n !== node);
    if (others.length > 0) this.partition([node], others);
  }

  /** Heals everything, or both directions between the nodes of `a` and of `b`. */
  heal(a?: NodeNames, b?: NodeNames): void {
    assert((a === undefined) === (b === undefined), "heal takes no groups or two groups");
    if (a === undefined || b === undefined) {
      this.core.partitions.clear();
      this.core.record("heal", "all");
    } else {
      this.core.partitions.unblockBetween(names(a), names(b));
      this.core.record("heal", { a: names(a), b: names(b) });
    }
    this.core.onBlocksChanged();
  }

  /** Whether packets from -> to currently vanish. */
  isBlocked(from: string, to: string): boolean {
    return this.core.partitions.isBlocked(from, to);
  }

  /** Holds every arrival on a -> b (and b -> a unless oneWay) for the next `ms` ms. */
  clog(a: string, b: string, ms: number, options: DirectionOptions = {}): void {
    if (!(Number.isFinite(ms) && ms >= 0)) fail(`clog duration must be finite and >= 0: ${ms}`);
    const until = this.world.now + ms;
    const links =
      options.oneWay === true
        ? [this.core.link(a, b)]
        : [this.core.link(a, b), this.core.link(b, a)];
    for (const link of links) link.clogUntil = Math.max(link.clogUntil, until);
    this.core.record("clog", { a, b, until, oneWay: options.oneWay === true });
  }

  /** Kills the node's process (see the module comment). Restart it to listen again. */
  crash(nodeName: string): void {
    if (this.core.isCrashed(nodeName)) fail(`sim node ${nodeName} is already crashed`);
    this.core.record("crash", nodeName);
    this.core.crash(nodeName);
  }

  /** Allows a crashed node to create a transport again. */
  restart(nodeName: string): void {
    if (!this.core.isCrashed(nodeName)) fail(`sim node ${nodeName} is not crashed`);
    this.core.restart(nodeName);
    this.core.record("restart", nodeName);
  }

  isCrashed(nodeName: string): boolean {
    return this.core.isCrashed(nodeName);
  }

  /** Number of connections not yet closed on both sides (leak checks). */
  get openConnections(): number {
    return this.core.connectionCount;
  }
}

function names(group: NodeNames): readonly string[] {
  return typeof group === "string" ? [group] : group;
}
