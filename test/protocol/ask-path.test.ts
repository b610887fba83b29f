/**
 * The reply target of a remote ask travels as the path `/temp/$ask<id>#<id>`; remoting
 * reads the id from it without splitting it (src/cluster/remoting/wire-path.ts
 * `askIdOfPath`). It must accept exactly the canonical spelling and agree with the
 * general parser on it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { askIdOfPath, parseActorPath } from "../../src/cluster/remoting/wire-path.js";
import { askIdOfPathBytes } from "../../src/protocol/ask-path.js";

/** askIdOfPathBytes of `text` (UTF-8) behind some bytes, with bytes after it. */
function ofBytes(text: string): number {
  const utf8 = new TextEncoder().encode(text);
  const b = new Uint8Array(utf8.length + 5).fill(0x31);
  b.set(utf8, 3);
  return askIdOfPathBytes(b, 3, utf8.length);
}

describe("askIdOfPath", () => {
  it("reads the id of every canonical ask path, as the general parser does (fast-check)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (id) => {
        const path = `/temp/$ask${id}#${id}`;
        expect(askIdOfPath(path)).toBe(id);
        expect(ofBytes(path)).toBe(id);
        expect(parseActorPath(path)).toEqual({ elements: ["temp", `$ask${id}`], uid: id });
      }),
      { numRuns: 500 },
    );
    expect(askIdOfPath("/temp/$ask1#1")).toBe(1);
    expect(askIdOfPath("/temp/$ask9007199254740991#9007199254740991")).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });

  it("answers -1 for every other path (they take the general way)", () => {
    for (const path of [
      "",
      "/temp/$ask",
      "/temp/$ask#",
      "/temp/$ask1",
      "/temp/$ask1#",
      "/temp/$ask1#0",
      "/temp/$ask1#2",
      "/temp/$ask12#21",
      "/temp/$ask12#1",
      "/temp/$ask1#12",
      "/temp/$ask01#01",
      "/temp/$ask0#0",
      "/temp/$ask1a#1a",
      "/temp/$ask 1# 1",
      "/temp/$ask1#1x",
      "/temp/$ask1/x#1",
      "/temp/$Ask1#1",
      "/temp/$ask١#١",
      "/user/$ask1#1",
      "temp/$ask1#1",
      // above Number.MAX_SAFE_INTEGER, and 17 digits
      "/temp/$ask9007199254740992#9007199254740992",
      "/temp/$ask9999999999999999#9999999999999999",
      "/temp/$ask12345678901234567#12345678901234567",
    ]) {
      expect(askIdOfPath(path), path).toBe(-1);
      expect(ofBytes(path), path).toBe(-1);
    }
  });
});
