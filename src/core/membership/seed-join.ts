/**
 * The joining side of the seed-node conversation (docs/cluster.md, "Joining"), as a small
 * state machine: inputs in, outputs (messages to send, timers to start) out. The driver
 * owns the timers and the network; it feeds a `timeout` input when a timer it started
 * fires, and performs the outputs in order.
 *
 * - The FIRST seed node of the configured list sends InitJoin to the other seeds,
 *   re-sends every seedNodeInitJoinResendIntervalMs to those that have not nacked, and
 *   joins the first one that acks. When all of them nack (nobody has formed a cluster)
 *   or seedNodeTimeoutMs passes without an ack, it joins itself and so forms the cluster.
 * - Every OTHER node (another seed, or no seed at all) sends InitJoin to all seeds but
 *   itself, joins the first that acks, and retries every seedNodeTimeoutMs for ever.
 *   It never joins itself.
 * - After Join, a Welcome ends the conversation; without one after
 *   retryUnsuccessfulJoinAfterMs (0 = never) the whole process starts again.
 *
 * Invariant that makes seeds started at once form ONE cluster: only the first seed can
 * join itself; every other node joins a node that acked, and only a node that has
 * joined a cluster acks. So every cluster formed from these seeds is rooted at the
 * first seed's self-join.
 */
import { assert } from "../../base/assert.js";
import { type Address, addressEquals, addressToString } from "./address.js";

/** The machine's timers; at most one of each runs at a time. */
export const SeedJoinTimer = {
  /** Seed-node timeout: retry (other nodes) or join self (first seed). */
  SeedNodeTimeout: "seed-node-timeout",
  /** First seed only: re-send InitJoin. */
  InitJoinResend: "init-join-resend",
  /** No Welcome after Join: start over. */
  JoinRetry: "join-retry",
} as const;

/** The machine's timers; at most one of each runs at a time. */
export type SeedJoinTimer = (typeof SeedJoinTimer)[keyof typeof SeedJoinTimer];

/** Configuration of one joining node. */
export interface SeedJoinConfig {
  readonly self: Address;
  /** Configured seed nodes, in configured order (the first one may form the cluster). */
  readonly seedNodes: readonly Address[];
  readonly seedNodeTimeoutMs: number;
  readonly seedNodeInitJoinResendIntervalMs: number;
  /** 0 = never retry. */
  readonly retryUnsuccessfulJoinAfterMs: number;
}

/** Inputs of the machine. */
export type SeedJoinInput =
  | { readonly type: "start" }
  | { readonly type: "init-join-ack"; readonly from: Address }
  | { readonly type: "init-join-nack"; readonly from: Address }
  | { readonly type: "timeout"; readonly timer: SeedJoinTimer }
  | { readonly type: "welcome"; readonly from: Address };

/** Outputs of the machine, to be performed in order. */
export type SeedJoinOutput =
  | { readonly type: "send-init-join"; readonly to: readonly Address[] }
  | { readonly type: "send-join"; readonly to: Address }
  /** Join self (the driver runs onJoin for the self node): a new cluster is formed. */
  | { readonly type: "join-self" }
  | { readonly type: "start-timer"; readonly timer: SeedJoinTimer; readonly delayMs: number }
  | { readonly type: "cancel-timer"; readonly timer: SeedJoinTimer }
  /** The conversation is over: self is a member, through `via` (self when it formed it). */
  | { readonly type: "joined"; readonly via: Address };

/** Where the machine is. */
export type SeedJoinPhase =
  | { readonly type: "idle" }
  | { readonly type: "first-seed-probing"; readonly remaining: readonly Address[] }
  | { readonly type: "probing"; readonly attempt: number }
  | { readonly type: "joining"; readonly to: Address }
  | { readonly type: "joined"; readonly via: Address };

/** The joining side of the seed-node conversation (see the module comment). */
export class SeedJoinMachine {
  private current: SeedJoinPhase = { type: "idle" };

  constructor(private readonly config: SeedJoinConfig) {
    assert(config.seedNodes.length > 0, "seed join needs at least one seed node");
    assert(config.seedNodeTimeoutMs > 0, "seedNodeTimeoutMs must be > 0");
    assert(config.seedNodeInitJoinResendIntervalMs > 0, "resend interval must be > 0");
  }

  /** The current phase (plain data). */
  get phase(): SeedJoinPhase {
    return this.current;
  }

  /** True if self is the first configured seed node (the only one that may join itself). */
  get isFirstSeed(): boolean {
    const first = this.config.seedNodes[0] as Address;
    return addressEquals(first, this.config.self);
  }

  /** Feeds one input; returns the outputs to perform, in order. */
  handle(input: SeedJoinInput): SeedJoinOutput[] {
    switch (input.type) {
      case "start":
        return this.current.type === "idle" ? this.becomeProbing() : [];
      case "init-join-ack":
        return this.onAck(input.from);
      case "init-join-nack":
        return this.onNack(input.from);
      case "timeout":
        return this.onTimeout(input.timer);
      case "welcome":
        return this.onWelcome(input.from);
    }
  }

  private otherSeeds(): Address[] {
    const seen = new Set<string>();
    return this.config.seedNodes.filter((a) => {
      const k = addressToString(a);
      if (addressEquals(a, this.config.self) || seen.has(k)) return false;
      seen.add(k);
      return true;
    });
  }

  private becomeProbing(): SeedJoinOutput[] {
    const others = this.otherSeeds();
    const { seedNodeTimeoutMs, seedNodeInitJoinResendIntervalMs } = this.config;
    if (this.isFirstSeed) {
      if (others.length === 0) return this.becomeJoinedSelf([]);
      this.current = { type: "first-seed-probing", remaining: others };
      return [
        { type: "send-init-join", to: others },
        { type: "start-timer", timer: SeedJoinTimer.SeedNodeTimeout, delayMs: seedNodeTimeoutMs },
        {
          type: "start-timer",
          timer: SeedJoinTimer.InitJoinResend,
          delayMs: seedNodeInitJoinResendIntervalMs,
        },
      ];
    }
    this.current = { type: "probing", attempt: 1 };
    return [
      { type: "send-init-join", to: others },
      { type: "start-timer", timer: SeedJoinTimer.SeedNodeTimeout, delayMs: seedNodeTimeoutMs },
    ];
  }

  private becomeJoinedSelf(cancel: SeedJoinTimer[]): SeedJoinOutput[] {
    this.current = { type: "joined", via: this.config.self };
    return [
      ...cancel.map((timer): SeedJoinOutput => ({ type: "cancel-timer", timer })),
      { type: "join-self" },
      { type: "joined", via: this.config.self },
    ];
  }

  private onAck(from: Address): SeedJoinOutput[] {
    const phase = this.current.type;
    if (phase !== "first-seed-probing" && phase !== "probing") return [];
    const cancel: SeedJoinOutput[] =
      phase === "first-seed-probing"
        ? [
            { type: "cancel-timer", timer: SeedJoinTimer.SeedNodeTimeout },
            { type: "cancel-timer", timer: SeedJoinTimer.InitJoinResend },
          ]
        : [{ type: "cancel-timer", timer: SeedJoinTimer.SeedNodeTimeout }];
    this.current = { type: "joining", to: from };
    const retryMs = this.config.retryUnsuccessfulJoinAfterMs;
    const retry: SeedJoinOutput[] =
      retryMs > 0
        ? [{ type: "start-timer", timer: SeedJoinTimer.JoinRetry, delayMs: retryMs }]
        : [];
    return [...cancel, { type: "send-join", to: from }, ...retry];
  }

  private onNack(from: Address): SeedJoinOutput[] {
    if (this.current.type !== "first-seed-probing") return []; // others just wait and retry
    const remaining = this.current.remaining.filter((a) => !addressEquals(a, from));
    this.current = { type: "first-seed-probing", remaining };
    if (remaining.length > 0) return [];
    return this.becomeJoinedSelf([SeedJoinTimer.SeedNodeTimeout, SeedJoinTimer.InitJoinResend]);
  }

  private onTimeout(timer: SeedJoinTimer): SeedJoinOutput[] {
    const phase = this.current;
    switch (timer) {
      case SeedJoinTimer.SeedNodeTimeout:
        if (phase.type === "first-seed-probing")
          return this.becomeJoinedSelf([SeedJoinTimer.InitJoinResend]);
        if (phase.type !== "probing") return [];
        this.current = { type: "probing", attempt: phase.attempt + 1 };
        return [
          { type: "send-init-join", to: this.otherSeeds() },
          {
            type: "start-timer",
            timer: SeedJoinTimer.SeedNodeTimeout,
            delayMs: this.config.seedNodeTimeoutMs,
          },
        ];
      case SeedJoinTimer.InitJoinResend:
        if (phase.type !== "first-seed-probing") return [];
        return [
          { type: "send-init-join", to: phase.remaining },
          {
            type: "start-timer",
            timer: SeedJoinTimer.InitJoinResend,
            delayMs: this.config.seedNodeInitJoinResendIntervalMs,
          },
        ];
      case SeedJoinTimer.JoinRetry:
        if (phase.type !== "joining") return [];
        this.current = { type: "idle" };
        return this.becomeProbing();
    }
  }

  private onWelcome(from: Address): SeedJoinOutput[] {
    if (this.current.type !== "joining" || !addressEquals(this.current.to, from)) return [];
    this.current = { type: "joined", via: from };
    const cancel: SeedJoinOutput[] =
      this.config.retryUnsuccessfulJoinAfterMs > 0
        ? [{ type: "cancel-timer", timer: SeedJoinTimer.JoinRetry }]
        : [];
    return [...cancel, { type: "joined", via: from }];
  }
}
