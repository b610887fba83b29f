/**
 * RemoteActorRef: an actor on another node. `tell` serializes and queues the message on
 * the association to that node; system messages (watch, unwatch, terminated) go over the
 * reliable system channel. Equality across ref objects is by refKey (path + uid).
 * The ref keeps the encoded recipient field of its envelopes, so a stream of tells
 * encodes the path once.
 */
import { ActorPath } from "../../actor/actor-path.js";
import type { InternalRef, SystemMessage } from "../../actor/internal.js";
import type { SystemCore } from "../../actor/system-core.js";
import { encodeRecipientField } from "../../protocol/user-envelope.js";
import type { WireNode } from "./wire-path.js";

/** What a remote ref needs from remoting. */
export interface RemoteRefHost {
  sendUser(ref: RemoteActorRef, message: unknown): void;
  sendSystemFor(ref: RemoteActorRef, message: SystemMessage): void;
}

export class RemoteActorRef implements InternalRef<unknown> {
  private cachedPath: ActorPath | undefined;
  private cachedRecipientField: Uint8Array | undefined;
  private cachedElements: readonly string[] | undefined;

  /**
   * `elements` undefined: an ask's reply target (`wirePath` = `/temp/$ask<uid>#<uid>`),
   * whose elements are built only if asked for: most are used once, to reply.
   */
  constructor(
    readonly core: SystemCore,
    private readonly host: RemoteRefHost,
    readonly node: WireNode,
    elements: readonly string[] | undefined,
    readonly uid: number,
    /** `/user/a#uid`, precomputed: it goes into every envelope. */
    readonly wirePath: string,
  ) {
    this.cachedElements = elements;
  }

  /** The path's elements, e.g. ["user", "a"]. */
  get elements(): readonly string[] {
    this.cachedElements ??= ["temp", `$ask${this.uid}`];
    return this.cachedElements;
  }

  get path(): ActorPath {
    this.cachedPath ??= new ActorPath(
      `shardkit://${this.node.systemName}@${this.node.hostPort}`,
      this.elements,
      this.uid,
    );
    return this.cachedPath;
  }

  /**
   * `wirePath` as the recipient field of a USER envelope, encoded on first use.
   * @throws SerializationError when the path is longer than 65535 UTF-8 bytes.
   */
  get recipientField(): Uint8Array {
    this.cachedRecipientField ??= encodeRecipientField(this.wirePath);
    return this.cachedRecipientField;
  }

  get isTerminated(): boolean {
    return false;
  }

  tell(message: unknown): void {
    this.host.sendUser(this, message);
  }

  sendSystem(message: SystemMessage): void {
    this.host.sendSystemFor(this, message);
  }

  toString(): string {
    return `RemoteActorRef(${this.path.toString()})`;
  }
}
