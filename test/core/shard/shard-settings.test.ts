import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import {
  DEFAULT_SHARD_SETTINGS,
  idlePassivationEnabled,
  idleSweepIntervalMs,
  resolveShardSettings,
} from "../../../src/core/shard/shard-settings.js";

describe("shard settings", () => {
  it("defaults", () => {
    const s = resolveShardSettings();
    expect(s).toEqual(DEFAULT_SHARD_SETTINGS);
    expect(s.passivateIdleAfterMs).toBe(120_000);
    expect(s.handOffTimeoutMs).toBe(60_000);
    expect(s.entityRestartBackoffMs).toBe(10_000);
    expect(s.bufferSizeMax).toBe(100_000);
    expect(s.entityRecoveryStrategy).toBe("all");
    expect(Object.isFrozen(s)).toBe(true);
  });

  it("rejects bad values and unknown keys with a ConfigError naming the key", () => {
    const bad: [string, unknown][] = [
      ["passivateIdleAfterMs", -1],
      ["entityRestartBackoffMs", 0],
      ["entityRecoveryStrategy", "some"],
      ["entityRecoveryConstantRateNumberOfEntities", 0],
      ["maxUpdatesPerWrite", 1.5],
      ["bufferSizeMax", 0],
      ["handOffTimeoutMs", Number.NaN],
      ["rememberEntities", "yes"],
      ["passivateIdleAfter", 1000],
    ];
    for (const [key, value] of bad) {
      const err = (() => {
        try {
          resolveShardSettings({ [key]: value });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err, key).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).key).toBe(`sharding.${key}`);
      expect((err as ConfigError).code).toBe("CONFIG_INVALID");
    }
  });

  it("idle sweep: its own interval, or half the idle timeout; off when remembering", () => {
    expect(idleSweepIntervalMs(resolveShardSettings())).toBe(60_000);
    expect(idleSweepIntervalMs(resolveShardSettings({ passivateIdleSweepIntervalMs: 7 }))).toBe(7);
    expect(idleSweepIntervalMs(resolveShardSettings({ passivateIdleAfterMs: 1 }))).toBe(1);
    expect(idlePassivationEnabled(resolveShardSettings())).toBe(true);
    expect(idlePassivationEnabled(resolveShardSettings({ passivateIdleAfterMs: 0 }))).toBe(false);
    expect(idlePassivationEnabled(resolveShardSettings({ rememberEntities: true }))).toBe(false);
  });
});
