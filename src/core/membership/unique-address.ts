/**
 * Identity of one incarnation of a node: its Address plus a random `uid` chosen at start-up
 * (docs/architecture.md, "Membership and gossip": host:port:uid). A restarted process on
 * the same host:port gets a new uid and is a different node, which is what lets the cluster
 * refuse a downed or removed incarnation forever.
 *
 * String form `protocol://system@host:port#uid` is canonical: two unique addresses are
 * equal iff their strings are equal, so the string doubles as a map key. Ordering is the
 * address order (host, port, then protocol/system ties) followed by the uid (numeric,
 * signed). uid is a safe integer (53 bits), not a 64-bit long: random 53-bit uids make
 * collisions on one host:port negligible and keep the value a plain JSON number.
 */
import {
  type Address,
  addressEquals,
  addressOf,
  addressToString,
  compareAddresses,
  InvalidAddressError,
  parseAddress,
} from "./address.js";

/** One incarnation of a node. Plain immutable data. */
export interface UniqueAddress {
  readonly address: Address;
  /** Random incarnation id; a safe integer, may be negative. */
  readonly uid: number;
}

const UID_RE = /^(.*)#(-?\d+)$/;

/** Where uniqueAddressOf keeps a node's canonical string (see uniqueAddressToString). */
const CANONICAL: unique symbol = Symbol("canonical node string");

/** A frozen UniqueAddress; throws InvalidAddressError when uid is not a safe integer. */
export function uniqueAddressOf(address: Address, uid: number): UniqueAddress {
  if (!Number.isSafeInteger(uid))
    throw new InvalidAddressError(
      `${addressToString(address)}#${uid}`,
      "uid must be a safe integer",
    );
  const node = { address, uid };
  // its canonical string, built once, as a property that is neither enumerable nor named
  // (equality, JSON and structured clones see only address and uid)
  Object.defineProperty(node, CANONICAL, { value: `${addressToString(address)}#${uid}` });
  return Object.freeze(node);
}

/** Shorthand: a UniqueAddress from its parts. */
export function nodeOf(
  protocol: string,
  system: string,
  host: string,
  port: number,
  uid: number,
): UniqueAddress {
  return uniqueAddressOf(addressOf(protocol, system, host, port), uid);
}

/**
 * Canonical strings already built, per UniqueAddress object not made by uniqueAddressOf
 * (which keeps the string on the node itself: a property load instead of a WeakMap
 * lookup, asked millions of times per second by a large simulation). A UniqueAddress is
 * frozen, so its string never changes; the WeakMap holds no address alive. The string is
 * the key of most maps and sets of the membership model.
 */
const canonicalStrings = new WeakMap<UniqueAddress, string>();

/** Canonical string form `protocol://system@host:port#uid`; usable as a map key. */
export function uniqueAddressToString(node: UniqueAddress): string {
  const own = (node as { readonly [CANONICAL]?: string })[CANONICAL];
  if (own !== undefined) return own;
  let s = canonicalStrings.get(node);
  if (s === undefined) {
    s = `${addressToString(node.address)}#${node.uid}`;
    canonicalStrings.set(node, s);
  }
  return s;
}

/** Parses `protocol://system@host:port#uid` (the inverse of uniqueAddressToString). */
export function parseUniqueAddress(text: string): UniqueAddress {
  const m = UID_RE.exec(text);
  if (!m) throw new InvalidAddressError(text, "expected protocol://system@host:port#uid");
  return uniqueAddressOf(parseAddress(m[1] as string), Number(m[2]));
}

/** Node order: address order, then uid (numeric). Total and consistent with equality. */
export function compareUniqueAddresses(a: UniqueAddress, b: UniqueAddress): number {
  if (a === b) return 0;
  const byAddress = compareAddresses(a.address, b.address);
  if (byAddress !== 0) return byAddress;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

/** Identity: same address and same uid. */
export function uniqueAddressEquals(a: UniqueAddress, b: UniqueAddress): boolean {
  return a === b || (a.uid === b.uid && addressEquals(a.address, b.address));
}
