/**
 * Registration of a region (or proxy) with the coordinator singleton. The region knows at
 * most one coordinator incarnation at a time (the singleton's current location, fed by
 * the driver) and is registered only once that incarnation acknowledged. Attempts are
 * spaced by a backoff from registrationRetryMinMs doubling up to retryIntervalMs: a fresh
 * coordinator is found fast, a missing one is not flooded.
 *
 * A region that stays unregistered warns every warnIntervalMs (first after warnIntervalMs)
 * with the likely causes (scenario S16, docs/scenarios.md): sharding not started on the
 * coordinator's node (then no coordinator is found at all: its singleton runs only where
 * the type is started), the role of this node, no cluster joined. A region that was
 * registered before and lost its coordinator says so instead (a failover, not a
 * misconfiguration). Time is an input.
 */
import { type RegionSettings, registrationDelayMs } from "./region-settings.js";
import type { CoordinatorRef } from "./region-types.js";

/** Facts a registration warning mentions. */
export interface RegistrationContext {
  readonly typeName: string;
  readonly role: string | undefined;
  /** The role of the coordinator singleton's members (default: `role`). */
  readonly coordinatorRole?: string | undefined;
  readonly proxy: boolean;
  readonly bufferedMessages: number;
}

/** The registration state of one region. */
export class RegionRegistration {
  private current: CoordinatorRef | undefined;
  private acked = false;
  private attempt = 0;
  private everRegistered = false;
  private unregisteredSinceMs = 0;
  private lastWarnMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly settings: Readonly<RegionSettings>) {}

  /** The coordinator incarnation the region registers (or is registered) with. */
  get coordinator(): CoordinatorRef | undefined {
    return this.current;
  }

  /** True once `coordinator` acknowledged the registration. */
  get registered(): boolean {
    return this.acked;
  }

  /** Registration begins (the region starts) at `nowMs`. */
  begin(nowMs: number): void {
    this.unregisteredSinceMs = nowMs;
    this.lastWarnMs = Number.NEGATIVE_INFINITY;
  }

  /** The singleton moved; false when `coordinator` is the one already known. */
  change(coordinator: CoordinatorRef | undefined, nowMs: number): boolean {
    if (coordinator === this.current) return false;
    this.current = coordinator;
    this.attempt = 0;
    if (this.acked) {
      this.acked = false;
      this.unregisteredSinceMs = nowMs;
      this.lastWarnMs = Number.NEGATIVE_INFINITY;
    }
    return true;
  }

  /** RegisterAck from `from`; true when it registers the region (now, not before). */
  ack(from: CoordinatorRef): boolean {
    if (this.acked || from !== this.current) return false;
    this.acked = true;
    this.everRegistered = true;
    return true;
  }

  /** Wait before the next attempt; each call counts one attempt. */
  nextDelayMs(): number {
    return registrationDelayMs(this.settings, this.attempt++);
  }

  /** A warning to log now (rate-limited), or undefined. */
  warning(nowMs: number, ctx: RegistrationContext): string | undefined {
    if (this.acked) return undefined;
    const interval = this.settings.warnIntervalMs;
    if (nowMs - this.unregisteredSinceMs < interval || nowMs - this.lastWarnMs < interval)
      return undefined;
    this.lastWarnMs = nowMs;
    const forMs = Math.round(nowMs - this.unregisteredSinceMs);
    return warningText(this.current, forMs, this.everRegistered, ctx);
  }
}

function warningText(
  coordinator: CoordinatorRef | undefined,
  forMs: number,
  everRegistered: boolean,
  ctx: RegistrationContext,
): string {
  const what = ctx.proxy ? "proxy" : "region";
  const head =
    coordinator === undefined
      ? `${what} of "${ctx.typeName}" has no coordinator for ${forMs} ms`
      : `${what} of "${ctx.typeName}" is not registered with coordinator ${coordinator} after ${forMs} ms`;
  const buffered = `; ${ctx.bufferedMessages} message(s) buffered`;
  if (everRegistered)
    return `${head} since the previous coordinator went away (failover in progress?)${buffered}`;
  const coordinatorRole = ctx.coordinatorRole ?? ctx.role;
  const where =
    coordinatorRole === undefined ? "any member" : `members with role "${coordinatorRole}"`;
  const oldest = coordinatorRole === undefined ? "member" : `member with role "${coordinatorRole}"`;
  const causes =
    coordinator === undefined
      ? [
          "this node has not joined a cluster (seed nodes configured and reachable?)",
          `no member that may run the coordinator is up (it runs on ${where})`,
          `sharding for "${ctx.typeName}" is not started on the oldest ${oldest}, ` +
            "where the coordinator runs",
        ]
      : [
          `sharding for "${ctx.typeName}" is not started on the coordinator's node`,
          ...(ctx.role === undefined || ctx.proxy
            ? []
            : [
                `this node lacks the role "${ctx.role}" (regions register only there; ` +
                  "start a proxy on other nodes)",
              ]),
          "this node is not up yet (joining or weakly-up)",
        ];
  return `${head}${buffered}; likely causes: ${causes.join("; ")}`;
}
