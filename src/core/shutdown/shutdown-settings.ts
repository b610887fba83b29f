/**
 * Settings of coordinated shutdown: the default phase timeout, whether the real runtime
 * runs the shutdown on SIGTERM/SIGINT, and the phases (built-in ones with overrides,
 * plus application phases). One object, defaulted and validated in one place (docs/architecture.md,
 * house rule 2): a bad value fails at startup with a ConfigError naming the key, e.g.
 * `shutdown.phases.cluster-leave.timeoutMs`.
 *
 * The resolved `phases` are already in run order (phase-order.ts), so a cycle or a
 * dependency on an unknown phase is a configuration error, not a runtime surprise.
 */
import { ConfigError } from "../../base/errors.js";
import { bool, ms, type Rule } from "../../base/settings.js";
import { orderPhases, type PhaseOrderProblem } from "./phase-order.js";
import {
  builtInPhases,
  DEFAULT_PHASE_TIMEOUT_MS,
  type PhaseDefinition,
  type PhaseSettings,
} from "./shutdown-phases.js";

/** Overrides of one phase (built-in or new). */
export interface PhaseOverride {
  readonly timeoutMs?: number;
  readonly recover?: boolean;
  readonly enabled?: boolean;
  /** Replaces the phase's dependencies (a new phase without it depends on nothing). */
  readonly dependsOn?: readonly string[];
}

/** Resolved settings of coordinated shutdown. */
export interface ShutdownSettings {
  /** Timeout of every phase without its own. > 0. Default 5 000. */
  readonly defaultPhaseTimeoutMs: number;
  /** The real runtime runs the shutdown on SIGTERM/SIGINT (see docs/shutdown.md).
   * Default true. */
  readonly runOnSignals: boolean;
  /** Every phase, in run order. */
  readonly phases: readonly PhaseDefinition[];
}

/** What the application may set. */
export interface ShutdownSettingsOverrides {
  readonly defaultPhaseTimeoutMs?: number;
  readonly runOnSignals?: boolean;
  /** Per phase name: overrides of a built-in phase, or the definition of a new one. */
  readonly phases?: Readonly<Record<string, PhaseOverride>>;
}

/** Phase names: letters, digits, '-', '_' and '.', starting with a letter or digit. */
const PHASE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const TOP_KEYS = ["defaultPhaseTimeoutMs", "runOnSignals", "phases"] as const;
const PHASE_KEYS = ["timeoutMs", "recover", "enabled", "dependsOn"] as const;

/** A phase timeout: at least 1 ms (0 would time out before any task could finish). */
const positiveMs: Rule<number> = ms(1);

/**
 * Defaults merged with `overrides`, validated, phases ordered. Throws ConfigError on an
 * invalid or unknown key, a cycle, or a dependency on an unknown phase.
 */
export function resolveShutdownSettings(
  overrides: ShutdownSettingsOverrides = {},
  prefix = "shutdown.",
): ShutdownSettings {
  if (typeof overrides !== "object" || overrides === null)
    throw new ConfigError(prefix.replace(/\.$/, ""), overrides, "a settings object");
  rejectUnknownKeys(prefix, overrides, TOP_KEYS);
  const defaultPhaseTimeoutMs = positiveMs(
    `${prefix}defaultPhaseTimeoutMs`,
    overrides.defaultPhaseTimeoutMs ?? DEFAULT_PHASE_TIMEOUT_MS,
  );
  const runOnSignals = bool()(`${prefix}runOnSignals`, overrides.runOnSignals ?? true);
  const phasesOverrides = overrides.phases ?? {};
  if (typeof phasesOverrides !== "object" || phasesOverrides === null)
    throw new ConfigError(`${prefix}phases`, phasesOverrides, "an object of phase overrides");
  const defined = builtInPhases(defaultPhaseTimeoutMs);
  const builtIn = new Map(defined.map((p) => [p.name, p]));
  const phases: PhaseDefinition[] = defined.map((p) =>
    mergePhase(`${prefix}phases.${p.name}`, p, phasesOverrides[p.name]),
  );
  for (const [name, o] of Object.entries(phasesOverrides)) {
    if (builtIn.has(name)) continue;
    const key = `${prefix}phases.${name}`;
    if (!PHASE_NAME.test(name))
      throw new ConfigError(key, name, "a phase name of letters, digits, '-', '_' or '.'");
    const fresh: PhaseDefinition = {
      name,
      dependsOn: [],
      timeoutMs: defaultPhaseTimeoutMs,
      recover: true,
      enabled: true,
    };
    phases.push(mergePhase(key, fresh, o));
  }
  const ordered = orderPhases(phases);
  if (!ordered.ok) throw orderError(prefix, ordered.problem);
  return Object.freeze({
    defaultPhaseTimeoutMs,
    runOnSignals,
    phases: Object.freeze(ordered.order),
  });
}

function mergePhase(
  key: string,
  base: PhaseDefinition,
  o: PhaseOverride | undefined,
): PhaseDefinition {
  if (o === undefined) return base;
  if (typeof o !== "object" || o === null)
    throw new ConfigError(key, o, "an object with timeoutMs, recover, enabled or dependsOn");
  rejectUnknownKeys(`${key}.`, o, PHASE_KEYS);
  const settings: PhaseSettings = {
    timeoutMs: positiveMs(`${key}.timeoutMs`, o.timeoutMs ?? base.timeoutMs),
    recover: bool()(`${key}.recover`, o.recover ?? base.recover),
    enabled: bool()(`${key}.enabled`, o.enabled ?? base.enabled),
  };
  const dependsOn = o.dependsOn ?? base.dependsOn;
  if (!Array.isArray(dependsOn) || dependsOn.some((d) => typeof d !== "string" || d === ""))
    throw new ConfigError(`${key}.dependsOn`, dependsOn, "an array of phase names");
  return Object.freeze({ name: base.name, dependsOn: Object.freeze([...dependsOn]), ...settings });
}

function rejectUnknownKeys(prefix: string, o: object, known: readonly string[]): void {
  for (const k of Object.keys(o))
    if (!known.includes(k))
      throw new ConfigError(
        `${prefix}${k}`,
        (o as Record<string, unknown>)[k],
        `a known setting (${known.join(", ")})`,
      );
}

function orderError(prefix: string, problem: PhaseOrderProblem): ConfigError {
  const key = `${prefix}phases.${problem.phase}`;
  switch (problem.type) {
    case "duplicate-phase":
      return new ConfigError(key, problem.phase, "a unique phase name");
    case "unknown-dependency":
      return new ConfigError(`${key}.dependsOn`, problem.dependency, "names of defined phases");
    case "cycle":
      return new ConfigError(
        `${key}.dependsOn`,
        problem.cycle.join(" -> "),
        "dependencies without a cycle",
      );
  }
}
