import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type BootstrapObservation,
  type ContactPointProbe,
  compareRemotingAddresses,
  decideBootstrap,
} from "../../../src/core/membership/bootstrap-decision.js";

const CPS = ["10.0.0.1:8558", "10.0.0.2:8558", "10.0.0.3:8558"];
const SELVES = ["sk@10.0.0.1:2552", "sk@10.0.0.2:2552", "sk@10.0.0.3:2552"];

function obs(self: string, over: Partial<BootstrapObservation> = {}): BootstrapObservation {
  const probes = new Map<string, ContactPointProbe>(
    CPS.map((cp, i) => [cp, { type: "answered", self: SELVES[i] as string, seedNodes: [] }]),
  );
  return {
    self,
    contactPoints: CPS,
    probes,
    contactPointsStableSinceMs: 0,
    nowMs: 10_000,
    requiredContactPoints: 3,
    stableMarginMs: 5_000,
    ...over,
  };
}

describe("decideBootstrap", () => {
  it("only the lowest address forms a cluster once the set is stable and complete", () => {
    expect(decideBootstrap(obs("sk@10.0.0.1:2552"))).toEqual({ type: "form" });
    expect(decideBootstrap(obs("sk@10.0.0.2:2552"))).toEqual({
      type: "wait",
      reason: "no cluster yet; sk@10.0.0.1:2552 (the lowest address) forms it",
    });
  });

  it("waits while the set is not stable for stableMarginMs", () => {
    const d = decideBootstrap(obs("sk@10.0.0.1:2552", { contactPointsStableSinceMs: 6_000 }));
    expect(d).toEqual({
      type: "wait",
      reason: "contact points stable for 4000 ms of stableMarginMs 5000",
    });
  });

  it("waits for requiredContactPoints", () => {
    const d = decideBootstrap(obs("sk@10.0.0.1:2552", { requiredContactPoints: 4 }));
    expect(d.type).toBe("wait");
    expect(d.type === "wait" && d.reason).toContain("requiredContactPoints is 4");
  });

  it("waits while a contact point does not answer", () => {
    const probes = new Map(obs("x").probes);
    probes.set("10.0.0.3:8558", { type: "failed", reason: "connection refused" });
    const d = decideBootstrap(obs("sk@10.0.0.1:2552", { probes }));
    expect(d).toEqual({
      type: "wait",
      reason: "contact points not answering: 10.0.0.3:8558 (connection refused)",
    });
  });

  it("waits when this node is not among the contact points", () => {
    const d = decideBootstrap(obs("sk@10.0.0.9:2552"));
    expect(d.type === "wait" && d.reason).toContain("is not among the contact points");
  });

  it("joins an existing cluster even when not everything answers or is stable", () => {
    const probes = new Map(obs("x").probes);
    probes.set("10.0.0.3:8558", {
      type: "answered",
      self: "sk@10.0.0.3:2552",
      seedNodes: ["sk@10.0.0.3:2552", "sk@10.0.0.4:2552"],
    });
    probes.set("10.0.0.2:8558", { type: "failed", reason: "timeout" });
    expect(
      decideBootstrap(obs("sk@10.0.0.1:2552", { probes, contactPointsStableSinceMs: 9_999 })),
    ).toEqual({ type: "join", seedNodes: ["sk@10.0.0.3:2552", "sk@10.0.0.4:2552"] });
  });

  it("never joins through itself: a cluster lists a joiner as up before its welcome arrives", () => {
    // Seen on real processes: the leader moved the joiner up and answered probes with it
    // as a seed node; the joiner's next round picked itself and formed a second cluster.
    const probes = new Map(obs("x").probes);
    probes.set("10.0.0.1:8558", {
      type: "answered",
      self: "sk@10.0.0.1:2552",
      seedNodes: ["sk@10.0.0.1:2552", "sk@10.0.0.2:2552"],
    });
    expect(decideBootstrap(obs("sk@10.0.0.2:2552", { probes }))).toEqual({
      type: "join",
      seedNodes: ["sk@10.0.0.1:2552"],
    });
    // only itself listed (the others' answers are not in yet): wait for the welcome
    probes.set("10.0.0.1:8558", {
      type: "answered",
      self: "sk@10.0.0.1:2552",
      seedNodes: ["sk@10.0.0.2:2552"],
    });
    expect(decideBootstrap(obs("sk@10.0.0.2:2552", { probes }))).toEqual({
      type: "wait",
      reason: "the cluster of sk@10.0.0.1:2552 lists only this node as up: waiting for its welcome",
    });
  });

  it("property: a join decision never names this node as a seed", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 65_535 }), { minLength: 2, maxLength: 8 }),
        fc.array(fc.array(fc.nat(7), { maxLength: 4 }), { minLength: 8, maxLength: 8 }),
        fc.nat(7),
        (ports, listed, selfIndex) => {
          const selves = ports.map((p) => `sk@10.0.0.1:${p}`);
          const cps = ports.map((p) => `10.0.0.1:${p}`);
          const self = selves[selfIndex % selves.length] as string;
          const probes = new Map<string, ContactPointProbe>(
            cps.map((cp, i) => [
              cp,
              {
                type: "answered",
                self: selves[i] as string,
                seedNodes: (listed[i] ?? []).map((j) => selves[j % selves.length] as string),
              },
            ]),
          );
          const d = decideBootstrap({
            self,
            contactPoints: cps,
            probes,
            contactPointsStableSinceMs: 0,
            nowMs: 10_000,
            requiredContactPoints: 1,
            stableMarginMs: 1_000,
          });
          if (d.type === "join") {
            expect(d.seedNodes.length).toBeGreaterThan(0);
            expect(d.seedNodes).not.toContain(self);
          }
        },
      ),
    );
  });

  it("orders addresses by host, then numeric port", () => {
    expect(compareRemotingAddresses("s@a:9000", "s@a:10000")).toBeLessThan(0);
    expect(compareRemotingAddresses("s@b:1", "s@a:2")).toBeGreaterThan(0);
  });

  it("property: at most one member of a stable set decides to form", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 65_535 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 8 }),
        (ports, required) => {
          const cps = ports.map((p) => `10.0.0.1:${p}`);
          const selves = ports.map((p) => `sk@10.0.0.1:${p}`);
          const probes = new Map<string, ContactPointProbe>(
            cps.map((cp, i) => [
              cp,
              { type: "answered", self: selves[i] as string, seedNodes: [] },
            ]),
          );
          const forming = selves.filter(
            (self) =>
              decideBootstrap({
                self,
                contactPoints: cps,
                probes,
                contactPointsStableSinceMs: 0,
                nowMs: 10_000,
                requiredContactPoints: required,
                stableMarginMs: 1_000,
              }).type === "form",
          );
          expect(forming.length).toBe(required <= ports.length ? 1 : 0);
          if (forming.length === 1) expect(forming[0]).toBe(`sk@10.0.0.1:${Math.min(...ports)}`);
        },
      ),
    );
  });
});
