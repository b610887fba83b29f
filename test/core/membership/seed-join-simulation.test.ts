/**
 * Seed nodes started at once form ONE cluster: N seed-join machines talk over a
 * simulated network where any in-flight message may be delivered, dropped or
 * duplicated and any running timer may fire at any moment (fast-check chooses). A node
 * acks InitJoin and welcomes Join only once it is a member. Checked: only the first
 * seed ever joins itself, at most once, and every member belongs to the cluster it
 * formed; after a fair phase (no loss, timers in order) everybody has joined.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Xoshiro128 } from "../../../src/base/prng.js";
import { type Address, addressOf } from "../../../src/core/membership/address.js";
import {
  SeedJoinMachine,
  type SeedJoinOutput,
  type SeedJoinTimer,
} from "../../../src/core/membership/seed-join.js";

type Kind = "init-join" | "ack" | "nack" | "join" | "welcome";
interface Message {
  readonly from: number;
  readonly to: number;
  readonly kind: Kind;
  /** welcome only: the cluster the welcoming node belongs to. */
  readonly cluster?: number;
}

interface Node {
  readonly address: Address;
  readonly machine: SeedJoinMachine;
  readonly timers: Set<SeedJoinTimer>;
  /** The index of the node whose self-join formed the cluster this node is in. */
  cluster: number | undefined;
}

class Sim {
  readonly nodes: Node[];
  readonly inFlight: Message[] = [];
  readonly selfJoins: number[] = [];

  constructor(n: number, seedCount: number) {
    const addresses = Array.from({ length: n }, (_, i) =>
      addressOf("shardkit", "sys", `h${i}`, 2552),
    );
    const seeds = addresses.slice(0, seedCount);
    this.nodes = addresses.map((address) => ({
      address,
      machine: new SeedJoinMachine({
        self: address,
        seedNodes: seeds,
        seedNodeTimeoutMs: 5000,
        seedNodeInitJoinResendIntervalMs: 1000,
        retryUnsuccessfulJoinAfterMs: 10_000,
      }),
      timers: new Set(),
      cluster: undefined,
    }));
  }

  private indexOf(a: Address): number {
    return this.nodes.findIndex((n) => n.address.host === a.host);
  }

  perform(i: number, outputs: readonly SeedJoinOutput[]): void {
    const node = this.nodes[i] as Node;
    for (const o of outputs) {
      switch (o.type) {
        case "send-init-join":
          for (const to of o.to)
            this.inFlight.push({ from: i, to: this.indexOf(to), kind: "init-join" });
          break;
        case "send-join":
          this.inFlight.push({ from: i, to: this.indexOf(o.to), kind: "join" });
          break;
        case "join-self":
          this.selfJoins.push(i);
          node.cluster = i;
          break;
        case "start-timer":
          node.timers.add(o.timer);
          break;
        case "cancel-timer":
          node.timers.delete(o.timer);
          break;
        case "joined":
          break;
      }
    }
  }

  deliver(m: Message): void {
    const to = this.nodes[m.to] as Node;
    const from = (this.nodes[m.from] as Node).address;
    switch (m.kind) {
      case "init-join":
        this.inFlight.push({
          from: m.to,
          to: m.from,
          kind: to.cluster === undefined ? "nack" : "ack",
        });
        return;
      case "join":
        if (to.cluster !== undefined)
          this.inFlight.push({ from: m.to, to: m.from, kind: "welcome", cluster: to.cluster });
        return;
      case "ack":
        this.perform(m.to, to.machine.handle({ type: "init-join-ack", from }));
        return;
      case "nack":
        this.perform(m.to, to.machine.handle({ type: "init-join-nack", from }));
        return;
      case "welcome": {
        const outputs = to.machine.handle({ type: "welcome", from });
        // accepted (the Join went to this node): now a member of the welcoming cluster
        if (outputs.some((o) => o.type === "joined")) to.cluster ??= m.cluster;
        this.perform(m.to, outputs);
        return;
      }
    }
  }

  fire(i: number, timer: SeedJoinTimer): void {
    const node = this.nodes[i] as Node;
    node.timers.delete(timer);
    this.perform(i, node.machine.handle({ type: "timeout", timer }));
  }

  /** One adversarial step: deliver, drop or duplicate a message, or fire a timer. */
  chaosStep(random: Xoshiro128): void {
    const timers = this.nodes.flatMap((n, i) => [...n.timers].map((t) => [i, t] as const));
    const choices = this.inFlight.length + timers.length;
    if (choices === 0) return;
    const pick = Math.floor(random.next() * choices);
    if (pick >= this.inFlight.length) {
      const [i, t] = timers[pick - this.inFlight.length] as readonly [number, SeedJoinTimer];
      this.fire(i, t);
      return;
    }
    const m = this.inFlight[pick] as Message;
    const roll = random.next();
    if (roll < 0.1) this.inFlight.push(m); // duplicate (delivered later too)
    this.inFlight.splice(pick, 1);
    if (roll >= 0.2) this.deliver(m); // 0.1 <= roll < 0.2: dropped
  }

  /** Fair: deliver everything in order; when idle, fire the timers in node order. */
  fairRound(): void {
    while (this.inFlight.length > 0) this.deliver(this.inFlight.shift() as Message);
    for (let i = 0; i < this.nodes.length; i++) {
      for (const t of [...(this.nodes[i] as Node).timers]) this.fire(i, t);
      while (this.inFlight.length > 0) this.deliver(this.inFlight.shift() as Message);
    }
  }
}

describe("seed nodes started at once", () => {
  it("form exactly one cluster, formed by the first seed", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer(),
        fc.integer({ min: 0, max: 300 }),
        (n, seedCountRaw, seed, chaosSteps) => {
          const seedCount = Math.min(n, seedCountRaw);
          const sim = new Sim(n, seedCount);
          const random = new Xoshiro128(seed);
          const order = sim.nodes.map((_, i) => i).sort(() => random.next() - 0.5);
          for (const i of order)
            sim.perform(i, sim.nodes[i]?.machine.handle({ type: "start" }) ?? []);
          for (let s = 0; s < chaosSteps; s++) sim.chaosStep(random);
          for (let r = 0; r < 5 && sim.nodes.some((x) => x.machine.phase.type !== "joined"); r++)
            sim.fairRound();
          expect(sim.selfJoins.length).toBeLessThanOrEqual(1);
          expect(sim.selfJoins.every((i) => i === 0)).toBe(true);
          for (const x of sim.nodes) {
            expect(x.machine.phase.type).toBe("joined");
            expect(x.cluster).toBe(0);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
