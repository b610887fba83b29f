/**
 * GetShardHome round trips of one region, for the metrics
 * (`shardkit_sharding_shard_home_duration_seconds`, docs/observability.md): the time of
 * the first request for a shard is kept until the coordinator names the shard's home
 * (ShardHome, HostShard, or a ShardHomes that lists it), then reported once. Retries and
 * a coordinator change in between keep the first time: what is measured is how long the
 * region waited. Only requests are timed (they are rare: one per shard the region does not
 * know), never messages; the clock is read when a request is sent and when a timed shard
 * gets its answer. At most `timedMax` requests are timed at once (the others are not
 * measured, so an unbounded number of shard ids cannot grow the table).
 */
import type { RegionCommand } from "../../protocol/sharding.js";

/** Default bound of shards timed at once. */
export const SHARD_HOME_REQUESTS_TIMED_MAX = 10_000;

/** See the module comment. */
export class ShardHomeTiming {
  private readonly askedAtMs = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly report: (shard: string, latencyMs: number) => void,
    private readonly timedMax: number = SHARD_HOME_REQUESTS_TIMED_MAX,
  ) {}

  /** Shards whose request is being timed. */
  get pending(): number {
    return this.askedAtMs.size;
  }

  /** A GetShardHome for `shard` was sent to the coordinator. */
  asked(shard: string): void {
    if (this.askedAtMs.has(shard) || this.askedAtMs.size >= this.timedMax) return;
    this.askedAtMs.set(shard, this.now());
  }

  /** A message from the coordinator arrived: reports the shards whose home it names. */
  received(cmd: RegionCommand): void {
    if (this.askedAtMs.size === 0) return;
    switch (cmd.type) {
      case "shard-home":
      case "host-shard":
        this.answered(cmd.shard);
        return;
      case "shard-homes":
        for (const h of cmd.homes) for (const shard of h.shards) this.answered(shard);
        return;
      default:
        return;
    }
  }

  /** Forgets every request (the region stopped). */
  clear(): void {
    this.askedAtMs.clear();
  }

  private answered(shard: string): void {
    const at = this.askedAtMs.get(shard);
    if (at === undefined) return;
    this.askedAtMs.delete(shard);
    this.report(shard, Math.max(0, this.now() - at));
  }
}
