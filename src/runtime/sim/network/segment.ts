/**
 * A segment: one unit travelling in one direction of a simulated connection — the bytes
 * of one `send`, or a control marker (handshake completion, FIN, RST).
 *
 * Times are world times fixed when the segment is queued: `txEnd` (its last byte left
 * the sender, after bandwidth queueing) and `arrival` (it reaches the receiver, before
 * clogs and partitions are applied). `dead` segments were dropped before transmission
 * (destroy, reset, crash) and are skipped wherever they are found.
 */

/** What a segment carries. `open` completes the handshake: the server accepts on it. */
export type SegmentKind = "open" | "data" | "fin" | "rst";

/** One queued or in-flight unit of a connection direction. */
export interface Segment {
  readonly kind: SegmentKind;
  /** The payload (a private copy); empty for control segments. */
  readonly bytes: Uint8Array;
  /** World time at which the last byte leaves the sender. */
  readonly txEnd: number;
  /** World time at which the segment reaches the receiver, if nothing holds it. */
  readonly arrival: number;
  /** Drawn at send: when this segment arrives, the connection is reset instead. */
  readonly lost: boolean;
  /** Dropped before transmission; never delivered. */
  dead: boolean;
}

/** Payload of control segments. */
export const NO_BYTES: Uint8Array = new Uint8Array(0);
