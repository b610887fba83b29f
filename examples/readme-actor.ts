/**
 * The README's actor example, kept runnable: `npx tsx examples/readme-actor.ts`.
 * (test/examples.test.ts runs it.)
 */
import {
  AbstractBehavior,
  type ActorRef,
  ActorSystem,
  ask,
  Behaviors,
  createNodeRuntime,
  type Signal,
  SupervisorStrategy,
} from "../src/index.js";

type Counter = { type: "increment"; by: number } | { type: "get"; replyTo: ActorRef<number> };

const counter = Behaviors.setup<Counter>((ctx) => {
  let value = 0;
  ctx.timers.startTimerAtFixedRate("log", { type: "increment", by: 0 }, 10_000);
  return Behaviors.receiveMessage<Counter>((msg) => {
    switch (msg.type) {
      case "increment":
        value += msg.by;
        return;
      case "get":
        msg.replyTo.tell(value);
        return;
    }
  });
});

class Greeter extends AbstractBehavior<{ name: string }> {
  private greeted = 0;
  onMessage(msg: { name: string }) {
    this.greeted++;
    this.context.log.info(`hello ${msg.name}`, { greeted: this.greeted });
    if (this.greeted === 100) return Behaviors.stopped;
  }
  override onSignal(signal: Signal) {
    if (signal.type === "PostStop") this.context.log.info("bye");
  }
}

const system = ActorSystem.create({ name: "demo", runtime: createNodeRuntime() });
const ref = system.spawn(
  Behaviors.supervise(counter, SupervisorStrategy.restart({ maxRestarts: 3, withinMs: 60_000 })),
  "counter",
);
ref.tell({ type: "increment", by: 2 });
const value = await ask(ref, (replyTo: ActorRef<number>) => ({ type: "get", replyTo }), {
  timeoutMs: 1_000,
});
console.log(value);
const greeter = system.spawn(
  Behaviors.setup<{ name: string }>((ctx) => new Greeter(ctx)),
  "greeter",
);
greeter.tell({ name: "shardkit" });
await system.terminate();
