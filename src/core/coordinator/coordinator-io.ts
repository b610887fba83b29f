/**
 * Inputs and outputs of the shard coordinator machine (coordinator-machine.ts). The driver
 * feeds every input with the current time and performs the outputs in order: `persist`
 * writes a batch and later feeds `persisted` or `persist-failed` with its id; `send`
 * delivers a message; timers are started and cancelled by key, and a fired timer comes
 * back as a `timer` input with that key. Everything is plain data.
 *
 * Persist before announce (docs/architecture.md, house rule 4) is in this shape: messages
 * that depend on a state change (RegisterAck, HostShard, ShardHome for a new home) are only
 * ever output while handling the `persisted` input of the batch that made the change
 * durable.
 */
import type {
  CoordinatorCommand,
  CoordinatorEvent,
  CoordinatorSnapshot,
  RegionCommand,
  RegionId,
} from "../../protocol/sharding.js";
import type { MemberStatus } from "../membership/member-status.js";
import type { ShardId } from "../sharding/shard-id.js";

/** One cluster member as the coordinator needs to know it. */
export interface CoordinatorMember {
  /** Unique address string (matches `member` of Register / RegisterProxy). */
  readonly uniqueAddress: string;
  /** Node address without the incarnation (stable across restarts; consistent hashing). */
  readonly address: string;
  readonly status: MemberStatus;
  readonly appVersion: string;
  /** False while some node observes the member as unreachable. */
  readonly reachable: boolean;
  readonly roles: readonly string[];
}

/** A member removal as this node saw it (see the `membership` input). */
export interface CoordinatorRemoval {
  readonly uniqueAddress: string;
  readonly atMs: number;
}

/** Inputs that come from the driver itself rather than from a region. */
export type CoordinatorLocalInput =
  /**
   * The whole membership (every member not yet removed), fed on start and after each
   * change. A region or proxy whose member is missing or removed counts as terminated.
   */
  | {
      readonly type: "membership";
      readonly members: readonly CoordinatorMember[];
      /**
       * Members this node saw removed, with the time it saw each removal (the clock of
       * `handle`'s `nowMs`). The removal margin of their regions counts from then, not
       * from when this coordinator learns of it (a coordinator that took over after the
       * singleton's own removal margin would otherwise wait it twice). A removed member
       * not listed here gets the whole margin from now. Optional; replaces the previous
       * list.
       */
      readonly removed?: readonly CoordinatorRemoval[];
    }
  /** The batch `batchId` is durable. */
  | { readonly type: "persisted"; readonly batchId: number }
  /** Writing the batch `batchId` failed; nothing of it may be assumed durable. */
  | { readonly type: "persist-failed"; readonly batchId: number; readonly reason: string }
  /** The timer started with `key` fired. */
  | { readonly type: "timer"; readonly key: string }
  /** Periodic (rebalanceIntervalMs): rebalance, retry waiting allocations, warn. */
  | { readonly type: "rebalance-tick" }
  /** Try the waiting allocations again now (an asynchronous strategy has answered). */
  | { readonly type: "allocation-retry" }
  /**
   * A watched region terminated (its node was removed, or the actor stopped). On a
   * removed member it takes effect after regionRemovalMarginMs.
   */
  | { readonly type: "region-terminated"; readonly region: RegionId }
  /** A watched proxy terminated. */
  | { readonly type: "proxy-terminated"; readonly proxy: RegionId };

/** Everything the machine accepts. */
export type CoordinatorInput = CoordinatorCommand | CoordinatorLocalInput;

/** Log levels of `log` outputs. */
export type CoordinatorLogLevel = "debug" | "info" | "warn" | "error";

/** What the driver must do, in order. */
export type CoordinatorOutput =
  | { readonly type: "send"; readonly to: RegionId; readonly message: RegionCommand }
  /** Write `events` atomically (all or none), then feed `persisted` / `persist-failed`. */
  | {
      readonly type: "persist";
      readonly batchId: number;
      readonly events: readonly CoordinatorEvent[];
    }
  /** Save this snapshot of the durable state (it covers every event persisted so far). */
  | { readonly type: "save-snapshot"; readonly snapshot: CoordinatorSnapshot }
  | { readonly type: "start-timer"; readonly key: string; readonly delayMs: number }
  | { readonly type: "cancel-timer"; readonly key: string }
  /** A log line; `event` is a stable kebab-case name to count or filter on. */
  | {
      readonly type: "log";
      readonly level: CoordinatorLogLevel;
      readonly event: string;
      readonly message: string;
      readonly fields: Readonly<Record<string, unknown>>;
    };

/** Timer keys of the machine. At most one timer runs per key. */
export const CoordinatorTimer = {
  /** Resend HostShard to the owner of `shard` (until ShardStarted). */
  hostShard: (shard: ShardId): string => `host-shard:${shard}`,
  /** The hand-off of `shard` took too long. */
  handOff: (shard: ShardId): string => `hand-off:${shard}`,
  /** Write the failed persist batch again. */
  persistRetry: "persist-retry",
  /** The removal margin of a region on a removed member has passed. */
  regionRemoval: (region: RegionId): string => `region-removal:${region}`,
  /** Regions recovery: the removal margin of members that left before registering passed. */
  recoveryMargin: "recovery-margin",
  /** Leased shards: `member` has been unreachable for unreachableMoveAfterMs. */
  unreachableMove: (member: string): string => `unreachable-move:${member}`,
} as const;

/** A timer key split into its kind and shard (undefined for an unknown key). */
export function parseCoordinatorTimer(
  key: string,
):
  | { readonly kind: "host-shard" | "hand-off"; readonly shard: ShardId }
  | { readonly kind: "persist-retry" | "recovery-margin" }
  | { readonly kind: "region-removal"; readonly region: RegionId }
  | { readonly kind: "unreachable-move"; readonly member: string }
  | undefined {
  if (key === CoordinatorTimer.persistRetry) return { kind: "persist-retry" };
  if (key === CoordinatorTimer.recoveryMargin) return { kind: "recovery-margin" };
  const colon = key.indexOf(":");
  const kind = key.slice(0, colon);
  if (kind === "region-removal") return { kind, region: key.slice(colon + 1) };
  if (kind === "unreachable-move") return { kind, member: key.slice(colon + 1) };
  if (colon > 0 && (kind === "host-shard" || kind === "hand-off"))
    return { kind, shard: key.slice(colon + 1) };
  return undefined;
}
