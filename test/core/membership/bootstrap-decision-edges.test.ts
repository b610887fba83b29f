/**
 * Bootstrap decisions at their edges (src/core/membership/bootstrap-decision.ts): the
 * address order for lower hosts, other systems and malformed addresses, which of several
 * existing clusters is joined, contact points not probed yet, the exact reasons of the
 * waits, and a set stable for exactly the margin.
 */
import { describe, expect, it } from "vitest";
import {
  type BootstrapObservation,
  type ContactPointProbe,
  compareRemotingAddresses,
  decideBootstrap,
} from "../../../src/core/membership/bootstrap-decision.js";

const CPS = ["10.0.0.1:8558", "10.0.0.2:8558", "10.0.0.3:8558"];
const SELVES = ["sk@10.0.0.1:2552", "sk@10.0.0.2:2552", "sk@10.0.0.3:2552"];
const answered = (self: string, seedNodes: string[] = []): ContactPointProbe => ({
  type: "answered",
  self,
  seedNodes,
});

function obs(self: string, over: Partial<BootstrapObservation> = {}): BootstrapObservation {
  return {
    self,
    contactPoints: CPS,
    probes: new Map(CPS.map((cp, i) => [cp, answered(SELVES[i] as string)])),
    contactPointsStableSinceMs: 0,
    nowMs: 10_000,
    requiredContactPoints: 3,
    stableMarginMs: 5_000,
    ...over,
  };
}

describe("bootstrap decision edges", () => {
  it("orders by host first, whatever the system name and the ports", () => {
    expect(compareRemotingAddresses("s@a:2", "s@b:1")).toBe(-1);
    expect(compareRemotingAddresses("s@b:1", "s@a:2")).toBe(1);
    expect(compareRemotingAddresses("ab@x:1", "ba@x:1")).toBe(0);
    expect(compareRemotingAddresses("z@a:5", "a@a:7")).toBeLessThan(0);
  });

  it("compares malformed addresses as strings", () => {
    // no host (colon right after @), no port number: the whole strings are compared
    expect(compareRemotingAddresses("s@:10", "s@:9")).toBe(-1);
    expect(compareRemotingAddresses("s@:9", "s@:10")).toBe(1);
    expect(compareRemotingAddresses("s@:9", "s@:9")).toBe(0);
    expect(compareRemotingAddresses("s@a:x", "s@a:1")).toBe(1);
    expect(compareRemotingAddresses("s@a:1", "s@a:x")).toBe(-1);
    expect(compareRemotingAddresses("s@a:x", "s@a:x")).toBe(0);
  });

  it("joins the cluster of the lowest answering address that has one, never a node without", () => {
    const probes = new Map<string, ContactPointProbe>([
      ["10.0.0.1:8558", answered("sk@10.0.0.1:2552")],
      ["10.0.0.3:8558", answered("sk@10.0.0.3:2552", ["sk@10.0.0.3:2552"])],
      ["10.0.0.2:8558", answered("sk@10.0.0.2:2552", ["sk@10.0.0.2:2552", "sk@10.0.0.5:2552"])],
    ]);
    // contact points in an order that is not the address order
    const contactPoints = ["10.0.0.1:8558", "10.0.0.3:8558", "10.0.0.2:8558"];
    expect(decideBootstrap(obs("sk@10.0.0.9:2552", { probes, contactPoints }))).toEqual({
      type: "join",
      seedNodes: ["sk@10.0.0.2:2552", "sk@10.0.0.5:2552"],
    });
  });

  it("waits for contact points not probed yet, naming them", () => {
    const probes = new Map<string, ContactPointProbe>([["10.0.0.1:8558", answered(SELVES[0]!)]]);
    expect(decideBootstrap(obs("sk@10.0.0.1:2552", { probes }))).toEqual({
      type: "wait",
      reason:
        "contact points not answering: 10.0.0.2:8558 (not probed yet), 10.0.0.3:8558 (not probed yet)",
    });
  });

  it("names the contact points this node is not among", () => {
    expect(decideBootstrap(obs("sk@10.0.0.9:2552"))).toEqual({
      type: "wait",
      reason:
        "this node (sk@10.0.0.9:2552) is not among the contact points (10.0.0.1:8558, 10.0.0.2:8558, 10.0.0.3:8558)",
    });
  });

  it("a set stable for exactly the margin is stable", () => {
    expect(decideBootstrap(obs(SELVES[0]!, { contactPointsStableSinceMs: 5_000 }))).toEqual({
      type: "form",
    });
    expect(decideBootstrap(obs(SELVES[0]!, { contactPointsStableSinceMs: 5_001 })).type).toBe(
      "wait",
    );
  });

  it("its own answer naming a cluster is no cluster to join", () => {
    const probes = new Map(obs("x").probes);
    probes.set("10.0.0.1:8558", answered(SELVES[0]!, [SELVES[0]!, "sk@10.0.0.7:2552"]));
    expect(decideBootstrap(obs(SELVES[0]!, { probes }))).toEqual({ type: "form" });
  });
});
