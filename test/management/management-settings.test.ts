import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import { ClusterNode } from "../../src/index.js";
import {
  isLoopbackHost,
  Router,
  resolveManagementSettings,
  tokenMatches,
} from "../../src/management/index.js";
import { freePorts } from "../cluster-real/cluster-node.js";

function keyOf(f: () => unknown): string {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).key;
  }
  throw new Error("expected a ConfigError");
}

describe("management settings", () => {
  it("defaults to 127.0.0.1:8558 without token", () => {
    const s = resolveManagementSettings({});
    expect(s.host).toBe("127.0.0.1");
    expect(s.port).toBe(8558);
    expect(s.token).toBeUndefined();
  });

  it("refuses a non-loopback host without token, short tokens, bad ports and unknown keys", () => {
    expect(keyOf(() => resolveManagementSettings({ host: "0.0.0.0" }))).toBe("management.token");
    expect(resolveManagementSettings({ host: "0.0.0.0", token: "x".repeat(16) }).host).toBe(
      "0.0.0.0",
    );
    expect(keyOf(() => resolveManagementSettings({ token: "short" }))).toBe("management.token");
    expect(keyOf(() => resolveManagementSettings({ port: 70_000 }))).toBe("management.port");
    expect(keyOf(() => resolveManagementSettings({ host: "h:80" }))).toBe("management.host");
    expect(keyOf(() => resolveManagementSettings({ requestBodyMaxBytes: 0 }))).toBe(
      "management.requestBodyMaxBytes",
    );
    expect(keyOf(() => resolveManagementSettings({ prot: 1 } as unknown as { port: number }))).toBe(
      "management.prot",
    );
    const e = (() => {
      try {
        resolveManagementSettings({ token: "short" });
      } catch (error) {
        return error as ConfigError;
      }
    })();
    expect(e?.message).not.toContain("short");
  });

  it("knows loopback hosts", () => {
    expect(isLoopbackHost("127.0.0.1")).toBe(true);
    expect(isLoopbackHost("127.1.2.3")).toBe(true);
    expect(isLoopbackHost("::1")).toBe(true);
    expect(isLoopbackHost("localhost")).toBe(true);
    expect(isLoopbackHost("0.0.0.0")).toBe(false);
    expect(isLoopbackHost("10.0.0.1")).toBe(false);
  });

  it("compares tokens by value", () => {
    expect(tokenMatches("a".repeat(20), "a".repeat(20))).toBe(true);
    expect(tokenMatches("a".repeat(20), "b".repeat(20))).toBe(false);
    expect(tokenMatches("a", "a".repeat(20))).toBe(false);
  });

  it("ClusterNode.start refuses management on 0.0.0.0 without token before binding", async () => {
    const [port] = await freePorts(1);
    const error = await ClusterNode.start({
      systemName: "sk",
      port,
      seedNodes: [],
      handleSignals: false,
      management: { host: "0.0.0.0", port: 0 },
    }).catch((x: unknown) => x);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe("management.token");
    const s = createServer();
    await new Promise<void>((ok, fail) => {
      s.once("error", fail);
      s.listen(port, "127.0.0.1", () => ok());
    });
    await new Promise<void>((ok) => s.close(() => ok()));
  });
});

describe("router", () => {
  it("matches methods and captures decoded segments", () => {
    const r = new Router();
    const h = () => ({ status: 200, body: {} });
    r.register("GET", "/cluster/members/{address}", h);
    r.register("PUT", "/cluster/members/{address}", h);
    const m = r.match("GET", "/cluster/members/sk%40127.0.0.1%3A2552");
    expect(m.type).toBe("found");
    if (m.type === "found") {
      expect(m.params).toEqual({ address: "sk@127.0.0.1:2552" });
      expect(m.route.write).toBe(false);
    }
    const put = r.match("PUT", "/cluster/members/x");
    expect(put.type === "found" && put.route.write).toBe(true);
    expect(r.match("DELETE", "/cluster/members/x")).toEqual({
      type: "method-not-allowed",
      allowed: ["GET", "PUT"],
    });
    expect(r.match("GET", "/cluster/members/a/b").type).toBe("not-found");
    expect(r.match("GET", "/cluster/members/%E0%A4%A").type).toBe("not-found");
    expect(() => r.register("GET", "/cluster/members/{address}", h)).toThrow(/already/);
  });
});
