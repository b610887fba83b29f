/**
 * Typed errors of the sharding API that are not about stored state (those are in
 * sharding-store-codec.ts): callers branch on `code` (docs/architecture.md, house rule 3).
 */
import { ShardkitError } from "../../base/errors.js";

/** An entity type was used on a node where it has not been started (`init`/`start`). */
export class ShardingTypeNotStartedError extends ShardkitError {
  readonly typeName: string;
  constructor(typeName: string) {
    super(
      "SHARDING_TYPE_NOT_STARTED",
      `entity type "${typeName}" is not initialised on this node`,
      { typeName },
    );
    this.typeName = typeName;
  }
}
