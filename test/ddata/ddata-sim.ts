/** Test helper: replicators on full simulated cluster nodes (SimClusterHarness). */
import { Replicator, type ReplicatorOptions } from "../../src/cluster/ddata/index.js";
import type { ReplicatorSettings } from "../../src/core/ddata/replicator-types.js";
import { MemoryDDataDurableStore } from "../../src/ports/ddata-durable-store.js";
import { SimClusterHarness, type SimMember } from "../cluster/sim-cluster.js";

/** Quick timings so scenarios take seconds of virtual time. */
export const FAST_DDATA: Partial<ReplicatorSettings> = {
  gossipIntervalMs: 200,
  deltaPropagationIntervalMs: 50,
  notifySubscribersIntervalMs: 100,
  pruningIntervalMs: 500,
  operationTimeoutMs: 2_000,
};

export interface DDataSimOptions {
  /** Keep every key on a (simulated) disk that survives crashes. */
  readonly durable?: boolean;
  /** SBR stable-after: long values keep partitioned members in the cluster. */
  readonly stableAfterMs?: number;
  readonly replicator?: Partial<ReplicatorOptions>;
}

export class DDataSim {
  readonly h: SimClusterHarness;
  readonly replicators = new Map<string, Replicator>();
  readonly stores = new Map<string, MemoryDDataDurableStore>();
  readonly names: string[];

  constructor(
    readonly seed: number,
    count: number,
    private readonly options: DDataSimOptions = {},
  ) {
    this.h = new SimClusterHarness(seed);
    this.names = Array.from({ length: count }, (_, i) => `n${i + 1}`);
  }

  get seeds(): string[] {
    return this.names.slice(0, Math.min(3, this.names.length)).map((n) => `${n}:2552`);
  }

  async start(): Promise<void> {
    for (const n of this.names) await this.startMember(n);
    await this.h.until(() => this.allUp(this.names), 120_000);
  }

  async startMember(name: string): Promise<SimMember> {
    const m = await this.h.member(name, {
      seedNodes: this.seeds,
      downing: { stableAfterMs: this.options.stableAfterMs ?? 2_000 },
    });
    let store = this.stores.get(name);
    if (this.options.durable === true && store === undefined) {
      store = new MemoryDDataDurableStore(`sim:${name}`);
      this.stores.set(name, store);
    }
    const r = Replicator.start(m, {
      settings: FAST_DDATA,
      ...(this.options.durable === true ? { durableKeys: ["*"], durableStore: store } : {}),
      ...this.options.replicator,
    });
    this.replicators.set(name, r);
    return m;
  }

  rep(name: string): Replicator {
    const r = this.replicators.get(name);
    if (r === undefined) throw new Error(`no replicator on ${name}`);
    return r;
  }

  crash(name: string): void {
    const m = this.h.members.get(name);
    if (m === undefined) throw new Error(`no member ${name}`);
    this.h.crash(m);
    this.replicators.delete(name);
    this.h.members.delete(name);
  }

  allUp(names: readonly string[]): boolean {
    return names.every((n) => {
      const st = this.h.members.get(n)?.cluster.state;
      return (
        st !== undefined &&
        st.members.length === names.length &&
        st.members.every((m) => m.status === "up") &&
        st.unreachable.length === 0 &&
        st.convergence
      );
    });
  }

  /** Runs the world until `p` settles (or limitMs of virtual time pass). */
  async settle<T>(
    p: Promise<T>,
    limitMs = 30_000,
  ): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
    let result: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    p.then(
      (value) => {
        result = { ok: true, value };
      },
      (error: unknown) => {
        result = { ok: false, error };
      },
    );
    await this.h.until(() => result !== undefined, limitMs);
    return result as { ok: true; value: T } | { ok: false; error: unknown };
  }

  describe(): string {
    return this.h.world.describe();
  }
}
