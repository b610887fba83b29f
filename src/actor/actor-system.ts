/**
 * ActorSystem: the public entry point of the actor core. Create one per node with a
 * Runtime (real: runtime/node, simulated: runtime/sim), spawn top-level actors under
 * /user, and `terminate()` to stop everything — children before parents, then /system.
 */
import { ConfigError } from "../base/errors.js";
import type { Logger } from "../ports/logger.js";
import type { Runtime } from "../ports/runtime.js";
import { ActorCell, NotAChildError } from "./actor-cell.js";
import type { ActorRef } from "./actor-ref.js";
import type { ActorSystemStats, ActorSystemView, Behavior } from "./behavior.js";
import type { EventStream } from "./event-stream.js";
import type { Props } from "./props.js";
import { type ActorSettings, actorSettings } from "./settings.js";
import { SystemCore } from "./system-core.js";

export interface ActorSystemOptions {
  /** System name: letters, digits, '-' and '_'; part of every actor path. */
  readonly name: string;
  readonly runtime: Runtime;
  readonly settings?: Partial<ActorSettings>;
}

export type { ActorSystemStats };

export class ActorSystem implements ActorSystemView {
  /** @internal */
  readonly core: SystemCore;

  private constructor(core: SystemCore) {
    this.core = core;
  }

  /** Creates and starts an actor system. Throws ConfigError for bad settings. */
  static create(options: ActorSystemOptions): ActorSystem {
    if (typeof options.name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(options.name))
      throw new ConfigError(
        "name",
        options.name,
        "letters, digits, '-' or '_', starting with a letter or digit",
      );
    const core = new SystemCore(options.name, options.runtime, actorSettings(options.settings));
    const system = new ActorSystem(core);
    core.system = system;
    return system;
  }

  get name(): string {
    return this.core.name;
  }
  get settings(): Readonly<ActorSettings> {
    return this.core.settings;
  }
  get runtime(): Runtime {
    return this.core.runtime;
  }
  get log(): Logger {
    return this.core.log;
  }
  get eventStream(): EventStream {
    return this.core.eventStream;
  }
  /** Messages told to this ref are counted and published as DeadLetter events. */
  get deadLetters(): ActorRef<unknown> {
    return this.core.deadLetters;
  }
  get stats(): ActorSystemStats {
    return {
      deadLetters: this.core.deadLetterCount,
      unhandled: this.core.unhandledCount,
      failures: this.core.failureCount,
      pendingAsks: this.core.asks.pending,
    };
  }
  get isTerminated(): boolean {
    return this.core.isTerminated;
  }
  /** Resolves when terminate() has finished. */
  get whenTerminated(): Promise<void> {
    return this.core.whenTerminated;
  }

  /** Spawns a top-level actor under /user. */
  spawn<M>(behavior: Behavior<M>, name?: string, props?: Props): ActorRef<M> {
    return this.core.userGuardian.spawnChild(behavior, name, props);
  }

  /** Stops a top-level actor (children first). For deeper actors, use ctx.stop. */
  stop(ref: ActorRef<never>): void {
    if (!(ref instanceof ActorCell) || ref.parent !== (this.core.userGuardian as unknown))
      throw new NotAChildError("/user", ref.path.toString());
    ref.sendSystem({ k: "stop" });
  }

  /** Stops every actor (children before parents), rejects pending asks, and resolves. */
  terminate(): Promise<void> {
    return this.core.terminate();
  }
}
