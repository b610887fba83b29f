/**
 * The membership messages as plain data: what the membership machine
 * (membership-machine.ts) receives and sends. The wire codec is in
 * cluster/membership/membership-messages.ts; each kind is one CONTROL-lane kind byte.
 */
import type { Gossip } from "./gossip.js";
import type { Member } from "./member.js";

export const MembershipKind = {
  Gossip: 16,
  GossipStatus: 17,
  Join: 18,
  Welcome: 19,
  InitJoin: 20,
  InitJoinAck: 21,
  InitJoinNack: 22,
  Heartbeat: 23,
  HeartbeatRsp: 24,
  ExitingConfirmed: 25,
  /**
   * The answer to a refused Join (`reason`: a JoinRefusedReason of join.ts), so the joiner
   * learns why; a node of an older version ignores the kind (docs/cluster.md, "Joining").
   */
  JoinRefused: 26,
} as const;
export type MembershipKind = (typeof MembershipKind)[keyof typeof MembershipKind];

export type MembershipMessage =
  | {
      readonly kind: typeof MembershipKind.Gossip;
      readonly to: string;
      readonly gossip: Gossip;
      /**
       * The sender's hash of the gossip's member list (gossip.ts membersHashOf); its
       * presence says the sender can receive a compact gossip (gossip-logic.ts).
       */
      readonly membersHash?: readonly [number, number];
      /** Sent without the member list: the receiver holds the members of `membersHash`. */
      readonly compact?: boolean;
    }
  | {
      readonly kind: typeof MembershipKind.GossipStatus;
      readonly version: readonly (readonly [string, number])[];
      readonly seenDigest: number;
      /** A seen status: the sender's seen set over the version's members (gossip.ts seenBitsOf). */
      readonly seen?: readonly number[];
      /**
       * A hashed status (gossip-logic.ts versionHashOf): the version as its 64-bit hash, sent
       * to a member that has seen it; `version` is then empty and means nothing.
       */
      readonly versionHash?: readonly [number, number];
      /**
       * The sender's hash of its member list (gossip.ts membersHashOf): the gossip that
       * answers this status may then be compact (gossip-logic.ts, "Compact gossip").
       */
      readonly membersHash?: readonly [number, number];
      /**
       * Sending: write the version's keys as indices into this member list, the sender's
       * (gossip-logic.ts, "Compact status"; `membersHash` must be its hash). Received
       * statuses never carry it: the codec gives them the version as keys.
       */
      readonly compactOn?: readonly Member[];
    }
  | {
      readonly kind: typeof MembershipKind.Join;
      readonly roles: string[];
      readonly appVersion: string;
    }
  | { readonly kind: typeof MembershipKind.Welcome; readonly gossip: Gossip }
  | { readonly kind: typeof MembershipKind.InitJoin }
  | { readonly kind: typeof MembershipKind.InitJoinAck }
  | { readonly kind: typeof MembershipKind.InitJoinNack }
  | { readonly kind: typeof MembershipKind.Heartbeat; readonly seq: number }
  | { readonly kind: typeof MembershipKind.HeartbeatRsp; readonly seq: number }
  | { readonly kind: typeof MembershipKind.ExitingConfirmed; readonly node: string }
  | { readonly kind: typeof MembershipKind.JoinRefused; readonly reason: string };
