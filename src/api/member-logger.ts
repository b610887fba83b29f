/**
 * The logger a ClusterNode gives its actor system: every record carries the member's
 * address (`member`, `system@host:port`, known once remoting has bound its port), and
 * the last warnings and errors are kept in a bounded ring for the dashboard
 * (docs/observability.md, "Logs"). The sink (console, pino, ...) is the runtime's logger.
 *
 * Records below the sink's threshold cost one `isEnabled` check, as before.
 */
import type { Clock } from "../ports/clock.js";
import type { LogFields, Logger, LogLevel } from "../ports/logger.js";

/** A kept warning or error. */
export interface RecentLogEntry {
  /** Monotonic ms of the node's clock. */
  readonly atMs: number;
  readonly level: "warn" | "error";
  readonly message: string;
  readonly fields: LogFields;
}

/** Bound of the ring of recent warnings and errors. */
export const RECENT_WARNINGS_MAX = 50;

/** What every logger of one node shares. */
export class MemberLogState {
  member: string | undefined = undefined;
  readonly recent: RecentLogEntry[] = [];
  constructor(readonly clock: Clock) {}

  keep(level: "warn" | "error", message: string, fields: LogFields): void {
    this.recent.push({ atMs: this.clock.now(), level, message, fields });
    if (this.recent.length > RECENT_WARNINGS_MAX) this.recent.shift();
  }
}

/** See the module comment. */
export class MemberLogger implements Logger {
  constructor(
    private readonly inner: Logger,
    private readonly state: MemberLogState,
    private readonly context: LogFields = {},
  ) {}

  debug(message: string, fields?: LogFields): void {
    if (this.inner.isEnabled("debug")) this.inner.debug(message, this.with(fields));
  }
  info(message: string, fields?: LogFields): void {
    if (this.inner.isEnabled("info")) this.inner.info(message, this.with(fields));
  }
  warn(message: string, fields?: LogFields): void {
    const f = this.with(fields);
    this.state.keep("warn", message, { ...this.context, ...f });
    if (this.inner.isEnabled("warn")) this.inner.warn(message, f);
  }
  error(message: string, fields?: LogFields): void {
    const f = this.with(fields);
    this.state.keep("error", message, { ...this.context, ...f });
    if (this.inner.isEnabled("error")) this.inner.error(message, f);
  }
  isEnabled(level: LogLevel): boolean {
    return this.inner.isEnabled(level);
  }
  child(fields: LogFields): Logger {
    return new MemberLogger(this.inner.child(fields), this.state, { ...this.context, ...fields });
  }

  private with(fields: LogFields | undefined): LogFields {
    const member = this.state.member;
    if (member === undefined) return fields ?? {};
    return fields === undefined ? { member } : { member, ...fields };
  }
}
