/**
 * Counters of one node's remoting, exposed as `remoting.stats` and read at scrape time
 * by the node's metrics (src/observability/node-metrics.ts). Every field is a plain
 * increment where remoting already touches the frame; bytes count whole frames (length
 * prefix and type byte included) as written to or read from the connection.
 */
export interface RemotingStats {
  userMessagesOut: number;
  userMessagesIn: number;
  /** System messages written (resends included). */
  systemMessagesOut: number;
  systemMessagesIn: number;
  /** CONTROL frames written. */
  controlFramesOut: number;
  controlFramesIn: number;
  /** Bytes of USER / SYSTEM / CONTROL frames written (counted per flush). */
  userBytesOut: number;
  systemBytesOut: number;
  controlBytesOut: number;
  /** Bytes of USER / SYSTEM / CONTROL frames read after the handshake. */
  userBytesIn: number;
  systemBytesIn: number;
  controlBytesIn: number;
  /** CONTROL messages and payload bytes (after the kind byte) by kind, sent and received. */
  readonly controlKinds: ControlKindStats;
  /** Connection attempts after a failure (each after its backoff). */
  reconnects: number;
  writes: number;
  /** User messages dropped because a peer's outbound queue was full. */
  outboundOverflow: number;
  controlDropped: number;
  /** Frames that could not be decoded, unknown frame types, oversized frames. */
  badFrames: number;
  /** Messages with an unknown serializer id or undecodable bytes. */
  badMessages: number;
  /** Well-formed messages whose manifest this member does not know (dead-lettered). */
  unknownManifests: number;
  /** Messages for actors that do not exist here. */
  unknownRecipients: number;
  handshakeRejectsSent: number;
  handshakeRejectsReceived: number;
  handshakeTimeouts: number;
  quarantines: number;
  inboundConnections: number;
  /** Inbound connections closed at once because the unauthenticated-connection caps were reached. */
  unauthenticatedRefused: number;
  /** Gauge: inbound connections open that have not completed the handshake. */
  unauthenticatedConnections: number;
}

/** Number of CONTROL kinds (one byte). */
export const CONTROL_KINDS = 256;

/**
 * Per CONTROL kind: messages and their payload bytes (the encoded message as the sender's
 * codec produced it, without the kind byte), counted by `Remoting.sendControl` and on
 * receipt. Membership reads its kinds (gossip, heartbeats, ...) from here.
 */
export interface ControlKindStats {
  readonly messagesOut: Float64Array;
  readonly bytesOut: Float64Array;
  readonly messagesIn: Float64Array;
  readonly bytesIn: Float64Array;
}

export function newRemotingStats(): RemotingStats {
  return {
    userMessagesOut: 0,
    userMessagesIn: 0,
    systemMessagesOut: 0,
    systemMessagesIn: 0,
    controlFramesOut: 0,
    controlFramesIn: 0,
    userBytesOut: 0,
    systemBytesOut: 0,
    controlBytesOut: 0,
    userBytesIn: 0,
    systemBytesIn: 0,
    controlBytesIn: 0,
    controlKinds: {
      messagesOut: new Float64Array(CONTROL_KINDS),
      bytesOut: new Float64Array(CONTROL_KINDS),
      messagesIn: new Float64Array(CONTROL_KINDS),
      bytesIn: new Float64Array(CONTROL_KINDS),
    },
    reconnects: 0,
    writes: 0,
    outboundOverflow: 0,
    controlDropped: 0,
    badFrames: 0,
    badMessages: 0,
    unknownManifests: 0,
    unknownRecipients: 0,
    handshakeRejectsSent: 0,
    handshakeRejectsReceived: 0,
    handshakeTimeouts: 0,
    quarantines: 0,
    inboundConnections: 0,
    unauthenticatedRefused: 0,
    unauthenticatedConnections: 0,
  };
}
