/**
 * Test and bench helper: a SimClusterHarness that counts the membership traffic each node
 * sends (gossip, heartbeats, join conversation), in wire bytes, and a cheap convergence
 * probe for clusters of hundreds of simulated nodes.
 *
 * Counting happens where membership hands a control frame to remoting (sendControl), so
 * it sees exactly what the Cluster sends, by kind. Wire bytes = payload + the membership
 * kind byte + the frame header (4-byte length, 1-byte frame type); what the outbound
 * queue drops under overload is still counted (it was offered).
 */
import { MembershipKind } from "../../src/cluster/membership/membership-messages.js";
import type { RemotingSettings } from "../../src/cluster/remoting/remoting-settings.js";
import { framePayloadLength } from "../../src/protocol/framing.js";
import { SimClusterHarness } from "./sim-cluster.js";
import type { SimNode } from "./sim-remoting.js";

/** Frame header (length prefix + frame type) and the control kind byte. */
const CONTROL_FRAME_OVERHEAD_BYTES = 4 + 1 + 1;

/** Traffic of one class of membership messages. */
export interface TrafficCount {
  frames: number;
  bytes: number;
}

/** What the meter counts, summed over all nodes since the last reset. */
export interface MembershipTraffic {
  /** Full gossip and gossip status (the push-pull digest). */
  readonly gossip: TrafficCount;
  /** Of `gossip`: full gossip only. */
  readonly fullGossip: TrafficCount;
  readonly heartbeat: TrafficCount;
  /** Join, Welcome, InitJoin(Ack/Nack), ExitingConfirmed, JoinRefused. */
  readonly other: TrafficCount;
}

function zero(): TrafficCount {
  return { frames: 0, bytes: 0 };
}

function classOf(kind: number): "gossip" | "heartbeat" | "other" {
  if (kind === MembershipKind.Gossip || kind === MembershipKind.GossipStatus) return "gossip";
  if (kind === MembershipKind.Heartbeat || kind === MembershipKind.HeartbeatRsp) return "heartbeat";
  return "other";
}

export class MeteredSimCluster extends SimClusterHarness {
  private counts = { gossip: zero(), fullGossip: zero(), heartbeat: zero(), other: zero() };

  override async node(
    name: string,
    settings: Partial<RemotingSettings> = {},
    systemName = "sk",
  ): Promise<SimNode> {
    const n = await super.node(name, settings, systemName);
    const remoting = n.remoting;
    const send = remoting.sendControl.bind(remoting);
    remoting.sendControl = (node, kind, payload, urgent) => {
      const bytes = framePayloadLength(payload) + CONTROL_FRAME_OVERHEAD_BYTES;
      const c = this.counts[classOf(kind)];
      c.frames++;
      c.bytes += bytes;
      if (kind === MembershipKind.Gossip) {
        this.counts.fullGossip.frames++;
        this.counts.fullGossip.bytes += bytes;
      }
      send(node, kind, payload, urgent);
    };
    return n;
  }

  /** Traffic since the last reset. */
  get traffic(): MembershipTraffic {
    return structuredClone(this.counts);
  }

  resetTraffic(): void {
    this.counts = { gossip: zero(), fullGossip: zero(), heartbeat: zero(), other: zero() };
  }

  /**
   * True when every node in `names` sees exactly `names.length` members, all Up, and has
   * convergence. Cost O(N^2): `throttled` evaluates it at most once per `everyMs` of
   * virtual time (the predicate of `until` runs before every event).
   */
  allUpAndConverged(names: readonly string[]): boolean {
    for (const n of names) {
      const st = this.members.get(n)?.cluster.state;
      if (st === undefined || st.members.length !== names.length || !st.convergence) return false;
      if (!st.members.every((m) => m.status === "up")) return false;
    }
    return true;
  }

  /** `predicate`, evaluated at most once per `everyMs` of virtual time (false in between). */
  throttled(predicate: () => boolean, everyMs: number): () => boolean {
    let nextAt = this.world.now;
    return () => {
      if (this.world.now < nextAt) return false;
      nextAt = this.world.now + everyMs;
      return predicate();
    };
  }
}

/** Node names n000, n001, ... (they sort like their numbers, so n000 leads). */
export function nodeNames(count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => `n${String(from + i).padStart(3, "0")}`);
}
