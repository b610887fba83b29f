/**
 * A bounded stash: messages an actor sets aside until it changes state. Overflow throws
 * StashOverflowError inside the handler, which the actor's supervisor then handles.
 */
import { StashOverflowError } from "../base/errors.js";
import type { StashBuffer } from "./behavior.js";

export interface StashHost {
  readonly pathString: string;
  prependMessages(messages: unknown[]): void;
  deadLetterAll(messages: unknown[]): void;
  /**
   * What to keep for `message`: the message itself, or the scoped message it is being
   * handled from (actor/internal.ts, ScopedMessage), so that it is handled in its scope
   * again once unstashed.
   */
  scopeOf(message: unknown): unknown;
}

export class ActorStash<M> implements StashBuffer<M> {
  private items: M[] = [];

  constructor(
    private readonly host: StashHost,
    readonly capacity: number,
  ) {}

  stash(message: M): void {
    if (this.items.length >= this.capacity)
      throw new StashOverflowError(this.host.pathString, this.capacity);
    this.items.push(this.host.scopeOf(message) as M);
  }

  unstashAll(): void {
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.host.prependMessages(items);
  }

  clear(): void {
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.host.deadLetterAll(items);
  }

  get size(): number {
    return this.items.length;
  }
  get isEmpty(): boolean {
    return this.items.length === 0;
  }
  get isFull(): boolean {
    return this.items.length >= this.capacity;
  }
}
