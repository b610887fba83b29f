/**
 * Actor paths: the address of the system (later host:port of the node) plus the chain
 * of names from the root guardian, and the incarnation uid that tells two actors with
 * the same path apart over time. Paths are built lazily; idle actors do not store one.
 */
export class ActorPath {
  constructor(
    /** `shardkit://<system>` locally, `shardkit://<system>@<host>:<port>` when remote-capable. */
    readonly address: string,
    /** Names from the root, e.g. ["user", "orders", "order-42"]. */
    readonly elements: readonly string[],
    /** Incarnation id; 0 for well-known singletons such as guardians. */
    readonly uid: number,
  ) {}

  /** The last element (the actor's name). */
  get name(): string {
    return this.elements[this.elements.length - 1] ?? "";
  }

  /** `address/elements` without the uid. */
  toString(): string {
    return `${this.address}/${this.elements.join("/")}`;
  }

  /** Same path and same incarnation. */
  equals(other: ActorPath): boolean {
    return this.uid === other.uid && this.toString() === other.toString();
  }
}

/** A valid user-chosen actor name: non-empty, no '/', '#' or whitespace, not starting with '$'. */
export function validActorName(name: string): string | undefined {
  if (name.length === 0) return "must not be empty";
  if (name.startsWith("$")) return "names starting with '$' are reserved for generated names";
  if (/[/#\s]/.test(name)) return "must not contain '/', '#' or whitespace";
  return undefined;
}
