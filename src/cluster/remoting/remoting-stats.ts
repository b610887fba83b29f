/**
 * Counters of one node's remoting, exposed as `remoting.stats` (and later as metrics).
 */
export interface RemotingStats {
  userMessagesOut: number;
  userMessagesIn: number;
  systemMessagesIn: number;
  controlFramesIn: number;
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

export function newRemotingStats(): RemotingStats {
  return {
    userMessagesOut: 0,
    userMessagesIn: 0,
    systemMessagesIn: 0,
    controlFramesIn: 0,
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
