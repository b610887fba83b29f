/**
 * The shard coordinator actor: the cluster singleton instance that drives a
 * CoordinatorMachine (core/coordinator). It feeds the machine with the cluster's
 * membership, the regions' commands, timers and the rebalance tick, and performs its
 * outputs. State store: "regions" recovery (no database: a new coordinator rebuilds the
 * allocation from what the regions report); events are acknowledged at once.
 */
import type { ActorRef } from "../../actor/actor-ref.js";
import { type Behavior, Behaviors } from "../../actor/behavior.js";
import type {
  CoordinatorInput,
  CoordinatorMember,
  CoordinatorOutput,
} from "../../core/coordinator/coordinator-io.js";
import { CoordinatorMachine } from "../../core/coordinator/coordinator-machine.js";
import type { CoordinatorSettings } from "../../core/coordinator/coordinator-settings.js";
import type { CoordinatorAllocationStrategy } from "../../core/coordinator/coordinator-strategy.js";
import { uniqueAddressToString } from "../../core/membership/unique-address.js";
import type { Cluster } from "../membership/cluster.js";
import type { Remoting } from "../remoting/remoting.js";
import { ActorIdRefs, actorIdOf, isShardingMsg, type ShardingMsg } from "./sharding-messages.js";

export interface CoordinatorActorOptions {
  readonly typeName: string;
  readonly cluster: Cluster;
  readonly remoting: Remoting;
  readonly strategy: CoordinatorAllocationStrategy;
  readonly role?: string;
  readonly settings?: Partial<CoordinatorSettings>;
}

type CoordMsg =
  | ShardingMsg
  | { readonly sk: "coord"; readonly t: "members" }
  | { readonly sk: "coord"; readonly t: "timer"; readonly key: string }
  | { readonly sk: "coord"; readonly t: "rebalance" }
  | { readonly sk: "coord"; readonly t: "persisted"; readonly batchId: number };

export function coordinatorBehavior(options: CoordinatorActorOptions): Behavior<CoordMsg> {
  return Behaviors.setup<CoordMsg>((ctx) => {
    const { cluster, remoting } = options;
    const selfId = actorIdOf(remoting, ctx.self as ActorRef<never>);
    const machine = new CoordinatorMachine({
      self: selfId,
      strategy: options.strategy,
      recovery: { mode: "regions" },
      settings: options.settings,
      role: options.role,
    });
    const ids = new ActorIdRefs(remoting);
    const refOf = (id: string) => ids.refOf(id);
    let knownMembers = new Set<string>();
    const perform = (outs: readonly CoordinatorOutput[]) => {
      for (const o of outs) {
        switch (o.type) {
          case "send":
            refOf(o.to)?.tell({
              sk: "sharding",
              t: "from-coordinator",
              from: selfId,
              cmd: o.message,
            });
            break;
          case "persist":
            // Regions recovery keeps no store: acknowledge on the next turn, after the
            // outputs of this step (persist-before-announce holds: announcements are
            // released only while handling `persisted`).
            ctx.self.tell({ sk: "coord", t: "persisted", batchId: o.batchId });
            break;
          case "save-snapshot":
            break;
          case "start-timer":
            ctx.timers.startSingleTimer(o.key, { sk: "coord", t: "timer", key: o.key }, o.delayMs);
            break;
          case "cancel-timer":
            ctx.timers.cancel(o.key);
            break;
          case "log":
            ctx.log[o.level](o.message, { type: options.typeName, event: o.event, ...o.fields });
            break;
        }
      }
    };
    const feed = (input: CoordinatorInput) => perform(machine.handle(input, ctx.now()));
    const feedMembers = () => {
      const st = cluster.state;
      const unreachable = new Set(
        st.unreachable.map((m) => uniqueAddressToString(m.uniqueAddress)),
      );
      const members: CoordinatorMember[] = st.members.map((m) => ({
        uniqueAddress: uniqueAddressToString(m.uniqueAddress),
        address: `${m.uniqueAddress.address.host}:${m.uniqueAddress.address.port}`,
        status: m.status,
        appVersion: m.appVersion,
        reachable: !unreachable.has(uniqueAddressToString(m.uniqueAddress)),
        roles: m.roles,
      }));
      const now = new Set(members.map((m) => m.uniqueAddress));
      const removed = [...knownMembers].filter((k) => !now.has(k));
      knownMembers = now;
      feed({ type: "membership", members });
      for (const k of removed)
        for (const region of regionsOn(machine, k)) feed({ type: "region-terminated", region });
    };
    const sub = cluster.subscribe(() => ctx.self.tell({ sk: "coord", t: "members" }));
    feedMembers();
    ctx.timers.startTimerWithFixedDelay(
      "rebalance",
      { sk: "coord", t: "rebalance" },
      machine.settings.rebalanceIntervalMs,
    );

    return Behaviors.receive<CoordMsg>(
      (_c, m) => {
        if (isShardingMsg(m)) {
          if (m.t === "to-coordinator") feed(m.cmd);
          else if (m.t === "identify-coordinator")
            m.replyTo.tell({ sk: "sharding", t: "coordinator-is", id: selfId });
          else if (m.t === "get-regions")
            m.replyTo.tell(machine.view().regions.map((r) => r.region));
          return;
        }
        switch (m.t) {
          case "members":
            feedMembers();
            return;
          case "timer":
            feed({ type: "timer", key: m.key });
            return;
          case "rebalance":
            feed({ type: "rebalance-tick" });
            return;
          case "persisted":
            feed({ type: "persisted", batchId: m.batchId });
            return;
        }
      },
      (_c, signal) => {
        if (signal.type === "PostStop") sub.dispose();
        return undefined;
      },
    );
  });
}

/** Regions registered from the member `uniqueAddress` (by the registration's member field). */
function regionsOn(machine: CoordinatorMachine, uniqueAddress: string): string[] {
  const v = machine.view();
  return v.regions.filter((r) => r.member === uniqueAddress).map((r) => r.region);
}
