/**
 * Inputs, outputs, states and timer keys of the singleton manager machine
 * (singleton-manager.ts). Plain data: the driver feeds inputs and performs outputs in
 * order.
 */
import type { SingletonManagerMessage } from "../../protocol/singleton.js";
import type { Member } from "../membership/member.js";
import type { UniqueAddress } from "../membership/unique-address.js";
import type { SingletonManagerStuckError } from "./singleton-errors.js";
import type { SingletonManagerSettings } from "./singleton-settings.js";

/** The states of the manager (see docs/singleton.md for the diagram). */
export const SingletonManagerState = {
  /** Waiting for the first membership snapshot that lists self. */
  Start: "Start",
  /** Another member is (or should be) the oldest eligible one; no instance here. */
  Younger: "Younger",
  /** Self is the oldest eligible; waiting for hand-over from older leaving members. */
  BecomingOldest: "BecomingOldest",
  /** Self is the oldest eligible; waiting only for downed older members to be removed. */
  TakeOver: "TakeOver",
  /** Self may start; waiting for the lease. */
  AcquiringLease: "AcquiringLease",
  /** The instance runs here (or ran and stopped by itself). */
  Oldest: "Oldest",
  /** The instance runs here but self is no longer the oldest eligible; awaiting hand-over. */
  WasOldest: "WasOldest",
  /** Stopping the instance for a member that asked HandOverToMe. */
  HandingOver: "HandingOver",
  /** Stopping the instance for another reason (downed, removed, shutdown, lease lost). */
  Stopping: "Stopping",
  /** No instance here, ever again. Still answers HandOverToMe with HandOverDone. */
  End: "End",
} as const;

/** A state of the manager. */
export type SingletonManagerState =
  (typeof SingletonManagerState)[keyof typeof SingletonManagerState];

/** Keys of the manager's fixed timers. At most one timer per key runs at a time. */
export const SingletonTimer = {
  /** BecomingOldest: resend HandOverToMe. */
  HandOverRetry: "hand-over-retry",
  /** WasOldest: resend TakeOverFromMe. */
  TakeOverRetry: "take-over-retry",
  /** AcquiringLease: try the lease again after a refusal. */
  LeaseRetry: "lease-retry",
} as const;

/** Prefix of the per-node removal-margin timer keys (`removal-margin:<unique address>`). */
export const REMOVAL_MARGIN_TIMER_PREFIX = "removal-margin:";

/** Configuration of one manager (one per node and singleton name). */
export interface SingletonManagerConfig<StopMessage = unknown> {
  /** This node's incarnation. */
  readonly self: UniqueAddress;
  /** The singleton runs only on members with this role; undefined: on any member. */
  readonly role: string | undefined;
  /** Data center of self; members of other data centers are ignored. Default "default". */
  readonly dataCenter?: string;
  /** Acquire a lease before starting the instance. */
  readonly useLease: boolean;
  /** Passed through in `stop-instance`; the driver sends it to the instance. */
  readonly stopMessage: StopMessage;
  readonly settings?: Partial<SingletonManagerSettings>;
}

/** A message from another manager, with its sender. */
export type SingletonMessageInput = SingletonManagerMessage & { readonly from: UniqueAddress };

/** Inputs of the manager. */
export type SingletonManagerInput =
  /**
   * After every cluster state change: the members (any order, any status; the machine
   * keeps those in scope, see singleton-members.ts) and the nodes removed since the last
   * snapshot. A node listed before and missing now counts as removed too.
   */
  | {
      readonly type: "members";
      readonly oldestFirst: readonly Member[];
      readonly removed?: readonly UniqueAddress[];
      /**
       * The members unreachable now (any observer); used only with
       * `takeOverFromUnreachable` (singleton-settings.ts).
       */
      readonly unreachable?: readonly UniqueAddress[];
    }
  | SingletonMessageInput
  /** The instance started by `start-instance` has terminated (for whatever reason). */
  | { readonly type: "instance-terminated" }
  /** Result of `acquire-lease`. */
  | { readonly type: "lease-acquired"; readonly ok: boolean }
  /** A held lease was lost (renewal failed). */
  | { readonly type: "lease-lost"; readonly reason?: string }
  /** A timer started by `start-timer` fired (and was not cancelled since). */
  | { readonly type: "timer"; readonly key: string }
  /** This node was downed. */
  | { readonly type: "self-downed" }
  /** This node was removed from the cluster. */
  | { readonly type: "self-removed" }
  /** The node is shutting down: stop the instance (if any) and end. */
  | { readonly type: "shutdown" };

/** Log levels of `log` outputs. */
export type SingletonLogLevel = "debug" | "info" | "warn" | "error";

/** Outputs of the manager, to be performed in order. */
export type SingletonManagerOutput<StopMessage = unknown> =
  | { readonly type: "start-instance" }
  | { readonly type: "stop-instance"; readonly stopMessage: StopMessage }
  | {
      readonly type: "send";
      readonly to: UniqueAddress;
      readonly message: SingletonManagerMessage;
    }
  /** Start (or restart) the timer `key`; feed `timer(key)` after delayMs. */
  | { readonly type: "start-timer"; readonly key: string; readonly delayMs: number }
  /** Cancel the timer `key`; it must not fire afterwards. */
  | { readonly type: "cancel-timer"; readonly key: string }
  /** Acquire the lease; feed `lease-acquired(ok)` with the result. */
  | { readonly type: "acquire-lease" }
  | { readonly type: "release-lease" }
  | { readonly type: "log"; readonly level: SingletonLogLevel; readonly text: string }
  /** The hand-over or take-over never completed (see SingletonManagerStuckError). */
  | { readonly type: "stuck-error"; readonly error: SingletonManagerStuckError }
  /**
   * Entered End: no instance runs here and none ever will. The driver may confirm
   * exiting and, once self is removed or the node stops, dispose the machine.
   */
  | { readonly type: "done" };

/** Where the instance of this node is. */
export type SingletonInstanceStatus = "none" | "running" | "stopping";

/** Where the lease of this node is. */
export type SingletonLeaseStatus = "none" | "acquiring" | "held";

/** Read-only view of the machine, for drivers, metrics and tests. */
export interface SingletonManagerSnapshot {
  readonly state: SingletonManagerState;
  readonly instance: SingletonInstanceStatus;
  readonly lease: SingletonLeaseStatus;
  /** The oldest eligible member as this node sees it. */
  readonly oldest: UniqueAddress | undefined;
  /** Running timers, sorted. */
  readonly timers: readonly string[];
}
