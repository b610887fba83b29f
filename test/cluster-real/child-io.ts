/**
 * Child side of the JSON-lines harness (test/support/child-process.ts), shared by the
 * real-process child mains (cluster-node-main.ts, sharding-node-main.ts): print events,
 * answer commands read from stdin, describe cluster members and events the same way, so
 * the test side (cluster-node.ts) reads every child alike.
 */
import { createInterface } from "node:readline";
import type { Cluster } from "../../src/cluster/membership/index.js";
import type { ClusterEvent } from "../../src/core/membership/cluster-events.js";
import type { Member } from "../../src/core/membership/member.js";
import type { UniqueAddress } from "../../src/core/membership/unique-address.js";

/** One command line: `cmd`, the `id` to put in the reply, and arguments. */
export type Command = Readonly<Record<string, unknown>> & {
  readonly cmd: string;
  readonly id: number;
};

/** Prints one event as a JSON line on stdout (synchronous on a pipe). */
export function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

export const hostPortOf = (u: UniqueAddress): string => `${u.address.host}:${u.address.port}`;

export const memberInfo = (m: Member) => ({
  hostPort: hostPortOf(m.uniqueAddress),
  uid: m.uniqueAddress.uid,
  status: m.status,
  upNumber: m.upNumber,
});

/** The `state` reply: self, members, unreachable, leader, convergence. */
export function clusterStateReply(cluster: Cluster): Record<string, unknown> {
  const s = cluster.state;
  return {
    self: cluster.selfMember === undefined ? null : memberInfo(cluster.selfMember),
    members: s.members.map(memberInfo),
    unreachable: s.unreachable.map((m) => hostPortOf(m.uniqueAddress)),
    leader: s.leader === undefined ? null : hostPortOf(s.leader),
    convergence: s.convergence,
  };
}

function describeEvent(e: ClusterEvent): Record<string, unknown> {
  switch (e.type) {
    case "leader-changed":
      return { leader: e.leader === undefined ? null : hostPortOf(e.leader) };
    case "role-leader-changed":
      return { role: e.role, leader: e.leader === undefined ? null : hostPortOf(e.leader) };
    case "member-removed":
      return {
        member: hostPortOf(e.member.uniqueAddress),
        status: e.member.status,
        previousStatus: e.previousStatus,
      };
    default:
      return { member: hostPortOf(e.member.uniqueAddress), status: e.member.status };
  }
}

/** Prints every cluster event as `{"event":"cluster","type":...,"t":<epoch ms>,...}`. */
export function emitClusterEvents(cluster: Cluster): void {
  cluster.subscribe((e) =>
    emit({ event: "cluster", type: e.type, t: Date.now(), ...describeEvent(e) }),
  );
}

/**
 * Reads commands from stdin and prints exactly one `{"event":"reply","id":...,"ok":...}`
 * line per command (ok: false with `error` when `handle` throws or rejects). Calls
 * `onClose` when stdin closes (the test runner is gone).
 */
export function serveCommands(
  handle: (c: Command) => Promise<Record<string, unknown>>,
  onClose: () => void,
): void {
  createInterface({ input: process.stdin })
    .on("line", (line) => {
      let c: Command;
      try {
        c = JSON.parse(line) as Command;
      } catch {
        emit({ event: "reply", id: null, ok: false, error: `not JSON: ${line}` });
        return;
      }
      handle(c).then(
        (result) => emit({ event: "reply", id: c.id, ok: true, ...result }),
        (error: unknown) =>
          emit({
            event: "reply",
            id: c.id,
            ok: false,
            error: error instanceof Error ? error.message : String(error),
          }),
      );
    })
    .on("close", onClose);
}

let exiting = false;

/** Runs `work` once (later calls are ignored), then exits 0, or 1 if it failed. */
export function exitAfter(work: () => Promise<unknown>): void {
  if (exiting) return;
  exiting = true;
  work().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`exit failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
