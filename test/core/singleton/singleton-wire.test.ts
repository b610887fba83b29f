/**
 * The singleton drivers' decisions between the wire and the machines
 * (core/singleton/singleton-wire.ts): the envelope a `send` output becomes, the machine
 * input a received envelope is (or none), and the proxies a manager tells when its
 * instance starts.
 */
import { describe, expect, it } from "vitest";
import {
  parseUniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";
import {
  IdentifyWaiters,
  managerEnvelope,
  managerInputOf,
  parseNode,
} from "../../../src/core/singleton/index.js";
import type { SingletonManagerEnvelope } from "../../../src/protocol/singleton.js";

const a = parseUniqueAddress("shardkit://app@10.0.0.1:2552#1");
const b = parseUniqueAddress("shardkit://app@10.0.0.2:2552#2");
/** The next incarnation of b: same host and port, another uid. */
const b2 = parseUniqueAddress("shardkit://app@10.0.0.2:2552#3");
const B = uniqueAddressToString(b);

describe("managerEnvelope / managerInputOf", () => {
  it("carry a message from one incarnation to another", () => {
    const e = managerEnvelope(a, b, { type: "hand-over-to-me" });
    expect(e).toEqual({
      type: "shardkit.singleton.manager",
      from: uniqueAddressToString(a),
      to: B,
      message: { type: "hand-over-to-me" },
    });
    expect(managerInputOf(e, B)).toEqual({ type: "hand-over-to-me", from: a });
  });

  it("carry wasOldest on hand-over-done only, always as a boolean", () => {
    expect(managerEnvelope(a, b, { type: "hand-over-done" }).message).toEqual({
      type: "hand-over-done",
      wasOldest: false,
    });
    const done = managerEnvelope(a, b, { type: "hand-over-done", wasOldest: true });
    expect(managerInputOf(done, B)).toEqual({ type: "hand-over-done", wasOldest: true, from: a });
    const odd: SingletonManagerEnvelope = {
      ...managerEnvelope(a, b, { type: "takeover-from-me" }),
      message: { type: "takeover-from-me", wasOldest: true } as never,
    };
    expect(managerInputOf(odd, B)).toEqual({ type: "takeover-from-me", from: a });
  });

  it("drop a message meant for another incarnation of the same host:port", () => {
    const e = managerEnvelope(a, b, { type: "hand-over-to-me" });
    expect(managerInputOf(e, uniqueAddressToString(b2))).toBeUndefined();
  });

  it("drop a sender that is not a unique address, and an unknown message type", () => {
    const e = managerEnvelope(a, b, { type: "hand-over-to-me" });
    expect(managerInputOf({ ...e, from: "nonsense" }, B)).toBeUndefined();
    expect(
      managerInputOf({ ...e, message: { type: "give-it-to-me" } as never }, B),
    ).toBeUndefined();
  });

  it("parseNode answers undefined instead of throwing", () => {
    expect(parseNode(B)).toEqual(b);
    expect(parseNode("app@10.0.0.2:2552")).toBeUndefined();
  });
});

describe("IdentifyWaiters", () => {
  it("remember proxies only while no instance runs and the manager has not ended", () => {
    const w = new IdentifyWaiters<string>(10);
    expect(w.identified("/p1", "r1", false, false)).toBe(true);
    expect(w.identified("/p2", "r2", true, false)).toBe(false);
    expect(w.identified("/p3", "r3", false, true)).toBe(false);
    expect(w.identified("/p1", "r1'", false, false)).toBe(true);
    expect(w.size).toBe(1);
    expect(w.takeAll()).toEqual(["r1'"]);
    expect(w.size).toBe(0);
    expect(w.takeAll()).toEqual([]);
  });

  it("keep at most the bound, in the order they asked; clear forgets them", () => {
    const w = new IdentifyWaiters<number>(3);
    for (let i = 0; i < 5; i++) w.identified(`/p${i}`, i, false, false);
    expect(w.size).toBe(3);
    expect(w.identified("/p0", 10, false, false)).toBe(false);
    expect(w.takeAll()).toEqual([0, 1, 2]);
    w.identified("/p9", 9, false, false);
    w.clear();
    expect(w.takeAll()).toEqual([]);
  });
});
