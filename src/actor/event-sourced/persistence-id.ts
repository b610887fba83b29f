/**
 * persistenceId format of entities: `${typeName}|${entityId}`. The type name may not
 * contain `|` (so the id parses back unambiguously); the entity id may contain anything.
 */
import { ConfigError } from "../../base/errors.js";

export const PERSISTENCE_ID_SEPARATOR = "|";

/** The persistenceId of entity `entityId` of type `typeName`: `typeName|entityId`. */
export function persistenceIdOf(typeName: string, entityId: string): string {
  if (typeof typeName !== "string" || typeName.length === 0 || typeName.includes("|"))
    throw new ConfigError("typeName", typeName, "a non-empty string without '|'");
  if (typeof entityId !== "string" || entityId.length === 0)
    throw new ConfigError("entityId", entityId, "a non-empty string");
  return `${typeName}${PERSISTENCE_ID_SEPARATOR}${entityId}`;
}

/** Splits a persistenceId made by persistenceIdOf (at the first `|`); undefined if it is not one. */
export function parsePersistenceId(
  persistenceId: string,
): { typeName: string; entityId: string } | undefined {
  const at = persistenceId.indexOf(PERSISTENCE_ID_SEPARATOR);
  if (at <= 0 || at === persistenceId.length - 1) return undefined;
  return { typeName: persistenceId.slice(0, at), entityId: persistenceId.slice(at + 1) };
}
