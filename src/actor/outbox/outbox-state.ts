/**
 * The outbox's durable state and events: which messages were sent and are not yet
 * confirmed, and the next delivery id. Pure; the behavior folds events through
 * `applyOutboxEvent` (live and during recovery).
 *
 * Destinations are stored by name (a string), never as an actor ref: a ref names one
 * incarnation of an actor (its uid), which is gone after the destination or its node
 * restarts, so a stored ref would silently turn every redelivery into a dead letter.
 * The name is resolved to a sender function each time the outbox starts.
 */

/** A message sent and not yet confirmed. */
export interface OutboxEntry<P> {
  readonly deliveryId: number;
  /** Name of the destination (a key of the outbox's `destinations`). */
  readonly destination: string;
  readonly payload: P;
}

/** The events an outbox persists. Plain data: any codec for plain data can store them. */
export type OutboxEvent<P> =
  | {
      readonly type: "sent";
      readonly deliveryId: number;
      readonly destination: string;
      readonly payload: P;
    }
  | { readonly type: "confirmed"; readonly deliveryId: number };

/** A snapshot of the state as plain data (entries in deliveryId order). */
export interface OutboxSnapshot<P> {
  readonly nextDeliveryId: number;
  readonly unconfirmed: readonly OutboxEntry<P>[];
}

/** The durable state. */
export interface OutboxState<P> {
  /** The id the next `send` gets (ids start at 1 and are never reused). */
  readonly nextDeliveryId: number;
  /** Unconfirmed messages by deliveryId, in deliveryId order. */
  readonly unconfirmed: ReadonlyMap<number, OutboxEntry<P>>;
}

/**
 * Internal representation. Copying a map of up to `unconfirmedMax` entries on every
 * event would make each event O(n), so the map is updated in place once this state
 * object is owned: the empty state (shared by every incarnation, so never mutated) is
 * copied on the first event, and every later state is the private value of one
 * incarnation's fold (the event-sourced behavior keeps only the newest state, and
 * snapshots are encoded synchronously).
 */
interface MutableState<P> extends OutboxState<P> {
  nextDeliveryId: number;
  readonly unconfirmed: Map<number, OutboxEntry<P>>;
  readonly owned: boolean;
}

/** A fresh empty state (never mutated by applyOutboxEvent). */
export function emptyOutboxState<P>(): OutboxState<P> {
  const s: MutableState<P> = { nextDeliveryId: 1, unconfirmed: new Map(), owned: false };
  return Object.freeze(s);
}

/** The state after `event`. May reuse (and update) `state` when it is owned. */
export function applyOutboxEvent<P>(state: OutboxState<P>, event: OutboxEvent<P>): OutboxState<P> {
  const s = own(state);
  switch (event.type) {
    case "sent":
      s.unconfirmed.set(event.deliveryId, {
        deliveryId: event.deliveryId,
        destination: event.destination,
        payload: event.payload,
      });
      s.nextDeliveryId = Math.max(s.nextDeliveryId, event.deliveryId + 1);
      return s;
    case "confirmed":
      s.unconfirmed.delete(event.deliveryId);
      return s;
  }
}

export function outboxSnapshotOf<P>(state: OutboxState<P>): OutboxSnapshot<P> {
  return { nextDeliveryId: state.nextDeliveryId, unconfirmed: [...state.unconfirmed.values()] };
}

export function outboxStateOf<P>(snapshot: OutboxSnapshot<P>): OutboxState<P> {
  const unconfirmed = new Map<number, OutboxEntry<P>>();
  const sorted = [...snapshot.unconfirmed].sort((a, b) => a.deliveryId - b.deliveryId);
  for (const e of sorted)
    unconfirmed.set(e.deliveryId, {
      deliveryId: e.deliveryId,
      destination: e.destination,
      payload: e.payload,
    });
  const s: MutableState<P> = { nextDeliveryId: snapshot.nextDeliveryId, unconfirmed, owned: true };
  return s;
}

function own<P>(state: OutboxState<P>): MutableState<P> {
  const s = state as MutableState<P>;
  if (s.owned === true) return s;
  return { nextDeliveryId: s.nextDeliveryId, unconfirmed: new Map(s.unconfirmed), owned: true };
}
