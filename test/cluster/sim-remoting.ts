/** Test helper: actor systems with remoting on simulated nodes of one SimWorld + SimNetwork. */
import { ActorSystem } from "../../src/actor/index.js";
import { Remoting } from "../../src/cluster/remoting/index.js";
import type { RemotingSettings } from "../../src/cluster/remoting/remoting-settings.js";
import type { Crypto } from "../../src/ports/crypto.js";
import { hmacSha256 } from "../../src/runtime/node/node-crypto.js";
import { SimNetwork, type SimRuntime, SimWorld } from "../../src/runtime/sim/index.js";

export interface SimNode {
  readonly name: string;
  readonly runtime: SimRuntime;
  readonly system: ActorSystem;
  readonly remoting: Remoting;
}

export class SimCluster {
  readonly world: SimWorld;
  readonly network: SimNetwork;
  private incarnation = new Map<string, number>();

  constructor(
    seed: number,
    options: {
      logLevel?: "debug" | "info" | "warn" | "error" | "off";
      write?: (line: string) => void;
    } = {},
  ) {
    this.world = new SimWorld({ seed, logLevel: options.logLevel ?? "off", write: options.write });
    this.network = new SimNetwork(this.world);
  }

  /** A node called `name` listening on `name:2552` (a restart reuses the address). */
  async node(
    name: string,
    settings: Partial<RemotingSettings> = {},
    systemName = "sk",
  ): Promise<SimNode> {
    const n = (this.incarnation.get(name) ?? 0) + 1;
    this.incarnation.set(name, n);
    const runtime = this.world.createRuntime(n === 1 ? name : `${name}#${n}`);
    const system = ActorSystem.create({ name: systemName, runtime });
    const crypto: Crypto = {
      hmacSha256,
      randomBytes: (k) => Uint8Array.from({ length: k }, () => runtime.random.nextInt(256)),
    };
    const started = Remoting.start(system, {
      transport: this.network.transportFor(name),
      settings: { host: name, port: 2552, ...settings },
      crypto,
    });
    let remoting: Remoting | undefined;
    started.then((r) => {
      remoting = r;
    });
    await this.until(() => remoting !== undefined, 1_000);
    return { name, runtime, system, remoting: remoting as Remoting };
  }

  /** Simulates kill -9: the node's timers stop and its network endpoints vanish. */
  crash(node: SimNode): void {
    node.runtime.scheduler.cancelAll();
    this.network.crash(node.name);
    this.network.restart(node.name);
  }

  /**
   * A stalled event loop (a long GC, a synchronous burst, a starved CPU): for `ms` the
   * node runs none of its callbacks and reads nothing from the network (every link into
   * it is clogged); what arrived meanwhile is handled when the stall ends.
   */
  stall(node: SimNode, ms: number): void {
    node.runtime.scheduler.stall(ms);
    for (const other of this.incarnation.keys())
      if (other !== node.name) this.network.clog(other, node.name, ms, { oneWay: true });
  }

  async until(predicate: () => boolean, limitMs: number): Promise<void> {
    const ok = await this.world.runUntil(predicate, limitMs);
    if (!ok)
      throw new Error(`[sim ${this.world.describe()}] condition not reached within ${limitMs} ms`);
  }
}
