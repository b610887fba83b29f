/**
 * The record of a simulation run: what happened, on which node, at what virtual time.
 *
 * Every entry is folded into a running FNV-1a hash of a canonical string as it is
 * added, so `hash()` fingerprints the whole run without keeping it in memory; the
 * entries themselves are kept only on request (debugging, order assertions). Two runs
 * with the same seed and code must produce the same hash.
 */
import { Fnv1a64 } from "./fnv1a64.js";

/** One recorded fact. `detail` is already canonical text. */
export interface TraceEntry {
  /** World (virtual) time in ms. */
  readonly t: number;
  /** Node name, or "world" for simulator-level records. */
  readonly node: string;
  /** What kind of fact, e.g. "log" or a user-chosen tag. */
  readonly kind: string;
  readonly detail: string;
}

const FIELD_SEPARATOR = "\u001f";
const RECORD_SEPARATOR = "\u001e";
const NO_ENTRIES: readonly TraceEntry[] = Object.freeze([]);

/** Incrementally hashed trace, optionally keeping its entries. */
export class Trace {
  private readonly hasher = new Fnv1a64();
  private readonly kept: TraceEntry[] | undefined;
  private count = 0;

  constructor(keepEntries: boolean) {
    this.kept = keepEntries ? [] : undefined;
  }

  /** Number of entries added (kept or not). */
  get length(): number {
    return this.count;
  }

  /** The entries, or an empty array when entries are not kept. */
  get entries(): readonly TraceEntry[] {
    return this.kept ?? NO_ENTRIES;
  }

  add(entry: TraceEntry): void {
    this.count++;
    this.hasher.update(canonical(entry));
    this.kept?.push(entry);
  }

  /** 16 hex digits fingerprinting every entry added so far, in order. */
  hash(): string {
    return this.hasher.digest();
  }
}

function canonical(e: TraceEntry): string {
  return `${e.t}${FIELD_SEPARATOR}${e.node}${FIELD_SEPARATOR}${e.kind}${FIELD_SEPARATOR}${e.detail}${RECORD_SEPARATOR}`;
}
