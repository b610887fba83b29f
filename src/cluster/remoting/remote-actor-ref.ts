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

  constructor(
    readonly core: SystemCore,
    private readonly host: RemoteRefHost,
    readonly node: WireNode,
    readonly elements: readonly string[],
    readonly uid: number,
    /** `/user/a#uid`, precomputed: it goes into every envelope. */
    readonly wirePath: string,
  ) {}

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
