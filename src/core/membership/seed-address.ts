/**
 * Seed-node and contact-point strings as users write them, parsed and validated before
 * anything is bound (docs/operations.md, "Joining"). Accepted forms:
 * - `host:port` and `[ipv6]:port`;
 * - `system@host:port`;
 * - `akka://system@host:port`, `pekko://...`, `akka.tcp://...`, `shardkit://...`
 *   (an address copied from an Akka/Pekko configuration).
 * The system name, when given, must be this node's: members of one cluster share it, and
 * a seed of another system would refuse the handshake. Every error is a ConfigError
 * naming the setting (e.g. `seedNodes[0]`) with a hint of the expected form.
 */
import { ConfigError } from "../../base/errors.js";

/** A parsed seed node: host (without IPv6 brackets), port, and `host:port`. */
export interface SeedAddress {
  readonly host: string;
  readonly port: number;
  /** `host:port` as the cluster and remoting key nodes by (IPv6 without brackets). */
  readonly hostPort: string;
}

const PROTOCOLS = ["akka", "akka.tcp", "akka.ssl.tcp", "pekko", "pekko.tcp", "shardkit"];
const PORT_MAX = 65_535;
const HOST_RE = /^[A-Za-z0-9._:%-]+$/;
const EXPECTED = `"host:port" (e.g. "10.0.0.5:2552"), "system@host:port" or "akka://system@host:port"`;

/**
 * Parses `value` (the setting `key`) for a node of actor system `systemName`.
 * @throws ConfigError naming `key`, with a hint of what is wrong.
 */
export function parseSeedAddress(value: unknown, key: string, systemName: string): SeedAddress {
  if (typeof value !== "string" || value.trim() === "")
    throw new ConfigError(key, value, `a non-empty string ${EXPECTED}`);
  let rest = value.trim();
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(rest);
  if (scheme !== null) {
    const protocol = (scheme[1] as string).toLowerCase();
    if (!PROTOCOLS.includes(protocol))
      throw new ConfigError(
        key,
        value,
        `${EXPECTED}; protocol "${protocol}" is not a cluster address (use one of ${PROTOCOLS.join(", ")}, or leave it out)`,
      );
    rest = rest.slice(scheme[0].length);
    if (!rest.includes("@"))
      throw new ConfigError(
        key,
        value,
        `${EXPECTED}; an address with a protocol needs the system name: "${protocol}://${systemName}@host:port"`,
      );
  }
  const slash = rest.indexOf("/");
  if (slash >= 0) {
    if (rest.slice(slash) !== "/")
      throw new ConfigError(
        key,
        value,
        `${EXPECTED}; a node address, not an actor path ("${rest.slice(slash)}")`,
      );
    rest = rest.slice(0, slash);
  }
  const at = rest.lastIndexOf("@");
  if (at >= 0) {
    const system = rest.slice(0, at);
    if (system !== systemName)
      throw new ConfigError(
        key,
        value,
        `${EXPECTED} naming this node's system "${systemName}" (it names "${system}"): every member of a cluster uses the same systemName, and a member of another system refuses the handshake`,
      );
    rest = rest.slice(at + 1);
  }
  let host: string;
  let portText: string;
  if (rest.startsWith("[")) {
    const close = rest.indexOf("]");
    if (close < 0 || rest[close + 1] !== ":")
      throw new ConfigError(key, value, `${EXPECTED}; an IPv6 host as "[::1]:2552"`);
    host = rest.slice(1, close);
    portText = rest.slice(close + 2);
  } else {
    const colon = rest.lastIndexOf(":");
    if (colon < 0)
      throw new ConfigError(
        key,
        value,
        `${EXPECTED}; no port given (seed nodes listen on their remoting port, e.g. "${rest}:2552")`,
      );
    host = rest.slice(0, colon);
    portText = rest.slice(colon + 1);
    if (host.includes(":"))
      throw new ConfigError(key, value, `${EXPECTED}; an IPv6 host in brackets: "[${host}]:port"`);
  }
  if (host === "" || !HOST_RE.test(host))
    throw new ConfigError(key, value, `${EXPECTED}; "${host}" is not a host name or IP address`);
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!Number.isInteger(port) || port < 1 || port > PORT_MAX)
    throw new ConfigError(key, value, `${EXPECTED}; port "${portText}" is not in [1, ${PORT_MAX}]`);
  return { host, port, hostPort: `${host}:${port}` };
}

/** Parses every entry of the list setting `key` (`key[0]`, `key[1]`, ...). */
export function parseSeedAddresses(
  values: unknown,
  key: string,
  systemName: string,
): SeedAddress[] {
  if (values === undefined) return [];
  if (!Array.isArray(values))
    throw new ConfigError(key, values, `an array of seed node addresses, each ${EXPECTED}`);
  return values.map((v, i) => parseSeedAddress(v, `${key}[${i}]`, systemName));
}
