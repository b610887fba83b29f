/**
 * Seed-node strings at the edges of the accepted forms (src/core/membership/seed-address.ts):
 * blank strings, a path or an at-sign at the very start, a protocol-like text after the
 * address, broken IPv6 brackets, hosts with characters no host has, ports written as other
 * numbers, the highest port, and the texts of the errors.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import { parseSeedAddress, parseSeedAddresses } from "../../../src/core/membership/seed-address.js";

const messageOf = (value: unknown): string => {
  try {
    parseSeedAddress(value, "k", "shop");
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error(`accepted ${String(value)}`);
};

describe("seed address edges", () => {
  it("refuses a blank string as a non-empty string", () => {
    expect(messageOf("   ")).toContain('a non-empty string "host:port"');
    expect(messageOf("")).toContain("a non-empty string");
  });

  it("names the protocols it takes", () => {
    expect(messageOf("http://shop@h:1")).toContain(
      "use one of akka, akka.tcp, akka.ssl.tcp, pekko, pekko.tcp, shardkit, or leave it out",
    );
  });

  it("a path is refused wherever it starts, and quoted from its slash", () => {
    expect(messageOf("/user/x")).toContain('a node address, not an actor path ("/user/x")');
    expect(messageOf("h:1/user")).toContain('not an actor path ("/user")');
    // a scheme-like text after the address is part of the path, not a protocol
    expect(messageOf("h:1/x://y")).toContain("not an actor path");
  });

  it("an empty system name before @ is another system", () => {
    expect(messageOf("@h:1")).toContain('(it names "")');
  });

  it("refuses broken IPv6 brackets", () => {
    expect(messageOf("[::1")).toContain('an IPv6 host as "[::1]:2552"');
    expect(messageOf("[::1]2552")).toContain('an IPv6 host as "[::1]:2552"');
    expect(parseSeedAddress("[fe80::1]:1", "k", "shop").host).toBe("fe80::1");
  });

  it("refuses host names with characters no host has", () => {
    expect(messageOf("a b:1")).toContain('"a b" is not a host name or IP address');
    expect(messageOf("h$x:1")).toContain("is not a host name");
  });

  it("takes only plain decimal ports up to 65535", () => {
    for (const port of ["+1", "1e3", "0x10", "123456"])
      expect(messageOf(`h:${port}`), port).toContain(`port "${port}" is not in [1, 65535]`);
    expect(parseSeedAddress("h:65535", "k", "shop").port).toBe(65_535);
    expect(parseSeedAddress("h:1", "k", "shop").port).toBe(1);
  });

  it("asks for an array of seed nodes", () => {
    expect(() => parseSeedAddresses({}, "seedNodes", "shop")).toThrow(
      "an array of seed node addresses, each",
    );
  });
});
