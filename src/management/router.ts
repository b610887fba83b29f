/**
 * A small HTTP router for the management server: modules register routes
 * (`GET /cluster/members/{address}`); a request is matched on method and path segments,
 * `{name}` segments are captured (URL-decoded). Handlers return a status and a JSON body;
 * a thrown HttpError becomes `{ error, code }` with its status.
 *
 * Kept free of node:http so route modules (cluster, sharding, health, and later metrics)
 * are testable with plain objects.
 */
import { ConfigError } from "../base/errors.js";

export type HttpMethod = "GET" | "PUT" | "POST" | "DELETE";

export interface RouteRequest {
  readonly method: HttpMethod;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Parsed JSON body (undefined when there is none). */
  readonly body: unknown;
}

export interface RouteResponse {
  readonly status: number;
  /** Serialised as JSON unless `contentType` says otherwise (then a string). */
  readonly body: unknown;
  readonly contentType?: string;
}

export interface RouteOptions {
  /** Writes need the bearer token even on loopback (default: GET is a read, else a write). */
  readonly write?: boolean;
  /** Reachable without a token even when one is configured (health probes). */
  readonly public?: boolean;
}

export type RouteHandler = (req: RouteRequest) => RouteResponse | Promise<RouteResponse>;

/** An error a handler throws to answer with `status` and `{ error, code }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export interface Route {
  readonly method: HttpMethod;
  readonly pattern: string;
  readonly segments: readonly string[];
  readonly handler: RouteHandler;
  readonly write: boolean;
  readonly public: boolean;
}

export type RouteMatch =
  | { readonly type: "found"; readonly route: Route; readonly params: Record<string, string> }
  | { readonly type: "method-not-allowed"; readonly allowed: readonly HttpMethod[] }
  | { readonly type: "not-found" };

function split(path: string): string[] {
  return path.split("/").filter((s) => s !== "");
}

export class Router {
  private readonly routes: Route[] = [];

  /** Registers `handler` for `method` on `pattern` (segments `{name}` capture). */
  register(
    method: HttpMethod,
    pattern: string,
    handler: RouteHandler,
    options: RouteOptions = {},
  ): void {
    const segments = split(pattern);
    if (this.routes.some((r) => r.method === method && r.pattern === pattern))
      throw new ConfigError(
        `management route ${method} ${pattern}`,
        pattern,
        "a route that is not already registered",
      );
    this.routes.push({
      method,
      pattern,
      segments,
      handler,
      write: options.write ?? method !== "GET",
      public: options.public ?? false,
    });
  }

  /** Every registered route (method and pattern), for an index. */
  list(): readonly { readonly method: HttpMethod; readonly pattern: string }[] {
    return this.routes.map((r) => ({ method: r.method, pattern: r.pattern }));
  }

  match(method: string, path: string): RouteMatch {
    const parts = split(path);
    const allowed: HttpMethod[] = [];
    for (const r of this.routes) {
      const params = matchSegments(r.segments, parts);
      if (params === undefined) continue;
      if (r.method === method) return { type: "found", route: r, params };
      allowed.push(r.method);
    }
    return allowed.length > 0 ? { type: "method-not-allowed", allowed } : { type: "not-found" };
  }
}

function matchSegments(
  pattern: readonly string[],
  parts: readonly string[],
): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const v = parts[i] as string;
    if (p.startsWith("{") && p.endsWith("}")) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(v);
      } catch {
        return undefined;
      }
      params[p.slice(1, -1)] = decoded;
    } else if (p !== v) return undefined;
  }
  return params;
}
