/**
 * Settings shared by every Journal and SnapshotStore plugin, so that memory, SQLite and
 * PostgreSQL enforce the same bounds and pass the same contract suite. Each bound is a
 * `...Max` with its overflow behaviour: an append beyond batchEventsMax/batchBytesMax or
 * while queuedEventsMax events wait is refused with JournalRejectedError; reads return
 * at most readBatchMax events (the caller pages); a snapshot beyond snapshotBytesMax is
 * refused with SnapshotTooLargeError.
 */
import { int, type RulesOf, resolveSettings, str } from "../base/settings.js";

export interface JournalSettings {
  /** Most events one read returns (callers page). */
  readonly readBatchMax: number;
  /** Most events written in one group-commit batch; also the most one append may hold. */
  readonly batchEventsMax: number;
  /** Most payload bytes in one batch; also the most one append may hold. */
  readonly batchBytesMax: number;
  /** Most events accepted but not yet written; beyond it appends are rejected. */
  readonly queuedEventsMax: number;
}

export const defaultJournalSettings: JournalSettings = Object.freeze({
  readBatchMax: 1_000,
  batchEventsMax: 2_000,
  batchBytesMax: 16 * 1024 * 1024,
  queuedEventsMax: 200_000,
});

const journalRules: RulesOf<JournalSettings> = {
  readBatchMax: int(1, 1_000_000),
  batchEventsMax: int(1, 100_000),
  batchBytesMax: int(1024, 512 * 1024 * 1024),
  queuedEventsMax: int(1, 100_000_000),
};

/** Defaults merged with `overrides`, validated (ConfigError names the key). */
export function resolveJournalSettings(
  overrides?: Partial<JournalSettings>,
  prefix = "journal.",
): JournalSettings {
  return resolveSettings(prefix, defaultJournalSettings, journalRules, overrides);
}

export interface SnapshotSettings {
  /** Largest snapshot payload accepted, in bytes. */
  readonly snapshotBytesMax: number;
}

export const defaultSnapshotSettings: SnapshotSettings = Object.freeze({
  snapshotBytesMax: 64 * 1024 * 1024,
});

export function resolveSnapshotSettings(
  overrides?: Partial<SnapshotSettings>,
  prefix = "snapshot.",
): SnapshotSettings {
  return resolveSettings(
    prefix,
    defaultSnapshotSettings,
    { snapshotBytesMax: int(1, 1024 * 1024 * 1024) },
    overrides,
  );
}

/** Table prefixes are spliced into SQL, so only a safe identifier fragment is accepted. */
export const TABLE_PREFIX_PATTERN = /^[a-z_][a-z0-9_]{0,40}$/;

export const DEFAULT_TABLE_PREFIX = "shardkit_";

/** Validates a table prefix (ConfigError naming `key`). */
export function validateTablePrefix(prefix: unknown, key: string): string {
  return str(
    TABLE_PREFIX_PATTERN,
    "lower-case letters, digits and '_' (at most 41), starting with a letter or '_'",
  )(key, prefix);
}
