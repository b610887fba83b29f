/**
 * A shardkit node as a child process, driven by test/remote/*.test.ts through the
 * JSON-lines harness (test/support/child-process.ts).
 *
 * argv[2] is a JSON NodeConfig. The node starts remoting on 127.0.0.1 (port 0 unless
 * given), spawns its actors and prints `{"event":"ready","address":...,"port":...}`.
 * Then it obeys one JSON command per stdin line; each carries an `id` and gets exactly
 * one `{"event":"reply","id":...,"ok":true|false,...}` line. Asynchronous observations
 * (Terminated, messages arriving at the inbox) are `{"event":"terminated"|"inbox",...}`.
 * Logs go to stderr. The node exits when stdin closes (the test runner is gone).
 *
 * Actors under /user:
 * - echo: `{ replyTo, value }` -> replyTo gets `{ from: <this address>, value }`;
 * - counter: `{ t: "seq", from, n }` checked per sender for order, gaps and duplicates;
 * - victim: stops on any message (or with the `stop` command);
 * - inbox: publishes every message it gets as an `inbox` event;
 * - directory: `{ t: "set", ref }` stores a ref, `{ t: "get", replyTo }` replies `{ ref }`.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { type ActorRef, ActorSystem, ask, Behaviors } from "../../src/actor/index.js";
import { Remoting, type RemotingSettings } from "../../src/cluster/remoting/index.js";
import type { LogLevel } from "../../src/ports/logger.js";
import { createNodeRuntime, nodeCrypto, TcpTransport } from "../../src/runtime/node/index.js";

/** Configuration of one child node (argv[2], JSON). */
export interface NodeConfig {
  /** Actor system name; default "sk". */
  readonly name?: string;
  /** Listening port; default 0 (any). */
  readonly port?: number;
  /** Cluster secret(s) (HMAC handshake proofs; a list for rotation, the first proves). */
  readonly secret?: string | readonly string[];
  /** Mutual TLS with this fixture identity (test/fixtures/tls/<tls>.crt/.key, CA ca.crt). */
  readonly tls?: "node-a" | "node-b" | "foreign-node";
  /** Remoting settings overrides. */
  readonly settings?: Partial<RemotingSettings>;
  readonly logLevel?: LogLevel;
}

export type EchoRequest = { readonly replyTo: ActorRef<EchoReply>; readonly value: unknown };
export type EchoReply = { readonly from: string; readonly value: unknown };
export type CounterMsg = { readonly t: "seq"; readonly from: string; readonly n: number };
export type DirectoryMsg =
  | { readonly t: "set"; readonly ref: ActorRef<EchoRequest> }
  | { readonly t: "get"; readonly replyTo: ActorRef<{ ref: ActorRef<EchoRequest> | null }> };

type Command = Readonly<Record<string, unknown>> & { readonly cmd: string; readonly id: number };

const FIXTURES = resolve(import.meta.dirname, "../fixtures/tls");
const COUNTER_ERRORS_KEPT = 10;

const config = JSON.parse(process.argv[2] ?? "{}") as NodeConfig;

function emit(event: Record<string, unknown>): void {
  process.stdout.write(
    `${JSON.stringify(event, (_k, v) => (typeof v === "bigint" ? String(v) : v))}\n`,
  );
}

function tlsOptions(identity: NonNullable<NodeConfig["tls"]>) {
  const pem = (f: string) => readFileSync(join(FIXTURES, f), "utf8");
  return { ca: pem("ca.crt"), cert: pem(`${identity}.crt`), key: pem(`${identity}.key`) };
}

const runtime = createNodeRuntime({ logLevel: config.logLevel ?? "info" });
const system = ActorSystem.create({ name: config.name ?? "sk", runtime });
const transport = new TcpTransport({
  logger: runtime.logger.child({ component: "transport" }),
  ...(config.tls !== undefined ? { tls: tlsOptions(config.tls) } : {}),
});
const remoting = await Remoting.start(system, {
  transport,
  crypto: nodeCrypto,
  settings: {
    host: "127.0.0.1",
    port: config.port ?? 0,
    ...config.settings,
    ...(config.secret !== undefined ? { secret: config.secret } : {}),
  },
});

// ------------------------------------------------------------------ actors

const counterState = {
  received: 0,
  errors: [] as string[],
  errorCount: 0,
  next: new Map<string, number>(),
};

const actors = new Map<string, ActorRef<never>>();
const echo = system.spawn(
  Behaviors.receiveMessage<EchoRequest>((m) => {
    m.replyTo.tell({ from: remoting.address, value: m.value });
  }),
  "echo",
);
const counter = system.spawn(
  Behaviors.receiveMessage<CounterMsg>((m) => {
    counterState.received++;
    const expected = counterState.next.get(m.from) ?? 0;
    if (m.n !== expected) {
      counterState.errorCount++;
      if (counterState.errors.length < COUNTER_ERRORS_KEPT)
        counterState.errors.push(`${m.from}: expected ${expected}, got ${m.n}`);
    }
    counterState.next.set(m.from, m.n + 1);
  }),
  "counter",
);
const victim = system.spawn(
  Behaviors.receiveMessage<unknown>(() => Behaviors.stopped),
  "victim",
);
const inbox = system.spawn(
  Behaviors.receiveMessage<unknown>((m) => {
    emit({ event: "inbox", message: m as Record<string, unknown> });
  }),
  "inbox",
);
let directoryRef: ActorRef<EchoRequest> | null = null;
const directory = system.spawn(
  Behaviors.receiveMessage<DirectoryMsg>((m) => {
    if (m.t === "set") directoryRef = m.ref;
    else m.replyTo.tell({ ref: directoryRef });
  }),
  "directory",
);
for (const [name, ref] of Object.entries({ echo, counter, victim, inbox, directory }))
  actors.set(name, ref as ActorRef<never>);

/** Spawns an actor that watches `target` and reports its Terminated signal. */
function spawnWatcher(watchId: string, target: ActorRef<never>): void {
  system.spawn(
    Behaviors.setup<never>((ctx) => {
      ctx.watch(target);
      return Behaviors.receive<never>(
        () => undefined,
        (_ctx, signal) => {
          if (signal.type === "Terminated")
            emit({ event: "terminated", watchId, ref: signal.ref.path.toString() });
          return undefined;
        },
      );
    }),
  );
}

// ------------------------------------------------------------------ commands

function errorInfo(error: unknown): Record<string, unknown> {
  if (error instanceof Error)
    return {
      error: error.message,
      errorName: error.name,
      code: (error as { code?: unknown }).code,
    };
  return { error: String(error) };
}

async function handle(c: Command): Promise<Record<string, unknown>> {
  const target = <M>(): ActorRef<M> =>
    remoting.actorRefFor<M>(String(c.address), String(c.path ?? "/user/echo"));
  switch (c.cmd) {
    case "ask": {
      const reply = await ask(
        target<EchoRequest>(),
        (replyTo: ActorRef<EchoReply>) => ({ replyTo, value: c.value }),
        { timeoutMs: Number(c.timeoutMs ?? 3_000) },
      );
      return { reply };
    }
    case "tellRef":
      target<EchoRequest>().tell({ replyTo: inbox as ActorRef<EchoReply>, value: c.value });
      return {};
    case "seq": {
      const ref = target<CounterMsg>();
      const from = `${remoting.address}#${String(c.stream ?? "")}`;
      for (let n = 0; n < Number(c.count); n++) ref.tell({ t: "seq", from, n });
      return { from };
    }
    case "counter":
      return {
        received: counterState.received,
        errorCount: counterState.errorCount,
        errors: counterState.errors,
        senders: Object.fromEntries(counterState.next),
      };
    case "setDirectory":
      directory.tell({ t: "set", ref: target<EchoRequest>() });
      return {};
    case "askVia": {
      const timeoutMs = Number(c.timeoutMs ?? 3_000);
      const got = await ask(
        remoting.actorRefFor<DirectoryMsg>(String(c.address), "/user/directory"),
        (replyTo: ActorRef<{ ref: ActorRef<EchoRequest> | null }>) => ({ t: "get", replyTo }),
        { timeoutMs },
      );
      if (got.ref === null) throw new Error("directory is empty");
      const reply = await ask(
        got.ref,
        (replyTo: ActorRef<EchoReply>) => ({ replyTo, value: c.value }),
        { timeoutMs },
      );
      return { via: got.ref.path.toString(), reply };
    }
    case "watch":
      spawnWatcher(String(c.watchId), target<never>());
      return {};
    case "stop": {
      const ref = actors.get(String(c.name));
      if (ref === undefined) throw new Error(`no actor ${String(c.name)}`);
      system.stop(ref);
      return {};
    }
    case "stats": {
      // With --expose-gc, `gc: true` collects first so that `rss` reflects live memory.
      const gc = (globalThis as { gc?: () => void }).gc;
      if (c.gc === true && gc !== undefined) gc();
      return {
        stats: { ...remoting.stats },
        system: system.stats,
        rssBytes: process.memoryUsage().rss,
      };
    }
    case "exit":
      setImmediate(() => void shutdown(0));
      return {};
    default:
      throw new Error(`unknown command ${c.cmd}`);
  }
}

let stopping = false;
async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await system.terminate();
  await remoting.shutdown();
  process.exit(code);
}

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
      (error: unknown) => emit({ event: "reply", id: c.id, ok: false, ...errorInfo(error) }),
    );
  })
  .on("close", () => void shutdown(0));

emit({
  event: "ready",
  address: remoting.address,
  port: remoting.node.port,
  uid: String(remoting.localUid),
  pid: process.pid,
});
