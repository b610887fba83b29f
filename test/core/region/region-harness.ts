/**
 * A world for property tests of the region machine: one RegionMachine (region `A` or
 * proxy `P`), a driver that performs its outputs, and simulated local shard actors. A
 * shard actor queues what it gets (`deliver-local`), delivers from the front to its
 * entities when told to, and when asked to stop (hand-off or stop) hands back what it
 * still holds, like the shard machine does (`return-to-region`, then
 * `local-shard-stopped`).
 *
 * Every message fed to the region is tracked: in the region (buffered), in a shard's
 * queue, delivered (forwarded to a remote region, or delivered to an entity by a local
 * shard) or a dead letter. The world throws as soon as a rule breaks:
 * - a message leaves the region twice, or is delivered or dead-lettered twice;
 * - a message of one (sender, entity) pair is delivered after a later one of that pair;
 * - the messages the world believes buffered differ from the machine's count, or dead
 *   letters from its counter (a message vanished or was invented);
 * - a proxy starts a shard, a shard is started while its actor exists, or a message goes
 *   to a local shard that is not up or is stopping;
 * - the hand-off barrier: a BeginHandOffAck for a shard whose home was another region
 *   goes anywhere but through that region (behind the messages forwarded there).
 */
import { RegionMachine } from "../../../src/core/region/region-machine.js";
import type {
  CoordinatorRef,
  RegionEnvelope,
  RegionInput,
  RegionOutput,
} from "../../../src/core/region/region-types.js";
import type { RegionCommand } from "../../../src/protocol/sharding.js";

const BUFFER_SIZE_MAX = 12;

/** Where a tracked message is. */
type Status = "region" | "shard" | "delivered" | "dead";

interface Tracked {
  readonly sender: string;
  readonly entityId: string;
  status: Status;
}

interface SimShard {
  up: boolean;
  /** Asked to stop: by a hand-off, or abruptly (which may follow a hand-off). */
  stopping: "hand-off" | "stop" | undefined;
  queue: RegionEnvelope<string>[];
}

/** One action of a generated run. */
export type RegionAction =
  | {
      readonly kind: "deliver";
      /** Entity `e<n>` lives in shard `s<n % 3>` (the extractor is a function of the id). */
      readonly entity: number;
      readonly sender: string;
    }
  | { readonly kind: "coordinator"; readonly coordinator: CoordinatorRef | undefined }
  /** From the coordinator the region knows (`stale`: from another one). */
  | { readonly kind: "from"; readonly stale: boolean; readonly message: RegionCommand }
  | { readonly kind: "shard-up"; readonly shard: string }
  | { readonly kind: "shard-process"; readonly shard: string; readonly n: number }
  | { readonly kind: "shard-finish"; readonly shard: string }
  | { readonly kind: "terminated"; readonly region: string }
  | { readonly kind: "timer"; readonly pick: number }
  | { readonly kind: "advance"; readonly ms: number }
  | { readonly kind: "graceful-shutdown" }
  | { readonly kind: "self-downed" }
  | { readonly kind: "stop" };

/** The driver world around one region machine. */
export class RegionWorld {
  readonly machine: RegionMachine<string>;
  readonly self: string;
  now = 0;
  private readonly timers = new Set<string>();
  private readonly shards = new Map<string, SimShard>();
  private readonly tracked = new Map<string, Tracked>();
  /** Last delivered sequence number per `sender/entity`. */
  private readonly lastDelivered = new Map<string, number>();
  private nextId = 0;
  private stoppedSeen = false;
  readonly trace: string[] = [];
  /** Deliveries `route` sent to the local shard: the driver fast path (each checked). */
  directDeliveries = 0;
  /** Deliveries `route` sent to another region: the driver fast path (each checked). */
  directForwards = 0;

  /**
   * `coordinator`: the singleton location known from the start; `registered`: and it
   * has acknowledged the registration.
   */
  constructor(
    readonly proxy: boolean,
    coordinator?: CoordinatorRef,
    registered = false,
  ) {
    this.self = proxy ? "P" : "A";
    this.machine = new RegionMachine<string>({
      self: this.self,
      member: proxy ? "p" : "a",
      typeName: "T",
      proxy,
      settings: { bufferSizeMax: BUFFER_SIZE_MAX, warnIntervalMs: 1_000 },
    });
    this.feed({ type: "start" });
    if (coordinator === undefined) return;
    this.feed({ type: "coordinator-changed", coordinator });
    if (registered)
      this.feed({
        type: "coordinator-message",
        from: coordinator,
        message: { type: "register-ack", coordinator },
      });
  }

  /** Messages fed so far. */
  get messageCount(): number {
    return this.nextId;
  }

  /** Counts of messages per status. */
  counts(): Record<Status, number> {
    const c: Record<Status, number> = { region: 0, shard: 0, delivered: 0, dead: 0 };
    for (const t of this.tracked.values()) c[t.status]++;
    return c;
  }

  /** Performs one generated action (skipped when it does not apply). */
  act(a: RegionAction): void {
    switch (a.kind) {
      case "deliver": {
        const id = `m${this.nextId++}`;
        const entityId = `e${a.entity}`;
        const shard = `s${a.entity % 3}`;
        this.tracked.set(id, { sender: a.sender, entityId, status: "region" });
        const before = this.machine.stats.bufferedMessages;
        // `route` is the decision: when it names a region, handle emits only the one
        // deliver-local / forward there and changes nothing (the driver fast path skips
        // handle then); when it is undefined, the message does not leave the region.
        // sender "r" lives on another member: its region forwarded the message here, and
        // a forwarded message is never forwarded again (it waits for the coordinator)
        const forwarded = a.sender === "r";
        const routed = this.machine.route(shard);
        const to = forwarded && routed !== this.machine.id ? undefined : routed;
        const direct = to !== undefined && to === this.machine.id;
        const forwardTo = to !== undefined && !direct ? to : undefined;
        const view = to !== undefined ? JSON.stringify(this.machine.view()) : "";
        const outputs = this.feed({
          type: "deliver",
          shard,
          entityId,
          message: id,
          sender: a.sender,
          ...(forwarded ? { forwarded } : {}),
        });
        if (direct) {
          this.directDeliveries++;
          const o = outputs[0];
          if (outputs.length !== 1 || o?.type !== "deliver-local" || o.shard !== shard)
            this.fail(`route(${shard}) = self but deliver gave ${JSON.stringify(outputs)}`);
          if (JSON.stringify(this.machine.view()) !== view)
            this.fail(`route(${shard}) = self but deliver changed the region`);
        }
        if (forwardTo !== undefined) {
          this.directForwards++;
          const o = outputs[0];
          if (
            outputs.length !== 1 ||
            o?.type !== "forward" ||
            o.shard !== shard ||
            o.region !== forwardTo
          )
            this.fail(`route(${shard}) = ${forwardTo} but deliver gave ${JSON.stringify(outputs)}`);
          if (JSON.stringify(this.machine.view()) !== view)
            this.fail(`route(${shard}) = ${forwardTo} but deliver changed the region`);
        }
        if (
          to === undefined &&
          outputs.some(
            (o) =>
              (o.type === "deliver-local" || o.type === "forward") && o.envelope.message === id,
          )
        )
          this.fail(`route(${shard}) undefined but deliver sent ${id}: ${JSON.stringify(outputs)}`);
        if (this.tracked.get(id)?.status === "region" && before >= BUFFER_SIZE_MAX)
          this.fail(
            `${id} buffered with ${before} messages held (bufferSizeMax ${BUFFER_SIZE_MAX})`,
          );
        return;
      }
      case "coordinator":
        this.feed({ type: "coordinator-changed", coordinator: a.coordinator });
        return;
      case "from": {
        const view = this.machine.view();
        const current = view.coordinator ?? "C1";
        const from = a.stale ? (current === "C1" ? "C2" : "C1") : current;
        const m = a.message;
        const home =
          m.type === "begin-hand-off"
            ? view.homes.find((h) => h.shard === m.shard)?.region
            : undefined;
        const outputs = this.feed({ type: "coordinator-message", from, message: m });
        if (m.type === "begin-hand-off") this.checkAckBarrier(m.shard, home, outputs);
        return;
      }
      case "shard-up":
        this.shardUp(a.shard);
        return;
      case "shard-process":
        this.shardProcess(a.shard, a.n);
        return;
      case "shard-finish":
        this.shardFinish(a.shard);
        return;
      case "terminated":
        this.feed({ type: "region-terminated", region: a.region });
        return;
      case "timer": {
        const running = [...this.timers].sort();
        const key = running[a.pick % Math.max(1, running.length)];
        if (key === undefined) return;
        this.timers.delete(key);
        this.feed({ type: "timer", key });
        return;
      }
      case "advance":
        this.now += a.ms;
        return;
      case "graceful-shutdown":
      case "self-downed":
      case "stop":
        this.feed({ type: a.kind });
        return;
    }
  }

  /**
   * Lets the world settle: stopping shards finish, a fresh coordinator registers the
   * region and places every waiting shard in region B (stopping local copies first).
   * Afterwards nothing may remain buffered.
   */
  settle(): void {
    for (let round = 0; round < 4; round++) {
      for (const shard of [...this.shards.keys()]) this.shardFinish(shard);
      if (this.machine.phase === "stopped") return;
      const c = `S${round}`;
      this.feed({ type: "coordinator-changed", coordinator: c });
      this.feed({
        type: "coordinator-message",
        from: c,
        message: { type: "register-ack", coordinator: c },
      });
      for (const { shard } of this.machine.view().buffered)
        this.feed({
          type: "coordinator-message",
          from: c,
          message: { type: "shard-home", shard, region: "B" },
        });
    }
  }

  private shardUp(shard: string): void {
    const s = this.shards.get(shard);
    if (s === undefined || s.up) return;
    s.up = true;
    this.feed({ type: "shard-started-local", shard });
  }

  private shardProcess(shard: string, n: number): void {
    const s = this.shards.get(shard);
    if (s === undefined || s.stopping !== undefined) return;
    for (const e of s.queue.splice(0, n)) this.delivered(e.message, "shard", `entity ${shard}`);
  }

  private shardFinish(shard: string): void {
    const s = this.shards.get(shard);
    if (s === undefined || s.stopping === undefined) return;
    this.shards.delete(shard);
    const leftovers = s.queue;
    for (const e of leftovers) this.move(e.message, "shard", "region");
    if (leftovers.length > 0) this.feed({ type: "return-to-region", shard, messages: leftovers });
    this.feed({ type: "local-shard-stopped", shard });
  }

  private feed(input: RegionInput<string>): RegionOutput<string>[] {
    this.trace.push(`@${this.now} ${JSON.stringify(input)}`);
    const outputs = this.machine.handle(input, this.now);
    for (const o of outputs) {
      if (o.type !== "log") this.trace.push(`  ${JSON.stringify(o)}`);
      this.perform(o);
    }
    this.check();
    return outputs;
  }

  private perform(o: RegionOutput<string>): void {
    if (this.stoppedSeen && o.type !== "dead-letter") this.fail(`output after stopped: ${o.type}`);
    switch (o.type) {
      case "forward":
        this.delivered(o.envelope.message, "region", `forward ${o.region}`);
        return;
      case "deliver-local": {
        const s = this.shards.get(o.shard);
        if (s === undefined || !s.up || s.stopping)
          this.fail(`deliver-local to ${o.shard}: not up`);
        this.move(o.envelope.message, "region", "shard");
        s?.queue.push(o.envelope);
        return;
      }
      case "dead-letter":
        this.move(o.envelope.message, "region", "dead");
        return;
      case "start-shard":
        if (this.proxy) this.fail(`proxy started ${o.shard}`);
        if (this.shards.has(o.shard)) this.fail(`second actor for shard ${o.shard}`);
        this.shards.set(o.shard, { up: false, stopping: undefined, queue: [] });
        return;
      case "stop-shard":
      case "hand-off-shard": {
        const s = this.shards.get(o.shard);
        const how = o.type === "stop-shard" ? "stop" : "hand-off";
        if (s === undefined) this.fail(`${o.type} for ${o.shard}: no actor`);
        if (s.stopping === "stop" || (s.stopping !== undefined && how === "hand-off"))
          this.fail(`${o.type} for ${o.shard}: already asked to ${s.stopping}`);
        s.stopping = how;
        return;
      }
      case "start-timer":
        if (this.timers.has(o.key)) this.fail(`timer ${o.key} started while running`);
        this.timers.add(o.key);
        return;
      case "cancel-timer":
        this.timers.delete(o.key);
        return;
      case "stopped":
        this.stoppedSeen = true;
        return;
      case "send-to-coordinator":
      case "log":
        return;
    }
  }

  /**
   * The hand-off barrier (order per sender across regions): when the shard's home was
   * another region, messages may still be on their way there, so the ack must travel
   * behind them, through that region; otherwise straight to the coordinator.
   */
  private checkAckBarrier(
    shard: string,
    home: string | undefined,
    outputs: readonly RegionOutput<string>[],
  ): void {
    const acks = outputs.filter(
      (o) =>
        (o.type === "send-to-coordinator" || o.type === "relay-to-coordinator") &&
        o.message.type === "begin-hand-off-ack",
    );
    if (acks.length === 0 && this.machine.phase !== "running") return;
    if (acks.length !== 1) this.fail(`BeginHandOff ${shard}: ${acks.length} acks`);
    const ack = acks[0];
    const remote = home !== undefined && home !== this.self;
    if (remote && (ack?.type !== "relay-to-coordinator" || ack.via !== home))
      this.fail(
        `BeginHandOffAck for ${shard} not relayed through its home ${home}: messages forwarded there could reach it after the HandOff`,
      );
    if (!remote && ack?.type !== "send-to-coordinator")
      this.fail(`BeginHandOffAck for ${shard} relayed although ${this.self} forwarded nothing`);
  }

  private move(id: string, from: Status, to: Status): void {
    const t = this.tracked.get(id);
    if (t === undefined) this.fail(`unknown message ${id}`);
    else if (t.status !== from) this.fail(`${id} is ${t.status}, expected ${from} (to ${to})`);
    else t.status = to;
  }

  /** `id` reached its destination: once only, and in order within its (sender, entity). */
  private delivered(id: string, from: Status, where: string): void {
    const t = this.tracked.get(id);
    if (t === undefined) this.fail(`unknown message ${id}`);
    this.move(id, from, "delivered");
    const pair = `${t.sender}/${t.entityId}`;
    const seq = Number(id.slice(1));
    const last = this.lastDelivered.get(pair) ?? -1;
    if (seq < last) this.fail(`${id} (${where}) delivered after m${last} of ${pair}`);
    this.lastDelivered.set(pair, seq);
  }

  private check(): void {
    const c = this.counts();
    const stats = this.machine.stats;
    if (c.region !== stats.bufferedMessages)
      this.fail(`world holds ${c.region} in the region, machine ${stats.bufferedMessages}`);
    if (c.dead !== stats.deadLetters)
      this.fail(`world saw ${c.dead} dead letters, machine counts ${stats.deadLetters}`);
    const perShard = this.machine.view().buffered.reduce((n, b) => n + b.count, 0);
    if (perShard !== stats.bufferedMessages) this.fail("per-shard buffers disagree with total");
  }

  private fail(why: string): never {
    throw new Error(`${why}\n--- trace (last 40) ---\n${this.trace.slice(-40).join("\n")}`);
  }
}
