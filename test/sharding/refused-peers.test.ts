/**
 * RefusedPeers (src/cluster/sharding/refused-peers.ts): the set of peers whose port
 * refused a connection since their last established association, the hint that moves
 * leased shards before the failure detector notices a crash.
 */
import { describe, expect, it } from "vitest";
import type {
  AssociationEvent,
  AssociationListener,
} from "../../src/cluster/remoting/association-failure.js";
import type { Remoting } from "../../src/cluster/remoting/remoting.js";
import { RefusedPeers } from "../../src/cluster/sharding/refused-peers.js";

function fakeRemoting() {
  const listeners = new Set<AssociationListener>();
  const remoting = {
    onAssociationEvent(l: AssociationListener) {
      listeners.add(l);
      return { dispose: () => listeners.delete(l) };
    },
  } as unknown as Remoting;
  const emit = (e: AssociationEvent) => {
    for (const l of listeners) l(e);
  };
  return { remoting, emit, listeners };
}

const refused = (hostPort: string): AssociationEvent => ({
  type: "failed",
  hostPort,
  failure: { cause: "connection-refused", detail: "ECONNREFUSED" },
});

describe("RefusedPeers", () => {
  it("adds a peer on a refused connection and removes it once an association is established, reporting each change once", () => {
    const { remoting, emit } = fakeRemoting();
    const changes: [string, boolean][] = [];
    const peers = new RefusedPeers(remoting, (p, r) => changes.push([p, r]));
    emit(refused("10.0.0.1:2552"));
    emit(refused("10.0.0.1:2552"));
    expect(peers.has("10.0.0.1:2552")).toBe(true);
    expect(peers.has("10.0.0.2:2552")).toBe(false);
    emit({ type: "established", hostPort: "10.0.0.2:2552" });
    emit({ type: "established", hostPort: "10.0.0.1:2552" });
    expect(peers.has("10.0.0.1:2552")).toBe(false);
    expect(changes).toEqual([
      ["10.0.0.1:2552", true],
      ["10.0.0.1:2552", false],
    ]);
  });

  it("ignores other failures: a timeout or a refused handshake is no sign that the process is gone", () => {
    const { remoting, emit } = fakeRemoting();
    const changes: [string, boolean][] = [];
    const peers = new RefusedPeers(remoting, (p, r) => changes.push([p, r]));
    for (const cause of [
      "connect-timeout",
      "handshake-refused",
      "handshake-timeout",
      "dns-failure",
    ] as const)
      emit({ type: "failed", hostPort: "10.0.0.1:2552", failure: { cause, detail: cause } });
    expect(peers.has("10.0.0.1:2552")).toBe(false);
    expect(changes).toEqual([]);
  });

  it("stops listening when disposed", () => {
    const { remoting, emit, listeners } = fakeRemoting();
    const peers = new RefusedPeers(remoting, () => {});
    peers.dispose();
    expect(listeners.size).toBe(0);
    emit(refused("10.0.0.1:2552"));
    expect(peers.has("10.0.0.1:2552")).toBe(false);
  });
});
