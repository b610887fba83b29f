/**
 * R4: a peer with the wrong cluster secret or the wrong system name is refused at the
 * handshake: its asks time out, both sides log the refusal, and the handshake reject
 * counters show it. A peer with the right secret and name is served (control case).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { waitForStderr } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import {
  askEcho,
  type RemoteNode,
  startNode,
  stats,
  tryCommand,
  waitForStats,
} from "./remote-node.js";

installChildTeardown("perFile");

const SECRET_X = "cluster-secret-xxxxxxxx";
const SECRET_Y = "cluster-secret-yyyyyyyy";
const REFUSED_ASK_TIMEOUT_MS = 1_500;

let a: RemoteNode; // sk, secret Y
let b: RemoteNode; // sk, secret X
let c: RemoteNode; // sk, secret X
let d: RemoteNode; // other, secret X

beforeAll(async () => {
  [a, b, c, d] = await Promise.all([
    startNode("A", { secret: SECRET_Y }),
    startNode("B", { secret: SECRET_X }),
    startNode("C", { secret: SECRET_X }),
    startNode("D", { name: "other", secret: SECRET_X }),
  ]);
}, 30_000);

/** `from` asks `to`'s echo and expects the ask to time out. */
async function expectRefusedAsk(from: RemoteNode, to: RemoteNode): Promise<void> {
  const r = await tryCommand(from, "ask", {
    address: to.address,
    value: "let me in",
    timeoutMs: REFUSED_ASK_TIMEOUT_MS,
  });
  expect(r.ok).toBe(false);
  expect(r.code).toBe("ASK_TIMEOUT");
}

describe("R4: wrong cluster secret", () => {
  it("the same secret is served (control case)", async () => {
    expect(await askEcho(c, b, "same secret")).toEqual({ from: b.address, value: "same secret" });
    expect(await askEcho(b, c, "same secret")).toEqual({ from: c.address, value: "same secret" });
  }, 20_000);

  it("a node with another secret is refused both ways, logged and counted on both sides", async () => {
    const bBefore = await stats(b);
    await Promise.all([expectRefusedAsk(a, b), expectRefusedAsk(b, a)]);
    // The accepting side proves first (its ACK); the connecting side cannot verify it,
    // refuses, and tells the acceptor why: both sides log the refusal with its reason.
    await waitForStderr(b.child, /refusing peer.*proof does not match/, 5_000);
    await waitForStderr(a.child, /peer refused the handshake.*bad-secret/, 5_000);
    const sb = await waitForStats(b, (s) => s.handshakeRejectsSent >= 1, 5_000);
    const sa = await waitForStats(a, (s) => s.handshakeRejectsReceived >= 1, 5_000);
    expect(sb.handshakeRejectsReceived).toBeGreaterThanOrEqual(1); // B's own attempt at A
    expect(sa.handshakeRejectsSent).toBeGreaterThanOrEqual(1);
    // Nothing of A's reached B's actors, and the secret itself is never logged.
    expect(sb.userMessagesIn).toBe(bBefore.userMessagesIn);
    for (const line of [...a.child.stderr, ...b.child.stderr]) {
      expect(line).not.toContain(SECRET_X);
      expect(line).not.toContain(SECRET_Y);
    }
    // B keeps serving peers with the right secret.
    expect(await askEcho(c, b, "still here")).toEqual({ from: b.address, value: "still here" });
  }, 20_000);
});

describe("R4: wrong system name", () => {
  it("a node of another actor system is refused both ways, logged and counted", async () => {
    const dBefore = await stats(d);
    await Promise.all([expectRefusedAsk(c, d), expectRefusedAsk(d, c)]);
    await waitForStderr(
      d.child,
      /refusing inbound connection.*system .*sk.*, local .*other/,
      5_000,
    );
    await waitForStderr(c.child, /peer refused the handshake.*system-mismatch/, 5_000);
    await waitForStats(d, (s) => s.handshakeRejectsSent > dBefore.handshakeRejectsSent, 5_000);
    await waitForStats(c, (s) => s.handshakeRejectsReceived >= 1, 5_000);
    expect((await stats(d)).userMessagesIn).toBe(0);
  }, 20_000);
});
