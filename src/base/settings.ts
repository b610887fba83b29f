/**
 * Settings validation helpers. Every component has one typed settings object with
 * written-down defaults; `resolveSettings` merges user overrides onto the defaults and
 * validates every key, throwing a ConfigError that names the key, the bad value and
 * the allowed range. Unknown keys are rejected too (a typo must not pass silently).
 */
import { ConfigError } from "./errors.js";

/** Validates one value; throws ConfigError naming `key`. */
export type Rule<T> = (key: string, value: unknown) => T;

/** An integer in [min, max]; `Infinity` is accepted when `max` is Infinity. */
export function int(min: number, max = Number.MAX_SAFE_INTEGER): Rule<number> {
  return (key, value) => {
    const ok =
      typeof value === "number" &&
      ((Number.isInteger(value) && value >= min && value <= max) ||
        (value === Number.POSITIVE_INFINITY && max === Number.POSITIVE_INFINITY));
    if (!ok) throw new ConfigError(key, value, `an integer in [${min}, ${fmt(max)}]`);
    return value as number;
  };
}

/** A finite number in [min, max]. */
export function num(min: number, max: number): Rule<number> {
  return (key, value) => {
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max)
      throw new ConfigError(key, value, `a number in [${min}, ${fmt(max)}]`);
    return value;
  };
}

/** A duration in milliseconds: a finite number >= min (default 0). */
export function ms(min = 0, max = Number.MAX_SAFE_INTEGER): Rule<number> {
  return (key, value) => {
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max)
      throw new ConfigError(key, value, `a duration in milliseconds in [${min}, ${fmt(max)}]`);
    return value;
  };
}

export function bool(): Rule<boolean> {
  return (key, value) => {
    if (typeof value !== "boolean") throw new ConfigError(key, value, "true or false");
    return value;
  };
}

export function oneOf<const T extends string>(...allowed: T[]): Rule<T> {
  return (key, value) => {
    if (typeof value !== "string" || !allowed.includes(value as T))
      throw new ConfigError(key, value, `one of ${allowed.map((a) => `"${a}"`).join(", ")}`);
    return value as T;
  };
}

export function str(pattern?: RegExp, description = "a non-empty string"): Rule<string> {
  return (key, value) => {
    if (typeof value !== "string" || value.length === 0 || (pattern && !pattern.test(value)))
      throw new ConfigError(key, value, description);
    return value;
  };
}

export type RulesOf<S> = { readonly [K in keyof S]-?: Rule<S[K]> };

/**
 * Merges `overrides` onto `defaults`, validating every resulting value with `rules`.
 * `prefix` names the component in error messages (e.g. "actor.").
 */
export function resolveSettings<S extends object>(
  prefix: string,
  defaults: S,
  rules: RulesOf<S>,
  overrides: Partial<S> | undefined,
): Readonly<S> {
  const out = { ...defaults };
  if (overrides !== undefined) {
    if (typeof overrides !== "object" || overrides === null)
      throw new ConfigError(prefix.replace(/\.$/, ""), overrides, "a settings object");
    for (const key of Object.keys(overrides)) {
      if (!(key in rules))
        throw new ConfigError(
          `${prefix}${key}`,
          (overrides as Record<string, unknown>)[key],
          `a known setting (${Object.keys(rules).join(", ")})`,
        );
      const v = (overrides as Record<string, unknown>)[key];
      if (v !== undefined) (out as Record<string, unknown>)[key] = v;
    }
  }
  for (const key of Object.keys(rules) as (keyof S & string)[]) {
    (out as Record<string, unknown>)[key] = rules[key](`${prefix}${key}`, out[key]);
  }
  return Object.freeze(out);
}

function fmt(n: number): string {
  return n === Number.MAX_SAFE_INTEGER ? "2^53-1" : String(n);
}
