/**
 * Mutual TLS between real processes with the fixture certificates (test/fixtures/tls):
 * node-a and node-b (same CA) talk both ways; a node presenting a certificate from a
 * foreign CA is refused by the TLS layer, and the refusal is logged by the server.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { waitForStderr } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import { askEcho, type RemoteNode, startNode, stats, tryCommand } from "./remote-node.js";

installChildTeardown("perFile");

let a: RemoteNode;
let b: RemoteNode;
let foreign: RemoteNode;

const SECRET = "tls-and-a-secret-0123";

beforeAll(async () => {
  [a, b, foreign] = await Promise.all([
    startNode("A", { tls: "node-a" }),
    startNode("B", { tls: "node-b" }),
    startNode("F", { tls: "foreign-node" }),
  ]);
}, 30_000);

describe("mutual TLS", () => {
  it("two nodes with certificates from the cluster CA talk both ways", async () => {
    expect(await askEcho(a, b, "over TLS")).toEqual({ from: b.address, value: "over TLS" });
    expect(await askEcho(b, a, "and back")).toEqual({ from: a.address, value: "and back" });
  }, 20_000);

  it("with a secret too, the proofs bound to the TLS session (exporter) verify on both ends", async () => {
    const [sa, sb] = await Promise.all([
      startNode("SA", { tls: "node-a", secret: SECRET }),
      startNode("SB", { tls: "node-b", secret: SECRET }),
    ]);
    expect(await askEcho(sa, sb, "bound")).toEqual({ from: sb.address, value: "bound" });
    expect(await askEcho(sb, sa, "bound back")).toEqual({ from: sa.address, value: "bound back" });
    const s = await stats(sb);
    expect(s.handshakeRejectsSent + s.handshakeRejectsReceived).toBe(0);
  }, 40_000);

  it("a node with a certificate from a foreign CA is refused", async () => {
    const r = await tryCommand(foreign, "ask", {
      address: b.address,
      value: "x",
      timeoutMs: 1_500,
    });
    expect(r.ok).toBe(false);
    expect(r.code).toBe("ASK_TIMEOUT");
    await waitForStderr(b.child, /rejected inbound TLS connection/, 5_000);
    // The refusal happens below remoting: no handshake ever reached B.
    const sb = await stats(b);
    expect(sb.handshakeRejectsSent).toBe(0);
    expect(sb.inboundConnections).toBe(1); // A's only
    expect(await askEcho(a, b, "still fine")).toEqual({ from: b.address, value: "still fine" });
  }, 20_000);
});
