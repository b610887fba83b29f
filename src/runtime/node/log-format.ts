/**
 * Formatting of log records for the console logger: one line per record, either
 * human-readable text or a JSON object.
 *
 * Invariants: a formatted record never contains a raw newline (messages are escaped,
 * JSON escapes by itself), and formatting never throws — unserializable values
 * (cycles, bigint, errors) get a printable stand-in instead.
 */
import type { LogFields, LogLevel } from "../../ports/logger.js";

/** Output format of the console logger. */
export type LogFormat = "text" | "json";

/** The data of one log record, before formatting. */
export interface LogRecord {
  readonly timeMs: number;
  readonly level: Exclude<LogLevel, "off">;
  readonly message: string;
  readonly context: LogFields;
  readonly fields: LogFields | undefined;
}

/** Formats a record as one line (without the trailing newline). */
export function formatRecord(record: LogRecord, format: LogFormat): string {
  return format === "json" ? formatJson(record) : formatText(record);
}

/** `2026-01-02T03:04:05.678Z INFO [node=a] message key=value` */
export function formatText(record: LogRecord): string {
  const parts = [new Date(record.timeMs).toISOString(), record.level.toUpperCase()];
  const context = formatPairs(record.context);
  if (context !== "") parts.push(`[${context}]`);
  parts.push(escapeNewlines(record.message));
  const fields = record.fields === undefined ? "" : formatPairs(record.fields);
  if (fields !== "") parts.push(fields);
  return parts.join(" ");
}

/** `{"time":"...","level":"info","msg":"...",...context,...fields}`; reserved keys win. */
export function formatJson(record: LogRecord): string {
  const time = new Date(record.timeMs).toISOString();
  const out: Record<string, unknown> = { time, level: record.level, msg: record.message };
  Object.assign(out, record.context, record.fields);
  out.time = time;
  out.level = record.level;
  out.msg = record.message;
  return safeJson(out);
}

function formatPairs(fields: LogFields): string {
  return Object.entries(fields)
    .map(([key, value]) => `${key}=${formatValue(value)}`)
    .join(" ");
}

/** Printable form of a field value for the text format. */
export function formatValue(value: unknown): string {
  switch (typeof value) {
    case "string":
      return formatString(value);
    case "bigint":
      return `${value}n`;
    case "object":
      if (value === null) return "null";
      if (value instanceof Error) return formatString(`${value.name}: ${value.message}`);
      return safeJson(value);
    case "function":
    case "symbol":
      return formatString(String(value));
    default:
      return String(value);
  }
}

function formatString(value: string): string {
  return /^[^\s"=\\]+$/.test(value) ? value : JSON.stringify(value);
}

function escapeNewlines(text: string): string {
  return text.replace(/\r?\n/g, "\\n");
}

/** JSON.stringify that never throws: bigint, Error and repeated objects get stand-ins. */
export function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  try {
    return JSON.stringify(value, (_key, v: unknown) => replaceValue(v, seen)) ?? "null";
  } catch {
    return JSON.stringify(String(value));
  }
}

function replaceValue(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object" || value === null) return value;
  if (seen.has(value)) return "[Circular]";
  seen.add(value);
  if (value instanceof Error) return errorJson(value);
  return value;
}

function errorJson(error: Error): Record<string, unknown> {
  const out: Record<string, unknown> = { name: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) out.code = code;
  if (error.stack !== undefined) out.stack = error.stack;
  return out;
}
