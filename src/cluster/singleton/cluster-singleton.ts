/**
 * ClusterSingleton: runs exactly one instance of an actor in the cluster, on the oldest
 * Up member (with a role, if given), and a proxy on every node that finds it.
 *
 * Each node runs a manager actor (`/system/singletonManager-<name>`) that feeds the
 * sans-IO SingletonManagerMachine (core/singleton) with cluster state, messages from the
 * other managers, timers, lease results and the instance's termination, and performs its
 * outputs: start/stop the instance (a child named "singleton"), send to other managers
 * (through remoting; lost messages are retried by the machine), timers, lease. Proxies
 * (`/system/singletonProxy-<name>-<n>`) feed the SingletonProxyMachine: identify the
 * manager on the oldest node, buffer (bounded) until found, deliver in order.
 *
 * With coordinated shutdown, the manager delays the `cluster-exiting` phase until it has
 * handed the instance over (or the phase times out), so a leaving oldest member is not
 * removed while its instance still runs.
 */
import type { ActorContext } from "../../actor/actor-context.js";
import type { ActorRef } from "../../actor/actor-ref.js";
import { PoisonPill } from "../../actor/actor-ref.js";
import type { ActorSystem } from "../../actor/actor-system.js";
import { type Behavior, Behaviors } from "../../actor/behavior.js";
import { ShardkitError } from "../../base/errors.js";
import type { Member } from "../../core/membership/member.js";
import {
  parseUniqueAddress,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../core/membership/unique-address.js";
import { SingletonManagerMachine } from "../../core/singleton/singleton-manager.js";
import type {
  SingletonManagerInput,
  SingletonManagerOutput,
} from "../../core/singleton/singleton-manager-types.js";
import {
  SINGLETON_MANAGER_MESSAGE_TYPES,
  type SingletonManagerMessage,
} from "../../core/singleton/singleton-messages.js";
import {
  SingletonProxyMachine,
  type SingletonProxyOutput,
} from "../../core/singleton/singleton-proxy.js";
import type {
  SingletonManagerSettings,
  SingletonProxySettings,
} from "../../core/singleton/singleton-settings.js";
import type { Lease } from "../../ports/lease.js";
import type { Cluster } from "../membership/cluster.js";
import type { Remoting } from "../remoting/remoting.js";
import type { CoordinatedShutdown } from "../shutdown/coordinated-shutdown.js";

/** What a singleton needs from its node (a ClusterNode has all of it). */
export interface SingletonHost {
  readonly system: ActorSystem;
  readonly remoting: Remoting;
  readonly cluster: Cluster;
  readonly coordinatedShutdown?: CoordinatedShutdown;
}

export interface ClusterSingletonOptions<M> {
  /** Unique per singleton in the cluster; part of actor names. */
  readonly name: string;
  readonly behavior: Behavior<M>;
  /** Run only on members with this role (the oldest of them). */
  readonly role?: string;
  /** Sent to the instance to stop it at hand-over (default PoisonPill). */
  readonly stopMessage?: M;
  readonly settings?: Partial<SingletonManagerSettings>;
  readonly proxySettings?: Partial<SingletonProxySettings>;
  /** Acquired before the instance starts; losing it stops the instance. */
  readonly lease?: Lease;
}

/** Internal messages; the `sk` tag keeps them apart from user messages to a proxy. */
type ManagerMsg =
  | { readonly sk: "singleton"; readonly t: "members" }
  | {
      readonly sk: "singleton";
      readonly t: "mgr";
      readonly type: string;
      readonly from: string;
      /**
       * The incarnation it is meant for (unique address). Remoting addresses a node by
       * host and port, so a new incarnation on the same port would otherwise take a
       * HandOverToMe meant for its removed predecessor and end its manager for good.
       */
      readonly to?: string;
      readonly wasOldest?: boolean;
    }
  | { readonly sk: "singleton"; readonly t: "timer"; readonly key: string }
  | { readonly sk: "singleton"; readonly t: "instance-terminated" }
  | { readonly sk: "singleton"; readonly t: "lease"; readonly ok: boolean }
  | { readonly sk: "singleton"; readonly t: "lease-lost" }
  | { readonly sk: "singleton"; readonly t: "self-downed" }
  | { readonly sk: "singleton"; readonly t: "self-removed" }
  | { readonly sk: "singleton"; readonly t: "identify"; readonly replyTo: ActorRef<ProxyMsg> };

type ProxyMsg =
  | { readonly sk: "singleton"; readonly t: "members" }
  | { readonly sk: "singleton"; readonly t: "timer"; readonly key: string }
  | {
      readonly sk: "singleton";
      readonly t: "identified";
      readonly node: string;
      readonly instance: ActorRef<unknown> | null;
    }
  | { readonly sk: "singleton"; readonly t: "instance-gone"; readonly node: string };

const key = uniqueAddressToString;

function isInternal(m: unknown): m is { sk: "singleton"; t: string } {
  return typeof m === "object" && m !== null && (m as { sk?: unknown }).sk === "singleton";
}

/** Thrown when a singleton name is used twice on one node. */
export class SingletonNameTakenError extends ShardkitError {
  constructor(name: string) {
    super("SINGLETON_NAME_TAKEN", `a cluster singleton named "${name}" already runs on this node`, {
      name,
    });
  }
}

export const ClusterSingleton = {
  /**
   * Starts the singleton manager on this node (do it on every node that may host the
   * singleton) and returns a proxy ref that reaches the single instance from here.
   */
  init<M>(host: SingletonHost, options: ClusterSingletonOptions<M>): ActorRef<M> {
    const managerName = `singletonManager-${options.name}`;
    const guardian = host.system.core.systemGuardian;
    if (guardian.child(managerName) !== undefined) throw new SingletonNameTakenError(options.name);
    guardian.spawnChild(managerBehavior(host, options), managerName, undefined);
    return ClusterSingleton.proxy<M>(host, options.name, options.role, options.proxySettings);
  },

  /** A ref that delivers to the singleton `name` wherever it runs (buffering meanwhile). */
  proxy<M>(
    host: SingletonHost,
    name: string,
    role?: string,
    settings?: Partial<SingletonProxySettings>,
  ): ActorRef<M> {
    const guardian = host.system.core.systemGuardian;
    return guardian.spawnChild(
      proxyBehavior(host, name, role, settings),
      undefined,
      undefined,
    ) as unknown as ActorRef<M>;
  },
};

function managerBehavior<M>(
  host: SingletonHost,
  options: ClusterSingletonOptions<M>,
): Behavior<ManagerMsg> {
  return Behaviors.setup<ManagerMsg>((ctx) => {
    const { cluster, remoting } = host;
    const machine = new SingletonManagerMachine<unknown>({
      self: cluster.self,
      role: options.role,
      useLease: options.lease !== undefined,
      stopMessage: options.stopMessage ?? PoisonPill,
      settings: { removalMarginMs: removalMarginOf(cluster), ...options.settings },
    });
    let instance: ActorRef<M> | undefined;
    /** Proxies that identified while no instance ran here (by path; bounded). */
    const askedBeforeStart = new Map<string, ActorRef<ProxyMsg>>();
    let done = false;
    const doneWaiters: (() => void)[] = [];
    const selfKey = key(cluster.self);
    const managerPath = `/system/singletonManager-${options.name}`;
    const remoteManager = (to: UniqueAddress) =>
      remoting.actorRefFor<ManagerMsg>(
        `${to.address.system}@${to.address.host}:${to.address.port}`,
        managerPath,
      );

    const perform = (outputs: readonly SingletonManagerOutput<unknown>[]) => {
      for (const o of outputs) {
        switch (o.type) {
          case "start-instance":
            instance = ctx.spawn(options.behavior, "singleton");
            ctx.watchWith(instance as ActorRef<never>, {
              sk: "singleton",
              t: "instance-terminated",
            });
            ctx.log.info("singleton instance started", { singleton: options.name });
            // Proxies that asked while there was none learn it now, not at their next
            // identification tick (a new shard coordinator waits for the regions).
            for (const replyTo of askedBeforeStart.values())
              replyTo.tell({
                sk: "singleton",
                t: "identified",
                node: selfKey,
                instance: instance as ActorRef<unknown>,
              });
            askedBeforeStart.clear();
            break;
          case "stop-instance":
            (instance as ActorRef<unknown> | undefined)?.tell(o.stopMessage);
            break;
          case "send":
            remoteManager(o.to).tell({
              sk: "singleton",
              t: "mgr",
              type: o.message.type,
              from: selfKey,
              to: key(o.to),
              wasOldest: o.message.type === "hand-over-done" && o.message.wasOldest === true,
            });
            break;
          case "start-timer":
          case "cancel-timer":
            performTimer(ctx as ActorContext<unknown>, o);
            break;
          case "acquire-lease":
            options.lease
              ?.acquire(() => ctx.self.tell({ sk: "singleton", t: "lease-lost" }))
              .then(
                (ok) => ctx.self.tell({ sk: "singleton", t: "lease", ok }),
                () => ctx.self.tell({ sk: "singleton", t: "lease", ok: false }),
              );
            break;
          case "release-lease":
            void options.lease?.release().catch(() => false);
            break;
          case "log":
            ctx.log[o.level](o.text, { singleton: options.name });
            break;
          case "stuck-error":
            ctx.log.error(o.error.message, { singleton: options.name, code: o.error.code });
            break;
          case "done":
            done = true;
            askedBeforeStart.clear();
            for (const w of doneWaiters.splice(0)) w();
            break;
        }
      }
    };
    const feed = (input: SingletonManagerInput) => perform(machine.handle(input));
    const feedMembers = () =>
      feed({ type: "members", oldestFirst: cluster.state.members as Member[] });

    const sub = cluster.subscribe((e) => {
      if ("member" in e && key(e.member.uniqueAddress) === selfKey) {
        if (e.type === "member-downed") ctx.self.tell({ sk: "singleton", t: "self-downed" });
        if (e.type === "member-removed") ctx.self.tell({ sk: "singleton", t: "self-removed" });
      }
      ctx.self.tell({ sk: "singleton", t: "members" });
    });
    cluster.registerOnMemberRemoved(() => ctx.self.tell({ sk: "singleton", t: "self-removed" }));
    const exitingTask = host.coordinatedShutdown?.addTask(
      "cluster-exiting",
      `singleton-${options.name}-hand-over`,
      () => (done ? undefined : new Promise<void>((resolve) => doneWaiters.push(resolve))),
    );
    feedMembers();

    return Behaviors.receive<ManagerMsg>(
      (_ctx, m) => {
        switch (m.t) {
          case "members":
            feedMembers();
            return;
          case "mgr": {
            if (!(SINGLETON_MANAGER_MESSAGE_TYPES as readonly string[]).includes(m.type)) return;
            if (m.to !== undefined && m.to !== selfKey) return; // for an earlier incarnation
            let from: UniqueAddress;
            try {
              from = parseUniqueAddress(m.from);
            } catch {
              return;
            }
            const message = (
              m.type === "hand-over-done"
                ? { type: m.type, wasOldest: m.wasOldest === true }
                : { type: m.type }
            ) as SingletonManagerMessage;
            feed({ ...message, from });
            return;
          }
          case "timer":
            feed({ type: "timer", key: m.key });
            return;
          case "instance-terminated":
            instance = undefined;
            feed({ type: "instance-terminated" });
            return;
          case "lease":
            feed({ type: "lease-acquired", ok: m.ok });
            return;
          case "lease-lost":
            feed({ type: "lease-lost" });
            return;
          case "self-downed":
            feed({ type: "self-downed" });
            return;
          case "self-removed":
            feed({ type: "self-removed" });
            return;
          case "identify":
            m.replyTo.tell({
              sk: "singleton",
              t: "identified",
              node: selfKey,
              instance: (instance as ActorRef<unknown>) ?? null,
            });
            if (instance === undefined && !done && askedBeforeStart.size < IDENTIFY_WAITERS_MAX)
              askedBeforeStart.set(m.replyTo.path.toString(), m.replyTo);
            return;
        }
      },
      (_ctx, signal) => {
        if (signal.type === "PostStop") {
          sub.dispose();
          exitingTask?.dispose();
          for (const w of doneWaiters.splice(0)) w();
        }
        return undefined;
      },
    );
  }) as Behavior<ManagerMsg>;
}

/**
 * Bound of the proxies a manager without an instance remembers, to tell them at once
 * when its instance starts (one proxy per member and singleton; more fall back to their
 * identification ticks).
 */
const IDENTIFY_WAITERS_MAX = 10_000;

/**
 * How long after a downed member's removal its singleton may be taken over: the
 * cluster's downRemovalMarginMs, or else the split brain resolver's stableAfterMs — the
 * downed side decides to stop within about that time after the other side does (as
 * Akka's down-removal-margin defaults to stable-after).
 */
function removalMarginOf(cluster: Cluster): number {
  return cluster.settings.downRemovalMarginMs > 0
    ? cluster.settings.downRemovalMarginMs
    : cluster.sbrSettings.stableAfterMs;
}

/** Timer outputs of both machines: keyed one-shot timers that message the actor itself. */
function performTimer(
  ctx: ActorContext<unknown>,
  o:
    | { readonly type: "start-timer"; readonly key: string; readonly delayMs: number }
    | { readonly type: "cancel-timer"; readonly key: string },
): void {
  if (o.type === "cancel-timer") ctx.timers.cancel(o.key);
  else ctx.timers.startSingleTimer(o.key, { sk: "singleton", t: "timer", key: o.key }, o.delayMs);
}

function proxyBehavior(
  host: SingletonHost,
  name: string,
  role: string | undefined,
  settings: Partial<SingletonProxySettings> | undefined,
): Behavior<unknown> {
  return Behaviors.setup<unknown>((ctx: ActorContext<unknown>) => {
    const { cluster, remoting, system } = host;
    const machine = new SingletonProxyMachine<unknown>({ role, settings });
    const instances = new Map<string, ActorRef<unknown>>();
    const managerPath = `/system/singletonManager-${name}`;

    const perform = (outputs: readonly SingletonProxyOutput<unknown>[]) => {
      for (const o of outputs) {
        switch (o.type) {
          case "identify": {
            const a = o.to.address;
            remoting
              .actorRefFor<ManagerMsg>(`${a.system}@${a.host}:${a.port}`, managerPath)
              .tell({ sk: "singleton", t: "identify", replyTo: ctx.self as ActorRef<ProxyMsg> });
            break;
          }
          case "deliver": {
            const target = instances.get(key(o.to));
            if (target !== undefined) target.tell(o.message);
            else system.core.deadLetter(o.message, ctx.self.path.toString(), "stopped");
            break;
          }
          case "dead-letter":
            system.core.deadLetter(
              o.message,
              ctx.self.path.toString(),
              o.reason === "buffer-overflow" ? "buffer-overflow" : "stopped",
            );
            break;
          case "start-timer":
          case "cancel-timer":
            performTimer(ctx as ActorContext<unknown>, o);
            break;
          case "log":
            ctx.log[o.level](o.text, { singleton: name });
            break;
        }
      }
    };
    const feedMembers = () =>
      perform(machine.handle({ type: "members", oldestFirst: cluster.state.members as Member[] }));
    const sub = cluster.subscribe(() => ctx.self.tell({ sk: "singleton", t: "members" }));
    feedMembers();

    return Behaviors.receive<unknown>(
      (_ctx, m) => {
        if (!isInternal(m)) {
          perform(machine.handle({ type: "send", message: m }));
          return;
        }
        const msg = m as ProxyMsg;
        switch (msg.t) {
          case "members":
            feedMembers();
            return;
          case "timer":
            perform(machine.handle({ type: "timer", key: msg.key }));
            return;
          case "identified": {
            let from: UniqueAddress;
            try {
              from = parseUniqueAddress(msg.node);
            } catch {
              return;
            }
            if (msg.instance !== null) {
              instances.set(msg.node, msg.instance);
              ctx.watchWith(msg.instance as ActorRef<never>, {
                sk: "singleton",
                t: "instance-gone",
                node: msg.node,
              });
            }
            perform(
              machine.handle({ type: "identify-result", from, found: msg.instance !== null }),
            );
            return;
          }
          case "instance-gone": {
            instances.delete(msg.node);
            let at: UniqueAddress;
            try {
              at = parseUniqueAddress(msg.node);
            } catch {
              return;
            }
            perform(machine.handle({ type: "singleton-terminated", at }));
            return;
          }
        }
      },
      (_ctx, signal) => {
        if (signal.type === "PostStop") {
          sub.dispose();
          perform(machine.handle({ type: "stop" }));
        }
        return undefined;
      },
    );
  });
}
