/** Test helper: full cluster nodes (remoting + membership) in the simulator. */
import type { ClusterOptions } from "../../src/cluster/membership/cluster.js";
import { Cluster } from "../../src/cluster/membership/cluster.js";
import type { RemotingSettings } from "../../src/cluster/remoting/remoting-settings.js";
import { FAST_CLUSTER_SETTINGS } from "../cluster-real/fast-settings.js";
import { SimCluster, type SimNode } from "./sim-remoting.js";

export interface SimMember extends SimNode {
  readonly cluster: Cluster;
  removedReason: string | undefined;
}

/** Fast timings so scenarios take seconds of virtual time (shared with the real-process tests). */
export const FAST: ClusterOptions["settings"] = FAST_CLUSTER_SETTINGS;

export class SimClusterHarness extends SimCluster {
  readonly members = new Map<string, SimMember>();

  async member(
    name: string,
    options: ClusterOptions = {},
    remoting: Partial<RemotingSettings> = {},
  ): Promise<SimMember> {
    const n = await this.node(name, { watchHeartbeatIntervalMs: 200, ...remoting });
    const m: SimMember = { ...n, cluster: undefined as never, removedReason: undefined };
    const cluster = Cluster.start(n.system, n.remoting, {
      settings: FAST,
      failureDetector: {
        acceptableHeartbeatPauseMs: 1_000,
        firstHeartbeatEstimateMs: 200,
        minStdDeviationMs: 50,
      },
      downing: { stableAfterMs: 2_000 },
      ...options,
      onSelfRemoved: (reason) => {
        m.removedReason = reason;
      },
    });
    (m as { cluster: Cluster }).cluster = cluster;
    this.members.set(name, m);
    return m;
  }

  statuses(name: string): string {
    const m = this.members.get(name);
    return (m?.cluster.state.members ?? [])
      .map((x) => `${x.uniqueAddress.address.host}:${x.status}`)
      .join(",");
  }
}
