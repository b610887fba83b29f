/** Shapes shared by the plugins' maintenance operations (see sqlite-admin / postgres-admin). */

/** Which persistenceIds an operation covers: these exact ids, and every id with one of these prefixes. */
export interface PersistenceIdMatch {
  readonly exact: readonly string[];
  readonly prefixes: readonly string[];
}

/** What a deletion removed. */
export interface RemovedRows {
  /** Distinct persistenceIds that had any row. */
  readonly persistenceIds: number;
  readonly events: number;
  readonly snapshots: number;
}
