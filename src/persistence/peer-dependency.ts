/**
 * Optional peer dependencies. `better-sqlite3` (for `shardkit/sqlite` and the CLI's
 * `sqlite:` stores) and `pg` (for the CLI's `postgres://` stores; `shardkit/postgres`
 * takes the caller's pool) are optional peers: an application installs only the driver it
 * uses. Loading one that is not installed fails with `MissingPeerDependencyError`, which
 * names the package and the command that installs it.
 */
import { ShardkitError } from "../base/errors.js";

/** A feature needs an optional peer dependency that is not installed. */
export class MissingPeerDependencyError extends ShardkitError {
  constructor(packageName: string, feature: string, cause: unknown) {
    super(
      "MISSING_PEER_DEPENDENCY",
      `${feature} needs the optional peer dependency "${packageName}", which is not installed: run \`npm install ${packageName}\``,
      { packageName, feature },
    );
    this.cause = cause;
  }
}

function isModuleNotFound(error: unknown, packageName: string): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  const message = String((error as { message?: unknown }).message ?? "");
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    message.includes(`'${packageName}'`)
  );
}

/**
 * Imports an optional peer dependency's default export.
 * @throws MissingPeerDependencyError when the package is not installed; any other loading
 * failure (e.g. a native module built for another Node version) is rethrown as it is.
 */
export async function importPeerDependency<T>(packageName: string, feature: string): Promise<T> {
  try {
    const mod = (await import(packageName)) as { default?: T };
    return (mod.default ?? mod) as T;
  } catch (error) {
    if (isModuleNotFound(error, packageName))
      throw new MissingPeerDependencyError(packageName, feature, error);
    throw error;
  }
}

/**
 * Imports an optional peer dependency's module namespace (its named exports).
 * @throws MissingPeerDependencyError when the package is not installed.
 */
export async function importPeerModule<T>(packageName: string, feature: string): Promise<T> {
  try {
    return (await import(packageName)) as T;
  } catch (error) {
    if (isModuleNotFound(error, packageName))
      throw new MissingPeerDependencyError(packageName, feature, error);
    throw error;
  }
}
