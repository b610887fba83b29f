/**
 * Per-actor spawn options. Unset values fall back to the system's ActorSettings.
 */
export interface Props {
  /** Bound on queued messages; overflow goes to dead letters (counted). */
  readonly mailboxCapacityMax?: number;
  /** Bound on stashed messages; overflow throws StashOverflowError in the handler. */
  readonly stashCapacityMax?: number;
  /**
   * When true, a handler returning a Promise does not block the next message: handlers
   * may interleave at their awaits. Off by default (one message at a time, to completion).
   */
  readonly allowConcurrentAsync?: boolean;
}
