/**
 * Settings of the PostgreSQL plugin (besides the shared journal and snapshot settings).
 * `batchesInFlightMax` group-commit batches run at once, each on its own pool client, so
 * keep it at or below the pool's `max` (batches of different ids only; one id is never
 * in two batches at once). While one batch is in flight, another starts only with at
 * least `parallelBatchAppendsMin` appends ready, so that a few dozen concurrent writers
 * make a few large statements rather than many tiny ones (group-committer.ts).
 * `namedStatements` prepares the journal's statements once per pooled connection instead
 * of having the server parse and plan them on every call (docs/persistence.md,
 * "PostgreSQL: named statements").
 */
import { bool, int, type RulesOf, resolveSettings } from "../../base/settings.js";
import { DEFAULT_TABLE_PREFIX, validateTablePrefix } from "../persistence-settings.js";

export interface PostgresSettings {
  /** Prefix of every table name. */
  readonly tablePrefix: string;
  /** Create the tables on first use (false when `shardkit migrate` does it). */
  readonly createSchema: boolean;
  /** Group-commit batches written concurrently. */
  readonly batchesInFlightMax: number;
  /**
   * Appends that must be ready before a batch starts beside one already in flight (a
   * lone batch starts with any). 1: every free slot is used at once.
   */
  readonly parallelBatchAppendsMin: number;
  /**
   * Send the journal's statements as named (prepared) statements: each pooled connection
   * parses and plans a statement once and then only binds and executes it. About half
   * of the server's CPU per append batch. Turn off behind a connection pooler in
   * transaction mode that does not track named statements (PgBouncer before 1.21, or
   * without `max_prepared_statements`).
   */
  readonly namedStatements: boolean;
}

export const defaultPostgresSettings: PostgresSettings = Object.freeze({
  tablePrefix: DEFAULT_TABLE_PREFIX,
  createSchema: true,
  batchesInFlightMax: 4,
  parallelBatchAppendsMin: 64,
  namedStatements: true,
});

const rules: RulesOf<PostgresSettings> = {
  tablePrefix: (key, value) => validateTablePrefix(value, key),
  createSchema: bool(),
  batchesInFlightMax: int(1, 64),
  parallelBatchAppendsMin: int(1, 100_000),
  namedStatements: bool(),
};

export function resolvePostgresSettings(overrides?: Partial<PostgresSettings>): PostgresSettings {
  return resolveSettings("postgres.", defaultPostgresSettings, rules, overrides);
}
