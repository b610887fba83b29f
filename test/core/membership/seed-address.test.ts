import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import { parseSeedAddress, parseSeedAddresses } from "../../../src/core/membership/seed-address.js";

function configError(f: () => unknown): ConfigError {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("parseSeedAddress", () => {
  it("accepts host:port, system@host:port and Akka-style addresses of this system", () => {
    const expected = { host: "10.0.0.5", port: 2552, hostPort: "10.0.0.5:2552" };
    expect(parseSeedAddress("10.0.0.5:2552", "k", "shop")).toEqual(expected);
    expect(parseSeedAddress("shop@10.0.0.5:2552", "k", "shop")).toEqual(expected);
    expect(parseSeedAddress("akka://shop@10.0.0.5:2552", "k", "shop")).toEqual(expected);
    expect(parseSeedAddress("akka.tcp://shop@10.0.0.5:2552/", "k", "shop")).toEqual(expected);
    expect(parseSeedAddress("pekko://shop@10.0.0.5:2552", "k", "shop")).toEqual(expected);
    expect(parseSeedAddress(" node-1.svc:25520 ", "k", "shop").hostPort).toBe("node-1.svc:25520");
    expect(parseSeedAddress("[::1]:2552", "k", "shop")).toEqual({
      host: "::1",
      port: 2552,
      hostPort: "::1:2552",
    });
  });

  it("refuses a missing port, naming the setting and hinting at the form", () => {
    const e = configError(() => parseSeedAddresses(["localhost"], "seedNodes", "shop"));
    expect(e.key).toBe("seedNodes[0]");
    expect(e.message).toContain("seedNodes[0]");
    expect(e.message).toContain("no port given");
    expect(e.message).toContain('"localhost:2552"');
  });

  it("refuses an Akka address of another system with a hint", () => {
    const e = configError(() =>
      parseSeedAddresses(["127.0.0.1:1", "akka://shop@127.0.0.1:25559"], "seedNodes", "orders"),
    );
    expect(e.key).toBe("seedNodes[1]");
    expect(e.message).toContain('naming this node\'s system "orders" (it names "shop")');
  });

  it("refuses other protocols, actor paths, bad ports, empty hosts and non-strings", () => {
    expect(configError(() => parseSeedAddress("http://shop@h:1", "k", "shop")).message).toContain(
      'protocol "http"',
    );
    expect(configError(() => parseSeedAddress("akka://h:1", "k", "shop")).message).toContain(
      '"akka://shop@host:port"',
    );
    expect(
      configError(() => parseSeedAddress("akka://shop@h:1/user/x", "k", "shop")).message,
    ).toContain("not an actor path");
    expect(configError(() => parseSeedAddress("h:0", "k", "shop")).message).toContain('port "0"');
    expect(configError(() => parseSeedAddress("h:70000", "k", "shop")).message).toContain(
      'port "70000"',
    );
    expect(configError(() => parseSeedAddress("h:x", "k", "shop")).message).toContain('port "x"');
    expect(configError(() => parseSeedAddress(":1", "k", "shop")).message).toContain(
      "not a host name",
    );
    expect(configError(() => parseSeedAddress("::1:2552", "k", "shop")).message).toContain(
      "IPv6 host in brackets",
    );
    expect(configError(() => parseSeedAddress(42, "k", "shop")).key).toBe("k");
    expect(configError(() => parseSeedAddresses("h:1", "seedNodes", "shop")).key).toBe("seedNodes");
    expect(parseSeedAddresses(undefined, "seedNodes", "shop")).toEqual([]);
  });
});
