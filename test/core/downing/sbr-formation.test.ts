/** The resolver before first convergence (core/downing/sbr-formation.ts). */
import { describe, expect, it } from "vitest";
import {
  countsAsFirstConvergence,
  gateBeforeFirstConvergence,
} from "../../../src/core/downing/sbr-formation.js";
import { addressOf } from "../../../src/core/membership/address.js";
import { uniqueAddressOf } from "../../../src/core/membership/unique-address.js";

const node = (h: string) => uniqueAddressOf(addressOf("shardkit", "sk", h, 2552), 1);
const [a, b, c] = [node("a"), node("b"), node("c")];

describe("sbr formation gate", () => {
  it("a leaving member has been up, so its cluster has first converged; a down one has no say", () => {
    expect(countsAsFirstConvergence("leaving")).toBe(true);
    expect(countsAsFirstConvergence("down")).toBe(false);
    expect(countsAsFirstConvergence("removed")).toBe(false);
  });

  it("first convergence: self is up (or leaving, exiting), moved up by a converged leader", () => {
    expect(countsAsFirstConvergence("up")).toBe(true);
    expect(countsAsFirstConvergence("exiting")).toBe(true);
    expect(countsAsFirstConvergence("weakly-up")).toBe(false);
    expect(countsAsFirstConvergence("joining")).toBe(false);
    expect(countsAsFirstConvergence(undefined)).toBe(false);
  });

  it("before it, others are not downed; self may always be", () => {
    expect(gateBeforeFirstConvergence([b, c], a, false, false)).toEqual({
      down: [],
      withheld: [b, c],
    });
    expect(gateBeforeFirstConvergence([a, b, c], a, false, false)).toEqual({
      down: [a],
      withheld: [b, c],
    });
  });

  it("after it, or with actBeforeFirstConvergence, decisions apply unchanged", () => {
    expect(gateBeforeFirstConvergence([b, c], a, true, false)).toEqual({
      down: [b, c],
      withheld: [],
    });
    expect(gateBeforeFirstConvergence([b, c], a, false, true)).toEqual({
      down: [b, c],
      withheld: [],
    });
  });
});
