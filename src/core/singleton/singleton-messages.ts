/**
 * The messages singleton managers exchange (one protocol per singleton name; the driver
 * routes by name and by the exact target incarnation, dropping a message addressed to
 * another uid of the same host:port).
 *
 * - hand-over-to-me: the new oldest asks an older member that is leaving (or otherwise
 *   no longer eligible) to give the instance up. Sent and retried only to members the
 *   sender sees as permanently ineligible, so the receiver may answer it, in any state,
 *   by giving up the singleton for good.
 * - hand-over-in-progress: the old oldest has started stopping its instance.
 * - hand-over-done: the sender holds no instance and never will again.
 * - takeover-from-me: the old oldest tells the member it believes is the new oldest to
 *   start the hand-over (that member may not have noticed the change yet).
 *
 * Plain data; the wire codec belongs with the other protocols (protocol/).
 */

/** A message between singleton managers. */
export type SingletonManagerMessage =
  | { readonly type: "hand-over-to-me" }
  | { readonly type: "hand-over-in-progress" }
  /**
   * `wasOldest`: the sender ran the instance at some point. Its own safety rule cleared
   * every member older than itself before that, so the receiver may treat them as
   * handed over too (no removal margin to wait for).
   */
  | { readonly type: "hand-over-done"; readonly wasOldest?: boolean }
  | { readonly type: "takeover-from-me" };

/** The message type names, for decoders and exhaustive checks. */
export const SINGLETON_MANAGER_MESSAGE_TYPES = [
  "hand-over-to-me",
  "hand-over-in-progress",
  "hand-over-done",
  "takeover-from-me",
] as const satisfies readonly SingletonManagerMessage["type"][];
