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
 *
 * Shape (docs/architecture.md, "One driver shape"): each actor is a small driver class
 * around a MachineDriver (actor/machine-driver.ts) with a `performers` table (one entry
 * per machine output) and a `handlers` table (one entry per message of
 * protocol/singleton.ts); what sits between the wire and the machines is decided in
 * core/singleton/singleton-wire.ts.
 */
import type { ActorContext } from "../../actor/actor-context.js";
import type { ActorRef } from "../../actor/actor-ref.js";
import { PoisonPill } from "../../actor/actor-ref.js";
import type { ActorSystem } from "../../actor/actor-system.js";
import { type Behavior, Behaviors } from "../../actor/behavior.js";
import {
  dispatch,
  type Handlers,
  logOutput,
  MachineDriver,
  type Performers,
  timerPerformers,
} from "../../actor/machine-driver.js";
import { ShardkitError } from "../../base/errors.js";
import type { Member } from "../../core/membership/member.js";
import type { UniqueAddress } from "../../core/membership/unique-address.js";
import { uniqueAddressToString } from "../../core/membership/unique-address.js";
import { SingletonManagerMachine } from "../../core/singleton/singleton-manager.js";
import type {
  SingletonManagerInput,
  SingletonManagerOutput,
} from "../../core/singleton/singleton-manager-types.js";
import {
  type SingletonProxyInput,
  SingletonProxyMachine,
  type SingletonProxyOutput,
} from "../../core/singleton/singleton-proxy.js";
import type {
  SingletonManagerSettings,
  SingletonProxySettings,
} from "../../core/singleton/singleton-settings.js";
import {
  IdentifyWaiters,
  managerEnvelope,
  managerInputOf,
  parseNode,
} from "../../core/singleton/singleton-wire.js";
import type { Lease } from "../../ports/lease.js";
import type { ReplyTo } from "../../protocol/sharding.js";
import {
  isSingletonManagerMsg,
  isSingletonProxyMsg,
  type SingletonIdentified,
  type SingletonManagerMsg,
  type SingletonProxyMsg,
} from "../../protocol/singleton.js";
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
): Behavior<SingletonManagerMsg> {
  return Behaviors.setup<SingletonManagerMsg>((ctx) => {
    const manager = new SingletonManagerDriver(ctx, host, options);
    return Behaviors.receive<SingletonManagerMsg>(
      (_ctx, m) => manager.receive(m),
      (_ctx, signal) => {
        if (signal.type === "PostStop") manager.dispose();
        return undefined;
      },
    );
  });
}

/** The singleton machines keep no clock (time reaches them as timer inputs). */
const NO_CLOCK = (): number => 0;

const timerMessage = (key: string) => ({ type: "shardkit.singleton.timer", key }) as const;

/**
 * The driver of one node's SingletonManagerMachine: outputs through `performers`, the
 * messages of protocol/singleton.ts through `handlers`. Besides the machine it keeps the
 * instance's ref, the proxies waiting for the instance (IdentifyWaiters) and the
 * `cluster-exiting` task that waits for the machine's `done`.
 */
class SingletonManagerDriver<M> {
  private readonly driver: MachineDriver<SingletonManagerInput, SingletonManagerOutput<unknown>>;
  private readonly handlers: Handlers<SingletonManagerMsg>;
  private readonly selfKey: string;
  private readonly managerPath: string;
  private readonly fields: { readonly singleton: string };
  private instance: ActorRef<M> | undefined;
  private readonly waiters = new IdentifyWaiters<ReplyTo<SingletonIdentified>>();
  private done = false;
  private readonly doneWaiters: (() => void)[] = [];
  private readonly disposables: { dispose(): void }[] = [];

  constructor(
    private readonly ctx: ActorContext<SingletonManagerMsg>,
    private readonly host: SingletonHost,
    private readonly options: ClusterSingletonOptions<M>,
  ) {
    const { cluster } = host;
    const machine = new SingletonManagerMachine<unknown>({
      self: cluster.self,
      role: options.role,
      useLease: options.lease !== undefined,
      stopMessage: options.stopMessage ?? PoisonPill,
      settings: { removalMarginMs: removalMarginOf(cluster), ...options.settings },
    });
    this.selfKey = uniqueAddressToString(cluster.self);
    this.managerPath = `/system/singletonManager-${options.name}`;
    this.fields = { singleton: options.name };
    this.driver = new MachineDriver(machine, NO_CLOCK, this.performers());
    this.handlers = this.messageHandlers();
    this.watchCluster();
    this.feedMembers();
  }

  receive(m: SingletonManagerMsg): void {
    // Peers' messages arrive through remoting: anything without the shape is dropped.
    if (isSingletonManagerMsg(m)) dispatch(this.handlers, m);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    for (const w of this.doneWaiters.splice(0)) w();
  }

  /** Membership events, self downed or removed, and the hand-over in `cluster-exiting`. */
  private watchCluster(): void {
    const { cluster, coordinatedShutdown } = this.host;
    const self = this.ctx.self;
    this.disposables.push(
      cluster.subscribe((e) => {
        if ("member" in e && uniqueAddressToString(e.member.uniqueAddress) === this.selfKey) {
          if (e.type === "member-downed") self.tell({ type: "shardkit.singleton.self-downed" });
          if (e.type === "member-removed") self.tell({ type: "shardkit.singleton.self-removed" });
        }
        self.tell({ type: "shardkit.singleton.members" });
      }),
    );
    cluster.registerOnMemberRemoved(() => self.tell({ type: "shardkit.singleton.self-removed" }));
    const exitingTask = coordinatedShutdown?.addTask(
      "cluster-exiting",
      `singleton-${this.options.name}-hand-over`,
      () =>
        this.done ? undefined : new Promise<void>((resolve) => this.doneWaiters.push(resolve)),
    );
    if (exitingTask !== undefined) this.disposables.push(exitingTask);
  }

  private feedMembers(): void {
    const { members, unreachable } = this.host.cluster.state;
    this.driver.feed({
      type: "members",
      oldestFirst: members as Member[],
      unreachable: unreachable.map((m) => m.uniqueAddress),
    });
  }

  private performers(): Performers<SingletonManagerOutput<unknown>> {
    const { ctx, options, fields } = this;
    const lease = options.lease;
    return {
      "start-instance": () => this.startInstance(),
      "stop-instance": (o) => (this.instance as ActorRef<unknown> | undefined)?.tell(o.stopMessage),
      send: (o) =>
        this.managerOn(o.to).tell(managerEnvelope(this.host.cluster.self, o.to, o.message)),
      ...timerPerformers<SingletonManagerMsg>(ctx.timers, timerMessage),
      "acquire-lease": () =>
        lease
          ?.acquire(() => ctx.self.tell({ type: "shardkit.singleton.lease-lost" }))
          .then(
            // Boolean(): a lease that answers a truthy non-boolean still counts as held.
            (ok) => ctx.self.tell({ type: "shardkit.singleton.lease-result", ok: Boolean(ok) }),
            () => ctx.self.tell({ type: "shardkit.singleton.lease-result", ok: false }),
          ),
      "release-lease": () => void lease?.release().catch(() => false),
      log: (o) => logOutput(ctx.log, o.level, o.text, fields),
      "stuck-error": (o) => ctx.log.error(o.error.message, { ...fields, code: o.error.code }),
      done: () => {
        this.done = true;
        this.waiters.clear();
        for (const w of this.doneWaiters.splice(0)) w();
      },
    };
  }

  private startInstance(): void {
    const instance = this.ctx.spawn(this.options.behavior, "singleton");
    this.instance = instance;
    this.ctx.watchWith(instance as ActorRef<never>, {
      type: "shardkit.singleton.instance-terminated",
    });
    this.ctx.log.info("singleton instance started", this.fields);
    // Proxies that asked while there was none learn it now, not at their next
    // identification tick (a new shard coordinator waits for the regions).
    for (const replyTo of this.waiters.takeAll()) replyTo.tell(this.identified());
  }

  /** The manager of this singleton on node `to` (remoting addresses it by host:port). */
  private managerOn(to: UniqueAddress): ActorRef<SingletonManagerMsg> {
    const a = to.address;
    return this.host.remoting.actorRefFor<SingletonManagerMsg>(
      `${a.system}@${a.host}:${a.port}`,
      this.managerPath,
    );
  }

  private identified(): SingletonIdentified {
    return {
      type: "shardkit.singleton.identified",
      node: this.selfKey,
      instance: (this.instance as ActorRef<unknown> | undefined) ?? null,
    };
  }

  private messageHandlers(): Handlers<SingletonManagerMsg> {
    const feed = (input: SingletonManagerInput) => this.driver.feed(input);
    return {
      "shardkit.singleton.members": () => this.feedMembers(),
      "shardkit.singleton.manager": (m) => {
        const input = managerInputOf(m, this.selfKey);
        if (input !== undefined) feed(input);
      },
      "shardkit.singleton.timer": (m) => feed({ type: "timer", key: m.key }),
      "shardkit.singleton.instance-terminated": () => {
        this.instance = undefined;
        feed({ type: "instance-terminated" });
      },
      "shardkit.singleton.lease-result": (m) => feed({ type: "lease-acquired", ok: m.ok }),
      "shardkit.singleton.lease-lost": () => feed({ type: "lease-lost" }),
      "shardkit.singleton.self-downed": () => feed({ type: "self-downed" }),
      "shardkit.singleton.self-removed": () => feed({ type: "self-removed" }),
      "shardkit.singleton.identify": (m) => {
        m.replyTo.tell(this.identified());
        // A proxy's replyTo is its actor ref: its path names the proxy.
        const key = (m.replyTo as ActorRef<SingletonIdentified>).path.toString();
        this.waiters.identified(key, m.replyTo, this.instance !== undefined, this.done);
      },
    };
  }
}

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

function proxyBehavior(
  host: SingletonHost,
  name: string,
  role: string | undefined,
  settings: Partial<SingletonProxySettings> | undefined,
): Behavior<unknown> {
  return Behaviors.setup<unknown>((ctx) => {
    const proxy = new SingletonProxyDriver(ctx, host, name, role, settings);
    return Behaviors.receive<unknown>(
      (_ctx, m) => proxy.receive(m),
      (_ctx, signal) => {
        if (signal.type === "PostStop") proxy.dispose();
        return undefined;
      },
    );
  });
}

/**
 * The driver of one SingletonProxyMachine: user messages become `send` inputs, the
 * proxy's own messages (protocol/singleton.ts) go through `handlers`, outputs through
 * `performers`. It keeps the refs of the instances managers reported, by node.
 */
class SingletonProxyDriver {
  private readonly driver: MachineDriver<
    SingletonProxyInput<unknown>,
    SingletonProxyOutput<unknown>
  >;
  private readonly handlers: Handlers<SingletonProxyMsg>;
  private readonly instances = new Map<string, ActorRef<unknown>>();
  private readonly managerPath: string;
  private readonly subscription: { dispose(): void };

  constructor(
    private readonly ctx: ActorContext<unknown>,
    private readonly host: SingletonHost,
    private readonly name: string,
    role: string | undefined,
    settings: Partial<SingletonProxySettings> | undefined,
  ) {
    const machine = new SingletonProxyMachine<unknown>({ role, settings });
    this.managerPath = `/system/singletonManager-${name}`;
    this.driver = new MachineDriver(machine, NO_CLOCK, this.performers());
    this.handlers = this.messageHandlers();
    this.subscription = host.cluster.subscribe(() =>
      ctx.self.tell({ type: "shardkit.singleton.members" }),
    );
    this.feedMembers();
  }

  receive(m: unknown): void {
    if (isSingletonProxyMsg(m)) dispatch(this.handlers, m);
    else this.driver.feed({ type: "send", message: m });
  }

  dispose(): void {
    this.subscription.dispose();
    this.driver.feed({ type: "stop" });
  }

  private feedMembers(): void {
    const { members, unreachable } = this.host.cluster.state;
    this.driver.feed({
      type: "members",
      oldestFirst: members as Member[],
      unreachable: unreachable.map((m) => m.uniqueAddress),
    });
  }

  private performers(): Performers<SingletonProxyOutput<unknown>> {
    const { ctx, host } = this;
    const deadLetter = (message: unknown, reason: "buffer-overflow" | "stopped") =>
      host.system.core.deadLetter(message, ctx.self.path.toString(), reason);
    return {
      identify: (o) => {
        const a = o.to.address;
        host.remoting
          .actorRefFor<SingletonManagerMsg>(`${a.system}@${a.host}:${a.port}`, this.managerPath)
          .tell({ type: "shardkit.singleton.identify", replyTo: ctx.self });
      },
      deliver: (o) => {
        const target = this.instances.get(uniqueAddressToString(o.to));
        if (target !== undefined) target.tell(o.message);
        else deadLetter(o.message, "stopped");
      },
      "dead-letter": (o) =>
        deadLetter(o.message, o.reason === "buffer-overflow" ? "buffer-overflow" : "stopped"),
      ...timerPerformers<unknown>(ctx.timers, timerMessage),
      log: (o) => logOutput(ctx.log, o.level, o.text, { singleton: this.name }),
    };
  }

  private messageHandlers(): Handlers<SingletonProxyMsg> {
    const feed = (input: SingletonProxyInput<unknown>) => this.driver.feed(input);
    return {
      "shardkit.singleton.members": () => this.feedMembers(),
      "shardkit.singleton.timer": (m) => feed({ type: "timer", key: m.key }),
      "shardkit.singleton.identified": (m) => {
        const from = parseNode(m.node);
        if (from === undefined) return;
        if (m.instance !== null) {
          const instance = m.instance as ActorRef<unknown>;
          this.instances.set(m.node, instance);
          this.ctx.watchWith(instance as ActorRef<never>, {
            type: "shardkit.singleton.instance-gone",
            node: m.node,
          });
        }
        feed({ type: "identify-result", from, found: m.instance !== null });
      },
      "shardkit.singleton.instance-gone": (m) => {
        this.instances.delete(m.node);
        const at = parseNode(m.node);
        if (at !== undefined) feed({ type: "singleton-terminated", at });
      },
    };
  }
}
