/**
 * Who monitors whom (docs/cluster.md, "Failure detection"): every node sends heartbeats to
 * a bounded set of peers taken from a ring of all nodes ordered by the murmur3 hash of
 * their unique address. Each node picks its successors on the ring, so every node is
 * monitored by its predecessors, and every node computes the same ring from the same member
 * set whatever order it learned the members in (docs/architecture.md, "The determinism
 * boundary").
 *
 * Unreachable nodes: walking the ring, a sender keeps going until it has
 * `monitoredByNrOfMembers` REACHABLE receivers, so reachable members stay monitored when
 * neighbours fail. Unreachable nodes met on the way are still included (they do not
 * count) while fewer than `monitoredByNrOfMembers` receivers have been picked, so that
 * somebody keeps heartbeating them and notices when they come back; further unreachable
 * nodes are skipped. With `monitoredByNrOfMembers >= n - 1` every node monitors all.
 *
 * The ring of a frozen node list is computed once per list (`ringOf`).
 *
 * Why a hash ring: neighbours by hash are spread across hosts, racks and data centers,
 * whereas neighbours by address would monitor the machine next door.
 */
import { fail } from "../../base/assert.js";
import { murmur3OfString } from "../../base/hash.js";
import { sortedUnique } from "./sorted-array.js";
import {
  compareUniqueAddresses,
  type UniqueAddress,
  uniqueAddressToString,
} from "./unique-address.js";

/** Default number of peers that monitor each node. */
export const DEFAULT_MONITORED_BY_NR_OF_MEMBERS = 9;

/** Options of the ring. */
export interface HeartbeatRingOptions {
  /** Nodes currently observed as unreachable (by anyone). */
  readonly unreachable?: Iterable<UniqueAddress>;
  /** Peers per node (>= 1); default 9. */
  readonly monitoredByNrOfMembers?: number;
}

interface RingNode {
  readonly node: UniqueAddress;
  readonly key: string;
  readonly hash: number;
}

/**
 * murmur3 of each node's canonical string, per UniqueAddress object (frozen, so the hash
 * never changes; the WeakMap keeps no node alive). A ring over N members hashes N strings
 * otherwise, on every rebuild.
 */
const ringHashes = new WeakMap<UniqueAddress, number>();

function ringNodeOf(node: UniqueAddress): RingNode {
  const key = uniqueAddressToString(node);
  let hash = ringHashes.get(node);
  if (hash === undefined) {
    hash = murmur3OfString(key);
    ringHashes.set(node, hash);
  }
  return { node, key, hash };
}

function compareRingNodes(a: RingNode, b: RingNode): number {
  return a.hash - b.hash || compareUniqueAddresses(a.node, b.node);
}

/**
 * The ring of each frozen node list (the WeakMap keeps none alive): every member of a
 * cluster builds the ring of the same member list (in the simulator, of the same decoded
 * list), and builds it again whenever the unreachable nodes change, which while a crash
 * is observed is every few received gossips; the order does not depend on either.
 */
const rings = new WeakMap<readonly UniqueAddress[], readonly RingNode[]>();

function ringOf(nodes: Iterable<UniqueAddress>): readonly RingNode[] {
  const list =
    Array.isArray(nodes) && Object.isFrozen(nodes)
      ? (nodes as readonly UniqueAddress[])
      : undefined;
  const kept = list === undefined ? undefined : rings.get(list);
  if (kept !== undefined) return kept;
  const ring = Object.freeze(
    sortedUnique(nodes, compareUniqueAddresses).map(ringNodeOf).sort(compareRingNodes),
  );
  if (list !== undefined) rings.set(list, ring);
  return ring;
}

/** The monitoring ring of one member set. Immutable. */
export class HeartbeatRing {
  private readonly ring: readonly RingNode[];
  private readonly unreachable: ReadonlySet<string>;
  private readonly monitoredBy: number;

  constructor(nodes: Iterable<UniqueAddress>, options: HeartbeatRingOptions = {}) {
    const monitoredBy = options.monitoredByNrOfMembers ?? DEFAULT_MONITORED_BY_NR_OF_MEMBERS;
    if (!(Number.isSafeInteger(monitoredBy) && monitoredBy >= 1))
      fail(`monitoredByNrOfMembers must be an integer >= 1, got ${monitoredBy}`);
    this.ring = ringOf(nodes);
    this.unreachable = new Set([...(options.unreachable ?? [])].map(uniqueAddressToString));
    this.monitoredBy = monitoredBy;
  }

  /** The nodes in ring order (hash, then node order). */
  get nodes(): readonly UniqueAddress[] {
    return this.ring.map((r) => r.node);
  }

  /** The nodes `sender` heartbeats, sorted by node order; sender is added to the ring. */
  receivers(sender: UniqueAddress): UniqueAddress[] {
    const senderKey = uniqueAddressToString(sender);
    const ring = this.ring.some((r) => r.key === senderKey)
      ? this.ring
      : [...this.ring, ringNodeOf(sender)].sort(compareRingNodes);
    const start = ring.findIndex((r) => r.key === senderKey);
    const picked: UniqueAddress[] = [];
    let reachablePicked = 0;
    for (let step = 1; step < ring.length && reachablePicked < this.monitoredBy; step++) {
      const next = ring[(start + step) % ring.length] as RingNode;
      if (!this.unreachable.has(next.key)) {
        picked.push(next.node);
        reachablePicked += 1;
      } else if (picked.length < this.monitoredBy) {
        picked.push(next.node); // keep probing it, but it does not count
      }
    }
    return picked.sort(compareUniqueAddresses);
  }

  /** The nodes of the ring that heartbeat `subject` (inverse of receivers), sorted. */
  observersOf(subject: UniqueAddress): UniqueAddress[] {
    const subjectKey = uniqueAddressToString(subject);
    return this.ring
      .filter(
        (r) =>
          r.key !== subjectKey &&
          this.receivers(r.node).some((n) => uniqueAddressToString(n) === subjectKey),
      )
      .map((r) => r.node)
      .sort(compareUniqueAddresses);
  }
}

/** The peers `self` sends heartbeats to, among `members` (self included or not). */
export function receivers(
  self: UniqueAddress,
  members: Iterable<UniqueAddress>,
  options: HeartbeatRingOptions = {},
): UniqueAddress[] {
  return new HeartbeatRing([...members, self], options).receivers(self);
}

/** The members that send heartbeats to `subject` (inverse of `receivers`). */
export function observersOf(
  subject: UniqueAddress,
  members: Iterable<UniqueAddress>,
  options: HeartbeatRingOptions = {},
): UniqueAddress[] {
  return new HeartbeatRing(members, options).observersOf(subject);
}
