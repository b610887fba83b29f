/**
 * Inputs, outputs, timer keys and views of the shard region machine (region-machine.ts).
 * Plain data: the driver (an actor in cluster/) feeds inputs with the current time and
 * performs the outputs in the order given. `M` is the entity message type; the machine
 * never looks inside a message, nor at its sender.
 */
import type { CoordinatorCommand, RegionCommand, RegionId } from "../../protocol/sharding.js";
import type { EntityId, ShardId } from "../sharding/shard-id.js";

/**
 * Identifies one coordinator incarnation: the id the coordinator driver uses as its
 * `self` (what it puts in RegisterAck) and tags every message it sends with.
 */
export type CoordinatorRef = string;

/** One message on its way to an entity. */
export interface RegionEnvelope<M> {
  readonly entityId: EntityId;
  readonly message: M;
  /** Opaque: carried with the message (replies, tracing), never inspected. */
  readonly sender?: unknown;
}

/** Inputs of the region machine. */
export type RegionInput<M> =
  /** Fed once, first: starts registration (and its warnings). */
  | { readonly type: "start" }
  /**
   * A message for an entity (the driver already extracted shard and entity id).
   * `forwarded`: another region (or a proxy) sent it here because its cache names this
   * region the shard's home; it is not forwarded a second time (see region-machine.ts).
   */
  | {
      readonly type: "deliver";
      readonly shard: ShardId;
      readonly entityId: EntityId;
      readonly message: M;
      readonly sender?: unknown;
      readonly forwarded?: boolean;
    }
  /** The coordinator singleton moved (or is gone: undefined). The region registers anew. */
  | { readonly type: "coordinator-changed"; readonly coordinator: CoordinatorRef | undefined }
  /** A message from the coordinator incarnation `from`. */
  | {
      readonly type: "coordinator-message";
      readonly from: CoordinatorRef;
      readonly message: RegionCommand;
    }
  /** The local shard actor asked for by `start-shard` is up and takes messages. */
  | { readonly type: "shard-started-local"; readonly shard: ShardId }
  /**
   * Messages a local shard could not deliver before it stopped (its `return-to-region`),
   * oldest first. They go back to the FRONT of the shard's buffer. Feed them before the
   * shard's `local-shard-stopped`.
   */
  | {
      readonly type: "return-to-region";
      readonly shard: ShardId;
      readonly messages: readonly RegionEnvelope<M>[];
    }
  /** The local shard actor terminated (hand-off complete, stopped, or crashed). */
  | { readonly type: "local-shard-stopped"; readonly shard: ShardId }
  /** A remote region is gone (its node left or was removed): forget homes there. */
  | { readonly type: "region-terminated"; readonly region: RegionId }
  /** A timer started by `start-timer` fired (and was not cancelled since). */
  | { readonly type: "timer"; readonly key: string }
  /** Hand off every local shard, deliver what is buffered, then stop. */
  | { readonly type: "graceful-shutdown" }
  /** This region's own member was downed: stop the local shards now, stop. */
  | { readonly type: "self-downed" }
  /** Stop now without hand-off (e.g. the shutdown phase timed out): like self-downed. */
  | { readonly type: "stop" };

/** Why a message became a dead letter. */
export type RegionDropReason =
  /** The region's buffers held bufferSizeMax messages. */
  | "buffer-overflow"
  /** The region had stopped (or stopped with the message still buffered). */
  | "region-stopped";

/** Log levels of `log` outputs. */
export type RegionLogLevel = "debug" | "info" | "warn" | "error";

/** Outputs of the region machine, to be performed in order. */
export type RegionOutput<M> =
  /** Send `message` to the coordinator incarnation `coordinator`. */
  | {
      readonly type: "send-to-coordinator";
      readonly coordinator: CoordinatorRef;
      readonly message: CoordinatorCommand;
    }
  /**
   * Send `message` to the coordinator through the region `via`, which passes it on. Sent
   * on the same channel as the forwards to `via`, it arrives there after every message
   * this region forwarded to `via` before (the hand-off barrier, see onBeginHandOff).
   */
  | {
      readonly type: "relay-to-coordinator";
      readonly via: RegionId;
      readonly coordinator: CoordinatorRef;
      readonly message: CoordinatorCommand;
    }
  /** Send to the remote region `region`; it feeds `deliver(shard, ...)` to its machine. */
  | {
      readonly type: "forward";
      readonly region: RegionId;
      readonly shard: ShardId;
      readonly envelope: RegionEnvelope<M>;
    }
  /** Give to the local shard actor of `shard` (its shard machine's `deliver`). */
  | {
      readonly type: "deliver-local";
      readonly shard: ShardId;
      readonly envelope: RegionEnvelope<M>;
    }
  /** Create the local shard actor; feed `shard-started-local` once it takes messages. */
  | { readonly type: "start-shard"; readonly shard: ShardId }
  /**
   * Stop the local shard now, without a hand-off (its shard machine's `shutdown`); feed
   * its handed-back messages (`return-to-region`), then `local-shard-stopped`.
   */
  | { readonly type: "stop-shard"; readonly shard: ShardId }
  /**
   * Hand the local shard off (its shard machine's `hand-off`): its entities get the
   * hand-off stop message; feed `return-to-region`, then `local-shard-stopped`.
   */
  | { readonly type: "hand-off-shard"; readonly shard: ShardId; readonly handOffId: number }
  /** Publish to dead letters (already counted in the machine's stats). */
  | {
      readonly type: "dead-letter";
      readonly shard: ShardId;
      readonly envelope: RegionEnvelope<M>;
      readonly reason: RegionDropReason;
    }
  /** Start (or restart) the one-shot timer `key`; feed `timer(key)` after delayMs. */
  | { readonly type: "start-timer"; readonly key: string; readonly delayMs: number }
  | { readonly type: "cancel-timer"; readonly key: string }
  /** A log line; `event` is a stable kebab-case name to count or filter on. */
  | {
      readonly type: "log";
      readonly level: RegionLogLevel;
      readonly event: string;
      readonly text: string;
    }
  /** The region has stopped: it emits nothing more but dead letters. */
  | { readonly type: "stopped" };

/** Keys of the region's timers. At most one timer runs per key. */
export const RegionTimer = {
  /** Register again (backoff from registrationRetryMinMs to retryIntervalMs). */
  Register: "register",
  /** Every retryIntervalMs while something waits: GetShardHome again, shutdown request. */
  Retry: "retry",
} as const;

/** Where the region is. */
export const RegionPhase = {
  /** Not yet started (`start` not fed). */
  Idle: "idle",
  Running: "running",
  /** Graceful shutdown: handing off local shards, delivering what is buffered. */
  ShuttingDown: "shutting-down",
  /** Final: `stopped` was emitted. */
  Stopped: "stopped",
} as const;

/** A phase of the region. */
export type RegionPhase = (typeof RegionPhase)[keyof typeof RegionPhase];

/** What the region knows of a shard actor it runs. */
export const LocalShardState = {
  /** `start-shard` emitted; messages wait in the region until `shard-started-local`. */
  Starting: "starting",
  /** Up: messages go to it directly (while the home is known to be this region). */
  Running: "running",
  /** `hand-off-shard` emitted; ShardStopped goes out once it has stopped. */
  HandingOff: "handing-off",
  /** `stop-shard` emitted; waiting for it to terminate. */
  Stopping: "stopping",
} as const;

/** A state of a local shard. */
export type LocalShardState = (typeof LocalShardState)[keyof typeof LocalShardState];

/** Counters of the region. */
export interface RegionStats {
  /** Messages held now, over all shards. */
  readonly bufferedMessages: number;
  /** Messages refused because the buffers were full (part of deadLetters). */
  readonly overflowCount: number;
  /** Every `dead-letter` output so far. */
  readonly deadLetters: number;
  /** Register / RegisterProxy messages sent. */
  readonly registrationAttempts: number;
}

/** A read-only picture of the region for queries, logs and tests. */
export interface RegionView {
  readonly phase: RegionPhase;
  readonly coordinator: CoordinatorRef | undefined;
  readonly registered: boolean;
  /** Known shard homes, sorted by shard. */
  readonly homes: readonly { readonly shard: ShardId; readonly region: RegionId }[];
  /** Local shard actors, sorted by shard. */
  readonly localShards: readonly { readonly shard: ShardId; readonly state: LocalShardState }[];
  /** Buffered messages per shard, sorted by shard. */
  readonly buffered: readonly { readonly shard: ShardId; readonly count: number }[];
  readonly stats: RegionStats;
}
