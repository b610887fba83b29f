/**
 * Canonical text for trace details and simulated log fields.
 *
 * Deterministic code produces the same values in the same insertion order, so plain
 * JSON (insertion-ordered keys) is canonical enough. This never throws: bigint, Error
 * (name and message only — stacks hold file paths) and repeated objects get stand-ins.
 */

/** The detail string for a value: strings as they are, everything else as JSON. */
export function toDetail(value: unknown): string {
  return typeof value === "string" ? value : detailJson(value);
}

/** JSON.stringify that never throws and never includes stack traces. */
export function detailJson(value: unknown): string {
  const seen = new WeakSet<object>();
  try {
    return JSON.stringify(value, (_key, v: unknown) => replaceValue(v, seen)) ?? "undefined";
  } catch {
    return String(value);
  }
}

function replaceValue(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value !== "object" || value === null) return value;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (seen.has(value)) return "[Circular]";
  seen.add(value);
  return value;
}
