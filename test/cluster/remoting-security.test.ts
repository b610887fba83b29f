/**
 * Remoting's security settings and its start-up refusal (docs/security.md): the new
 * bounds and their defaults, secret lists, and the safe default that a node listening on
 * a non-loopback address needs a secret or TLS unless `insecure: true`.
 */
import { describe, expect, it } from "vitest";
import { ActorSystem } from "../../src/actor/index.js";
import { ConfigError } from "../../src/base/errors.js";
import { Remoting } from "../../src/cluster/remoting/index.js";
import {
  defaultRemotingSettings,
  remotingSecrets,
  remotingSettings,
} from "../../src/cluster/remoting/remoting-settings.js";
import type { Transport, TransportProtection } from "../../src/ports/transport.js";
import { nodeCrypto } from "../../src/runtime/node/node-crypto.js";
import { SimWorld } from "../../src/runtime/sim/index.js";

const SECRET = "sixteen-chars-ok";

describe("remoting security settings", () => {
  it("bound pre-authentication resources by default", () => {
    expect(defaultRemotingSettings.handshakeFrameSizeMaxBytes).toBe(4_096);
    expect(defaultRemotingSettings.unauthenticatedConnectionsMax).toBe(256);
    expect(defaultRemotingSettings.unauthenticatedConnectionsPerHostMax).toBe(32);
    expect(defaultRemotingSettings.handshakeTimeoutMs).toBe(10_000);
    expect(defaultRemotingSettings.insecure).toBe(false);
  });

  it("validate the new keys, naming them", () => {
    for (const [key, value] of [
      ["handshakeFrameSizeMaxBytes", 100],
      ["handshakeFrameSizeMaxBytes", 1 << 20],
      ["unauthenticatedConnectionsMax", 0],
      ["unauthenticatedConnectionsPerHostMax", 1.5],
      ["handshakeTimeoutMs", 0],
      ["insecure", "yes"],
    ] as const)
      expect(() => remotingSettings({ [key]: value })).toThrow(
        expect.objectContaining({ key: `remoting.${key}` }),
      );
  });

  it("accept one secret or a list (rotation), the first proving; refuse bad ones without echoing them", () => {
    expect(remotingSecrets(remotingSettings({ secret: SECRET }))).toEqual([SECRET]);
    const rotating = remotingSettings({ secret: ["new-secret-000000", SECRET] });
    expect(remotingSecrets(rotating)).toEqual(["new-secret-000000", SECRET]);
    expect(remotingSecrets(remotingSettings({}))).toEqual([]);
    for (const bad of ["short", [], [SECRET, "short"], [SECRET, 7], new Array(9).fill(SECRET)]) {
      let error: unknown;
      try {
        remotingSettings({ secret: bad as string[] });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).key).toBe("remoting.secret");
      expect((error as Error).message).not.toContain(SECRET);
    }
  });
});

/** A transport that records whether remoting got as far as listening. */
function stubTransport(protection: TransportProtection | undefined) {
  const t = {
    listened: false,
    protection,
    listen: async () => {
      t.listened = true;
      throw new Error("stub: not listening");
    },
    connect: async () => {
      throw new Error("stub");
    },
    close: async () => {},
  };
  return t satisfies Transport & { listened: boolean };
}

async function tryStart(
  host: string,
  options: { protection?: TransportProtection; secret?: string; insecure?: boolean } = {},
) {
  const world = new SimWorld({ seed: 14, logLevel: "off" });
  const system = ActorSystem.create({ name: "sk", runtime: world.createRuntime("n") });
  const transport = stubTransport(options.protection);
  let error: unknown;
  try {
    await Remoting.start(system, {
      transport,
      crypto: nodeCrypto,
      settings: {
        host,
        port: 2552,
        ...(options.secret ? { secret: options.secret } : {}),
        ...(options.insecure ? { insecure: true } : {}),
      },
    });
  } catch (e) {
    error = e;
  }
  return { error, listened: transport.listened };
}

describe("safe default: a non-loopback address needs a secret or TLS", () => {
  it("refuses to start without either, with an error naming both remedies and insecure", async () => {
    for (const host of ["0.0.0.0", "10.1.2.3", "::", "node-1.example"]) {
      const { error, listened } = await tryStart(host);
      expect(listened).toBe(false);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).key).toBe("remoting.secret");
      expect((error as Error).message).toMatch(/remoting\.secret.*TLS.*remoting\.insecure: true/s);
      expect((error as Error).message).toContain(host);
    }
  });

  it("starts (gets to listen) with a secret, with TLS, with insecure: true, on loopback, in the simulator", async () => {
    const cases = [
      await tryStart("10.1.2.3", { secret: SECRET }),
      await tryStart("10.1.2.3", { protection: "tls" }),
      await tryStart("10.1.2.3", { insecure: true }),
      await tryStart("10.1.2.3", { protection: "isolated" }),
      await tryStart("127.0.0.1"),
      await tryStart("127.3.4.5"),
      await tryStart("localhost"),
      await tryStart("::1"),
    ];
    for (const c of cases) {
      expect(c.listened).toBe(true);
      expect(String(c.error)).toContain("stub: not listening");
    }
  });
});
