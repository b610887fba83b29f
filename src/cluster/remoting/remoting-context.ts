/**
 * What associations and inbound connections need from the Remoting that owns them.
 * An interface so both can be unit-tested with a stub and so the dependency is one-way.
 */
import type { Clock } from "../../ports/clock.js";
import type { LogFields } from "../../ports/logger.js";
import type { Random } from "../../ports/random.js";
import type { Scheduler } from "../../ports/scheduler.js";
import type { Connection, Transport } from "../../ports/transport.js";
import { type HandshakeReject, RejectReason } from "../../protocol/handshake.js";
import type { HandshakePolicy } from "../../protocol/handshake-check.js";
import type { HandshakeIdentity } from "../../protocol/handshake-proof.js";
import type { AssociationEvent } from "./association-failure.js";
import type { RemotingSettings } from "./remoting-settings.js";
import type { RemotingStats } from "./remoting-stats.js";
import type { WireNode } from "./wire-path.js";

export interface RemotingContext {
  readonly settings: Readonly<RemotingSettings>;
  readonly stats: RemotingStats;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly random: Random;
  readonly transport: Transport;
  /** Rules and secrets the handshake is judged with (protocol/handshake-check.ts). */
  readonly handshakePolicy: HandshakePolicy;
  /** This node's identity in handshakes. */
  readonly selfIdentity: HandshakeIdentity;
  /** A fresh 16-byte handshake nonce. */
  handshakeNonce(): Uint8Array;
  /** The TLS binding of `conn` (exporter output), empty on plain TCP. */
  channelBinding(conn: Connection): Uint8Array;
  /** A handshake established `node` as incarnation `uid`. */
  peerIncarnation(node: WireNode, uid: bigint): void;
  /** Quarantines `node`#`uid`: it may never talk to this node again. */
  quarantine(node: WireNode, uid: bigint, reason: string): void;
  /** An outbound association failed or was established (join diagnostics listen). */
  associationEvent?(event: AssociationEvent): void;
  /** Logs bad input at a rate limit and counts it. */
  badInput(what: string, peer: string, detail: string): void;
  debug(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** Reports a QUARANTINED handshake reject to the association listeners. */
export function quarantinedBy(ctx: RemotingContext, reject: HandshakeReject): void {
  if (reject.reason !== RejectReason.QUARANTINED) return;
  const { host, port } = reject.address;
  ctx.associationEvent?.({
    type: "quarantined-by",
    hostPort: `${host}:${port}`,
    host,
    port,
    uid: reject.uid,
  });
}
