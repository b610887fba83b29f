/**
 * The management HTTP server (node:http): routes from a Router, JSON in and out, bounds
 * on request body size (413), requests per client and window (429) and handler time
 * (503), bearer-token checks in constant time. Errors are `{ error, code }`.
 *
 * Authorisation (docs/operations.md, "Management API"):
 * - public routes (the health probes) never need the token;
 * - with a token configured, every other route needs `Authorization: Bearer <token>`
 *   (missing: 401, wrong: 403);
 * - without one (loopback only), reads are open and writes are refused (403): making a
 *   member leave or be downed always needs the token.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ShardkitError } from "../base/errors.js";
import type { Logger } from "../ports/logger.js";
import { HttpError, type HttpMethod, type RouteResponse, type Router } from "./router.js";
import type { ManagementSettings } from "./settings.js";

/** Bound of the per-client rate table; it is cleared when full (clients are few). */
const RATE_CLIENTS_TRACKED_MAX = 10_000;
const METHODS = new Set<string>(["GET", "PUT", "POST", "DELETE"]);

/** `{ error, code }` with `status`. */
function errorResponse(status: number, code: string, error: string): RouteResponse {
  return { status, body: { error, code } };
}

/** Constant-time comparison of a presented token with the configured one. */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The status a ShardkitError thrown by a handler maps to. */
export function statusOfError(error: unknown): RouteResponse {
  if (error instanceof HttpError) return errorResponse(error.status, error.code, error.message);
  if (error instanceof ShardkitError) {
    switch (error.code) {
      case "INVALID_ADDRESS":
      case "CONFIG_INVALID":
        return errorResponse(400, error.code, error.message);
      case "SHARDING_TYPE_NOT_STARTED":
        return errorResponse(404, error.code, error.message);
      case "ASK_TIMEOUT":
        return errorResponse(503, error.code, error.message);
    }
    return errorResponse(500, error.code, error.message);
  }
  return errorResponse(500, "INTERNAL", error instanceof Error ? error.message : String(error));
}

export class ManagementHttpServer {
  private readonly rate = new Map<string, { windowStart: number; count: number }>();

  private constructor(
    private readonly server: Server,
    private readonly settings: ManagementSettings,
    private readonly router: Router,
    private readonly log: Logger,
  ) {}

  /** Listens on settings.host:settings.port; rejects (nothing left open) if it cannot. */
  static async start(
    settings: ManagementSettings,
    router: Router,
    log: Logger,
  ): Promise<ManagementHttpServer> {
    const server = createServer();
    const s = new ManagementHttpServer(server, settings, router, log);
    server.on("request", (req, res) => void s.onRequest(req, res));
    server.requestTimeout = settings.requestTimeoutMs * 2;
    server.headersTimeout = settings.requestTimeoutMs;
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((ok, fail) => {
      server.once("error", fail);
      server.listen(settings.port, settings.host, () => {
        server.off("error", fail);
        ok();
      });
    });
    server.on("error", (error) => log.error("management server error", { error }));
    return s;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://host:port` of this server (IPv6 hosts in brackets). */
  get url(): string {
    const h = this.settings.host.includes(":") ? `[${this.settings.host}]` : this.settings.host;
    return `http://${h === "0.0.0.0" || h === "[::]" ? "127.0.0.1" : h}:${this.port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((ok) => {
      this.server.close(() => ok());
      this.server.closeAllConnections();
    });
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const r = await this.respond(req);
      this.send(res, r);
    } catch (error) {
      this.log.error("management request failed", { error });
      this.send(res, statusOfError(error));
    }
  }

  private send(res: ServerResponse, r: RouteResponse): void {
    if (res.headersSent) return;
    const text =
      r.contentType === undefined ? `${JSON.stringify(r.body, null, 2)}\n` : String(r.body);
    const headers: Record<string, string | number> = {
      "content-type": r.contentType ?? "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(text),
      "cache-control": "no-store",
    };
    if (r.status === 401) headers["www-authenticate"] = 'Bearer realm="shardkit"';
    if (r.status === 429) headers["retry-after"] = Math.ceil(this.settings.rateWindowMs / 1000);
    res.writeHead(r.status, headers);
    res.end(text);
  }

  private allowRate(client: string): boolean {
    const now = Date.now();
    let e = this.rate.get(client);
    if (e === undefined || now - e.windowStart >= this.settings.rateWindowMs) {
      if (e === undefined && this.rate.size >= RATE_CLIENTS_TRACKED_MAX) this.rate.clear();
      e = { windowStart: now, count: 0 };
      this.rate.set(client, e);
    }
    e.count++;
    return e.count <= this.settings.requestsPerWindowMax;
  }

  private async respond(req: IncomingMessage): Promise<RouteResponse> {
    if (!this.allowRate(req.socket.remoteAddress ?? "?")) {
      req.resume();
      return errorResponse(429, "RATE_LIMITED", "too many requests; retry later");
    }
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://management");
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > this.settings.requestBodyMaxBytes) {
      req.resume();
      return this.tooLarge();
    }
    const body = await this.readBody(req);
    if (body === undefined) return this.tooLarge();
    if (!METHODS.has(method))
      return errorResponse(405, "METHOD_NOT_ALLOWED", `method ${method} is not supported`);
    const m = this.router.match(method, url.pathname);
    if (m.type === "not-found")
      return errorResponse(404, "NOT_FOUND", `no route ${method} ${url.pathname}`);
    if (m.type === "method-not-allowed")
      return errorResponse(
        405,
        "METHOD_NOT_ALLOWED",
        `${method} is not allowed on ${url.pathname} (allowed: ${m.allowed.join(", ")})`,
      );
    const denied = this.authorize(req, m.route.write, m.route.public);
    if (denied !== undefined) return denied;
    let parsed: unknown;
    if (body.length > 0) {
      try {
        parsed = JSON.parse(body.toString("utf8"));
      } catch (error) {
        return errorResponse(
          400,
          "BAD_JSON",
          `request body is not JSON: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    const handled = Promise.resolve(
      m.route.handler({
        method: method as HttpMethod,
        path: url.pathname,
        params: m.params,
        query: url.searchParams,
        body: parsed,
      }),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<RouteResponse>((ok) => {
      timer = setTimeout(
        () =>
          ok(
            errorResponse(
              503,
              "TIMEOUT",
              `no answer within ${this.settings.requestTimeoutMs} ms (management.requestTimeoutMs)`,
            ),
          ),
        this.settings.requestTimeoutMs,
      );
    });
    try {
      return await Promise.race([handled.catch(statusOfError), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private tooLarge(): RouteResponse {
    return errorResponse(
      413,
      "PAYLOAD_TOO_LARGE",
      `request body larger than ${this.settings.requestBodyMaxBytes} bytes (management.requestBodyMaxBytes)`,
    );
  }

  /** The body, or undefined when it exceeds the bound (the rest is discarded). */
  private readBody(req: IncomingMessage): Promise<Buffer | undefined> {
    const max = this.settings.requestBodyMaxBytes;
    return new Promise((ok, fail) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      req.on("data", (c: Buffer) => {
        if (over) return;
        size += c.length;
        if (size > max) {
          over = true;
          chunks.length = 0;
          return;
        }
        chunks.push(c);
      });
      req.on("end", () => ok(over ? undefined : Buffer.concat(chunks)));
      req.on("error", fail);
    });
  }

  private authorize(
    req: IncomingMessage,
    write: boolean,
    isPublic: boolean,
  ): RouteResponse | undefined {
    if (isPublic) return undefined;
    const token = this.settings.token;
    if (token === undefined)
      return write
        ? errorResponse(
            403,
            "TOKEN_REQUIRED",
            "this operation changes the cluster and needs a bearer token: start the node with management.token",
          )
        : undefined;
    const header = req.headers.authorization;
    if (header === undefined || !/^Bearer\s+/i.test(header))
      return errorResponse(401, "UNAUTHORIZED", "missing bearer token (Authorization: Bearer ...)");
    if (!tokenMatches(header.replace(/^Bearer\s+/i, "").trim(), token))
      return errorResponse(403, "FORBIDDEN", "wrong bearer token");
    return undefined;
  }
}
