/**
 * Address of an actor system on the network: `protocol://system@host:port`.
 *
 * Ordering (docs/cluster.md: the leader is "the first node in sorted order"): by host (UTF-16
 * code unit order), then port (numeric, so 9000 < 10000). Protocol and system are the
 * same for every node of one cluster, so they only break ties that cannot occur inside a
 * cluster; shardkit still compares them last so that the order is total and consistent
 * with equality (Pekko treats such addresses as equal). Leader choice, member ordering
 * and every sorted collection in the membership model rely on this order.
 */

import { compareStrings } from "../../base/compare.js";
import { InvalidAddressError } from "../../base/errors.js";

/** Network address of an actor system. Plain immutable data. */
export interface Address {
  /** Transport protocol name, e.g. "shardkit". */
  readonly protocol: string;
  /** Actor system (cluster) name. */
  readonly system: string;
  /** Host name or IP literal. */
  readonly host: string;
  /** TCP port, 0..65535. */
  readonly port: number;
}

export { InvalidAddressError };

const ADDRESS_RE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^@/]+)@(.+):(\d{1,5})$/;
const PORT_MAX = 65_535;

/** A frozen Address; throws InvalidAddressError on an empty part or bad port. */
export function addressOf(protocol: string, system: string, host: string, port: number): Address {
  const text = `${protocol}://${system}@${host}:${port}`;
  if (protocol === "" || system === "" || host === "")
    throw new InvalidAddressError(text, "protocol, system and host must be non-empty");
  if (!Number.isInteger(port) || port < 0 || port > PORT_MAX)
    throw new InvalidAddressError(text, `port must be an integer in [0, ${PORT_MAX}]`);
  return Object.freeze({ protocol, system, host, port });
}

/** The canonical string form `protocol://system@host:port`. */
export function addressToString(a: Address): string {
  return `${a.protocol}://${a.system}@${a.host}:${a.port}`;
}

/** Parses `protocol://system@host:port` (the inverse of addressToString). */
export function parseAddress(text: string): Address {
  const m = ADDRESS_RE.exec(text);
  if (!m) throw new InvalidAddressError(text, "expected protocol://system@host:port");
  return addressOf(m[1] as string, m[2] as string, m[3] as string, Number(m[4]));
}

/** Address order: host, then port (numeric), then protocol and system as final ties. */
export function compareAddresses(a: Address, b: Address): number {
  return (
    compareStrings(a.host, b.host) ||
    a.port - b.port ||
    compareStrings(a.protocol, b.protocol) ||
    compareStrings(a.system, b.system)
  );
}

/** Equality of all four parts. */
export function addressEquals(a: Address, b: Address): boolean {
  return (
    a.host === b.host && a.port === b.port && a.protocol === b.protocol && a.system === b.system
  );
}
