/**
 * RemotingSettings: every bound, interval and timeout of remoting, with defaults and
 * validation (ConfigError names the key, the value and the allowed range).
 */
import { ConfigError } from "../../base/errors.js";
import {
  bool,
  int,
  ms,
  num,
  type Rule,
  type RulesOf,
  resolveSettings,
  str,
} from "../../base/settings.js";

export interface RemotingSettings {
  /** Interface to listen on. */
  readonly host: string;
  /** Port to listen on; 0 = any free port. */
  readonly port: number;
  /** Host name peers use to reach this node (defaults to `host`). */
  readonly canonicalHost: string;
  /** Largest frame body accepted or sent, in bytes. */
  readonly frameSizeMaxBytes: number;
  /** User messages queued per peer while not connected or backpressured; overflow -> dead letters. */
  readonly outboundQueueMax: number;
  /** Control frames (heartbeats, gossip) queued per peer; overflow drops the oldest. */
  readonly controlQueueMax: number;
  /** Unacknowledged system messages per peer; overflow quarantines the peer. */
  readonly systemMessageBufferMax: number;
  /** User frame bytes written per flush before giving control traffic another turn. */
  readonly flushBytesMax: number;
  readonly connectTimeoutMs: number;
  /** A connection that has not completed the handshake by then is closed. */
  readonly handshakeTimeoutMs: number;
  /**
   * Largest frame body accepted before the handshake completed, in bytes (a handshake
   * frame is under 700 bytes): what an unauthenticated connection can make us buffer.
   */
  readonly handshakeFrameSizeMaxBytes: number;
  /** Inbound connections that have not completed the handshake, in total; more are closed at once. */
  readonly unauthenticatedConnectionsMax: number;
  /** Inbound connections not yet authenticated from one source address; more are closed at once. */
  readonly unauthenticatedConnectionsPerHostMax: number;
  readonly reconnectBackoffMinMs: number;
  readonly reconnectBackoffMaxMs: number;
  readonly reconnectBackoffRandomFactor: number;
  /** Unacknowledged system messages are resent this often. */
  readonly systemMessageResendIntervalMs: number;
  /** A peer that leaves a system message unacknowledged this long is quarantined. */
  readonly giveUpSystemMessageAfterMs: number;
  /** How long a quarantined incarnation is remembered. */
  readonly quarantineRetentionMs: number;
  /** Remote death watch: heartbeat interval to watched nodes. */
  readonly watchHeartbeatIntervalMs: number;
  /** Remote death watch: phi threshold and acceptable pause of its failure detector. */
  readonly watchFailureDetectorThreshold: number;
  readonly watchAcceptableHeartbeatPauseMs: number;
  /** Inbound recipient paths resolved to local actors, cached (cleared when full). */
  readonly recipientCacheMax: number;
  /** Logs about bad input per interval (everything is counted). */
  readonly badInputLogBurstMax: number;
  readonly badInputLogIntervalMs: number;
  /**
   * Optional shared secret(s); peers must prove they know one (HMAC over both sides'
   * nonces), it never crosses the wire. A list accepts every secret in it and proves with
   * the first: rotate by rolling restarts (docs/security.md).
   */
  readonly secret: string | readonly string[] | undefined;
  /**
   * Allows binding a non-loopback address with neither a secret nor TLS: anyone who can
   * reach the port can then join and send messages (docs/security.md).
   */
  readonly insecure: boolean;
}

export const defaultRemotingSettings: RemotingSettings = Object.freeze({
  host: "127.0.0.1",
  port: 2552,
  canonicalHost: "",
  frameSizeMaxBytes: 262_144,
  outboundQueueMax: 100_000,
  controlQueueMax: 10_000,
  systemMessageBufferMax: 20_000,
  flushBytesMax: 1_048_576,
  connectTimeoutMs: 5_000,
  handshakeTimeoutMs: 10_000,
  handshakeFrameSizeMaxBytes: 4_096,
  unauthenticatedConnectionsMax: 256,
  unauthenticatedConnectionsPerHostMax: 32,
  reconnectBackoffMinMs: 100,
  reconnectBackoffMaxMs: 5_000,
  reconnectBackoffRandomFactor: 0.2,
  systemMessageResendIntervalMs: 1_000,
  giveUpSystemMessageAfterMs: 21_600_000,
  quarantineRetentionMs: 432_000_000,
  watchHeartbeatIntervalMs: 1_000,
  watchFailureDetectorThreshold: 10,
  watchAcceptableHeartbeatPauseMs: 10_000,
  recipientCacheMax: 100_000,
  badInputLogBurstMax: 10,
  badInputLogIntervalMs: 10_000,
  secret: undefined,
  insecure: false,
});

const SECRET_CHARS_MIN = 16;
const SECRETS_MAX = 8;

const optionalSecret: Rule<string | readonly string[] | undefined> = (key, value) => {
  if (value === undefined) return undefined;
  const allowed = `a string of at least ${SECRET_CHARS_MIN} characters, a list of 1..${SECRETS_MAX} such strings, or unset`;
  const ok = (v: unknown) => typeof v === "string" && v.length >= SECRET_CHARS_MIN;
  if (typeof value === "string") {
    if (!ok(value)) throw new ConfigError(key, "(redacted)", allowed);
    return value;
  }
  if (!Array.isArray(value) || value.length < 1 || value.length > SECRETS_MAX || !value.every(ok))
    throw new ConfigError(key, "(redacted)", allowed);
  return Object.freeze([...(value as string[])]);
};

/** The accepted secrets, the one this node proves with first; empty without a secret. */
export function remotingSecrets(settings: Pick<RemotingSettings, "secret">): readonly string[] {
  const s = settings.secret;
  return s === undefined ? [] : typeof s === "string" ? [s] : s;
}

const anyString: Rule<string> = (key, value) => {
  if (typeof value !== "string") throw new ConfigError(key, value, "a string");
  return value;
};

const rules: RulesOf<RemotingSettings> = {
  host: str(),
  port: int(0, 65_535),
  canonicalHost: anyString,
  frameSizeMaxBytes: int(1024, 64 * 1024 * 1024),
  outboundQueueMax: int(1, 100_000_000),
  controlQueueMax: int(1, 10_000_000),
  systemMessageBufferMax: int(1, 10_000_000),
  flushBytesMax: int(1024, 1 << 30),
  connectTimeoutMs: ms(1),
  handshakeTimeoutMs: ms(1),
  handshakeFrameSizeMaxBytes: int(1024, 65_536),
  unauthenticatedConnectionsMax: int(1, 1_000_000),
  unauthenticatedConnectionsPerHostMax: int(1, 1_000_000),
  reconnectBackoffMinMs: ms(1),
  reconnectBackoffMaxMs: ms(1),
  reconnectBackoffRandomFactor: num(0, 1),
  systemMessageResendIntervalMs: ms(1),
  giveUpSystemMessageAfterMs: ms(1),
  quarantineRetentionMs: ms(1),
  watchHeartbeatIntervalMs: ms(1),
  watchFailureDetectorThreshold: num(0.1, 1000),
  watchAcceptableHeartbeatPauseMs: ms(0),
  recipientCacheMax: int(1, 100_000_000),
  badInputLogBurstMax: int(0),
  badInputLogIntervalMs: ms(1),
  secret: optionalSecret,
  insecure: bool(),
};

export function remotingSettings(
  overrides?: Partial<RemotingSettings>,
): Readonly<RemotingSettings> {
  const s = resolveSettings("remoting.", defaultRemotingSettings, rules, overrides);
  if (s.reconnectBackoffMaxMs < s.reconnectBackoffMinMs)
    throw new ConfigError(
      "remoting.reconnectBackoffMaxMs",
      s.reconnectBackoffMaxMs,
      `>= remoting.reconnectBackoffMinMs (${s.reconnectBackoffMinMs})`,
    );
  return s.canonicalHost === "" ? Object.freeze({ ...s, canonicalHost: s.host }) : s;
}
