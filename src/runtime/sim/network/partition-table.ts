/**
 * The set of blocked directions between nodes. A partition is a set of directed
 * (from, to) pairs whose packets vanish; a two-way partition is both directions.
 * A node is never blocked from itself (loopback does not cross the network).
 */

/** Blocked directed node pairs. */
export class PartitionTable {
  private readonly blocked = new Set<string>();

  /** Whether packets from `from` to `to` currently vanish. */
  isBlocked(from: string, to: string): boolean {
    return this.blocked.size > 0 && this.blocked.has(key(from, to));
  }

  /** Number of blocked directions. */
  get size(): number {
    return this.blocked.size;
  }

  /** Blocks every direction from a node in `from` to a node in `to`. */
  block(from: readonly string[], to: readonly string[]): void {
    for (const f of from) for (const t of to) if (f !== t) this.blocked.add(key(f, t));
  }

  /** Unblocks both directions between every node of `a` and every node of `b`. */
  unblockBetween(a: readonly string[], b: readonly string[]): void {
    for (const x of a) {
      for (const y of b) {
        this.blocked.delete(key(x, y));
        this.blocked.delete(key(y, x));
      }
    }
  }

  /** Unblocks everything. */
  clear(): void {
    this.blocked.clear();
  }
}

function key(from: string, to: string): string {
  return `${from}\u0000${to}`;
}
