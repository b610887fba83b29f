/**
 * Test helper: replicator machines (core/ddata) on a hostile message bus in virtual time:
 * messages are lost, duplicated, delayed (so reordered) and cut by partitions; members
 * crash and restart as new incarnations, with or without their durable keys. Seeded.
 */
import { Xoshiro128 } from "../../src/base/prng.js";
import {
  type ReplicatorInput,
  ReplicatorMachine,
  type ReplicatorOutput,
  type ReplicatorResult,
} from "../../src/core/ddata/replicator-machine.js";
import type { Envelope, ReplicatorSettings } from "../../src/core/ddata/replicator-types.js";

export interface Faults {
  loss: number;
  duplication: number;
  maxDelayMs: number;
}

export const CALM: Faults = { loss: 0, duplication: 0, maxDelayMs: 5 };

interface Event {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
}

export const NET_SETTINGS: Partial<ReplicatorSettings> = {
  gossipIntervalMs: 100,
  deltaPropagationIntervalMs: 20,
  notifySubscribersIntervalMs: 50,
  pruningIntervalMs: 200,
  operationTimeoutMs: 500,
};

export class MachineNet {
  readonly rnd: Xoshiro128;
  now = 0;
  private seq = 0;
  private queue: Event[] = [];
  faults: Faults = { ...CALM };
  /** name -> live machine. */
  readonly machines = new Map<string, ReplicatorMachine>();
  /** name -> durable envelopes (kept across crashes when durable). */
  readonly disks = new Map<string, Map<string, Envelope>>();
  private readonly incarnation = new Map<string, number>();
  private readonly timers = new Map<string, number>();
  private readonly blocked = new Set<string>();
  private readonly replies = new Map<string, (r: ReplicatorResult) => void>();
  private nextReq = 1;
  /** Member ids that crashed and must be reported removed. */
  readonly removed: string[] = [];

  constructor(
    readonly seed: number,
    readonly durable: boolean,
    private readonly settings: Partial<ReplicatorSettings> = NET_SETTINGS,
  ) {
    this.rnd = new Xoshiro128(seed);
  }

  idOf(name: string): string {
    return `${name}#${this.incarnation.get(name) ?? 0}`;
  }

  nameOf(id: string): string {
    return id.slice(0, id.indexOf("#"));
  }

  start(name: string): void {
    const inc = (this.incarnation.get(name) ?? 0) + 1;
    this.incarnation.set(name, inc);
    const disk = this.disks.get(name) ?? new Map<string, Envelope>();
    this.disks.set(name, disk);
    const m = new ReplicatorMachine({
      self: this.idOf(name),
      settings: this.settings,
      isDurable: () => this.durable,
      initial: this.durable ? [...disk] : [],
      randomInt: (n) => Math.floor(this.rnd.next() * n),
    });
    this.machines.set(name, m);
    this.perform(name, m.start());
    this.announceMembers();
  }

  crash(name: string): void {
    const id = this.idOf(name);
    this.machines.delete(name);
    if (!this.durable) this.disks.delete(name);
    this.removed.push(id);
  }

  /** Tells every live machine about the removed incarnations and the current members. */
  announceRemovals(): void {
    for (const id of this.removed.splice(0))
      for (const name of this.machines.keys())
        this.feed(name, { type: "member-removed", member: id });
    this.announceMembers();
  }

  announceMembers(): void {
    const members = [...this.machines.keys()].map((n) => this.idOf(n));
    for (const name of this.machines.keys())
      this.feed(name, { type: "members", members, unreachable: [] });
  }

  partition(a: readonly string[], b: readonly string[]): void {
    for (const x of a)
      for (const y of b) {
        this.blocked.add(`${x}|${y}`);
        this.blocked.add(`${y}|${x}`);
      }
  }

  heal(): void {
    this.blocked.clear();
  }

  request(name: string, make: (req: number) => ReplicatorInput): Promise<ReplicatorResult> {
    const req = this.nextReq++;
    return new Promise((resolve) => {
      this.replies.set(`${name}:${req}`, resolve);
      this.feed(name, make(req));
    });
  }

  feed(name: string, input: ReplicatorInput): void {
    const m = this.machines.get(name);
    if (m === undefined) return;
    this.perform(name, m.handle(input, this.now));
  }

  private perform(name: string, outputs: readonly ReplicatorOutput[]): void {
    const self = this.machines.get(name);
    for (const o of outputs) {
      switch (o.type) {
        case "send": {
          const to = this.nameOf(o.to);
          if (this.blocked.has(`${name}|${to}`) || this.rnd.next() < this.faults.loss) break;
          const copies = this.rnd.next() < this.faults.duplication ? 2 : 1;
          const from = self?.self as string;
          for (let i = 0; i < copies; i++)
            this.at(this.now + 1 + this.rnd.next() * this.faults.maxDelayMs, () => {
              // Delivered only to the incarnation it was addressed to.
              if (this.machines.get(to)?.self === o.to)
                this.feed(to, { type: "peer", from, msg: o.msg });
            });
          break;
        }
        case "reply": {
          const k = `${name}:${o.req}`;
          this.replies.get(k)?.(o.result);
          this.replies.delete(k);
          break;
        }
        case "store":
          this.disks.get(name)?.set(o.key, o.env);
          break;
        case "start-timer": {
          const id = `${self?.self}:${o.key}`;
          const seq = this.at(this.now + o.delayMs, () => {
            if (this.timers.get(id) !== seq || this.machines.get(name) !== self) return;
            this.timers.delete(id);
            this.feed(name, { type: "timer", key: o.key });
          });
          this.timers.set(id, seq);
          break;
        }
        case "cancel-timer":
          this.timers.delete(`${self?.self}:${o.key}`);
          break;
        case "notify":
          break;
      }
    }
  }

  private at(time: number, run: () => void): number {
    const seq = this.seq++;
    const e = { at: time, seq, run };
    // Binary insertion keeps the queue ordered by (time, seq).
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const q = this.queue[mid] as Event;
      if (q.at < time || (q.at === time && q.seq < seq)) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, e);
    return seq;
  }

  /** Runs events for `ms` of virtual time, or until `until()` holds. */
  async run(ms: number, until: () => boolean = () => false): Promise<boolean> {
    const end = this.now + ms;
    let n = 0;
    let checkedAt = Number.NEGATIVE_INFINITY;
    while (this.queue.length > 0 && (this.queue[0] as Event).at <= end) {
      // The predicate is checked every 10 ms of virtual time (it may be costly).
      if (this.now - checkedAt >= 10) {
        checkedAt = this.now;
        if (until()) return true;
      }
      const e = this.queue.shift() as Event;
      this.now = e.at;
      e.run();
      // Lets promise callbacks of replies run between events.
      if (++n % 50 === 0) await Promise.resolve();
    }
    this.now = Math.max(this.now, end);
    await Promise.resolve();
    return until();
  }

  /** Runs until `p` settles. */
  async settle<T>(p: Promise<T>, limitMs = 10_000): Promise<T> {
    let done: { v: T } | undefined;
    p.then((v) => {
      done = { v };
    });
    for (let i = 0; i < 1000 && done === undefined; i++) {
      await this.run(Math.min(limitMs, 20), () => done !== undefined);
      await Promise.resolve();
    }
    if (done === undefined) throw new Error(`[seed ${this.seed}] request did not settle`);
    return done.v;
  }
}
