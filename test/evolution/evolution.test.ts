/**
 * Evolution of stored values (docs/evolution.md): the upcaster chain resolver, `upcast`,
 * and `manifestCodec` (manifests, versions, aliases for renamed types, legacy values).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CodecMismatchError,
  ManifestVersionError,
  manifestCodec,
  msgpackCodec,
  UnknownManifestError,
  type Upcaster,
} from "../../src/api/index.js";
import { ConfigError } from "../../src/base/errors.js";
import { resolveEvolution, upcast } from "../../src/protocol/evolution.js";

/** A step that records itself, so the order and count of applied steps are visible. */
const step = (manifest: string, from: number, to: number): Upcaster => ({
  manifest,
  from,
  to,
  up: (old) => ({
    ...(old as object),
    trail: [...(old as { trail: string[] }).trail, `${from}>${to}`],
  }),
});

describe("resolveEvolution", () => {
  it("accepts one gap-free chain per manifest, shortcuts included", () => {
    const e = resolveEvolution({
      versions: { A: 4, B: 1 },
      upcasters: [step("A", 1, 2), step("A", 2, 4)],
    });
    expect(e.versions.get("A")).toBe(4);
    expect(e.steps.get("A")?.size).toBe(2);
  });

  it.each([
    ["a version below 1", { versions: { A: 0 } }, "evolution.versions.A"],
    ["no manifest", { versions: {} }, "evolution.versions"],
    [
      "an alias onto an unknown name",
      { versions: { A: 1 }, aliases: { Old: "B" } },
      "evolution.aliases.Old",
    ],
    [
      "an alias that is a current name",
      { versions: { A: 1, B: 1 }, aliases: { A: "B" } },
      "evolution.aliases.A",
    ],
    [
      "a step of an unknown manifest",
      { versions: { A: 2 }, upcasters: [step("B", 1, 2)] },
      "evolution.upcasters[0].manifest",
    ],
    [
      "a step backwards",
      { versions: { A: 2 }, upcasters: [step("A", 2, 1)] },
      "evolution.upcasters[0]",
    ],
    [
      "a step past the current version",
      { versions: { A: 2 }, upcasters: [step("A", 1, 3)] },
      "evolution.upcasters[0].to",
    ],
    [
      "two steps from one version",
      { versions: { A: 3 }, upcasters: [step("A", 1, 2), step("A", 1, 3)] },
      "evolution.upcasters[1].from",
    ],
    [
      "a gap in the chain",
      { versions: { A: 4 }, upcasters: [step("A", 1, 2), step("A", 3, 4)] },
      "evolution.upcasters",
    ],
    [
      "a step off the chain",
      { versions: { A: 3 }, upcasters: [step("A", 1, 3), step("A", 2, 3)] },
      "evolution.upcasters",
    ],
  ])("refuses %s with a ConfigError naming the key", (_what, spec, key) => {
    let error: unknown;
    try {
      resolveEvolution(spec);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe(key);
  });
});

describe("upcast", () => {
  it("applies any chain to any older value exactly as its steps applied one by one", () => {
    // A chain is a list of step lengths; the current version is where they end.
    const chainArb = fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 0, maxLength: 8 });
    fc.assert(
      fc.property(chainArb, fc.nat(), fc.integer({ min: -5, max: 5 }), (lengths, pick, x) => {
        const steps: Upcaster[] = [];
        let v = 1;
        for (const [i, len] of lengths.entries()) {
          // Each step is a different affine map, so order and count both matter.
          const mul = i + 2;
          steps.push({ manifest: "M", from: v, to: v + len, up: (o) => (o as number) * mul + i });
          v += len;
        }
        const current = v;
        const evolution = resolveEvolution({ versions: { M: current }, upcasters: steps });
        const versionsWithStep = [...steps.map((s) => s.from), current];
        const from = versionsWithStep[pick % versionsWithStep.length] as number;
        let expected: unknown = x;
        for (const s of steps) if (s.from >= from) expected = s.up(expected);
        expect(upcast(evolution, "M", from, x)).toEqual({ manifest: "M", value: expected });
      }),
      { seed: 20261125, numRuns: 500 },
    );
  });

  it("maps a renamed manifest through its alias, then lifts it", () => {
    const e = resolveEvolution({
      versions: { Credited: 2 },
      aliases: { Deposited: "Credited" },
      upcasters: [step("Credited", 1, 2)],
    });
    expect(upcast(e, "Deposited", 1, { trail: [] })).toEqual({
      manifest: "Credited",
      value: { trail: ["1>2"] },
    });
  });

  it("refuses an unknown manifest and a version newer than the code", () => {
    const e = resolveEvolution({ versions: { A: 2 }, upcasters: [step("A", 1, 2)] });
    expect(() => upcast(e, "B", 1, {})).toThrow(UnknownManifestError);
    expect(() => upcast(e, "A", 3, {})).toThrow(ManifestVersionError);
  });
});

type V1 = { type: "Deposited"; amount: number };
type V2 = { type: "Credited"; amount: number; currency: string };

describe("manifestCodec", () => {
  const v1 = manifestCodec<V1>({ versions: { Deposited: 1 } });
  const v2 = manifestCodec<V2>({
    versions: { Credited: 2 },
    aliases: { Deposited: "Credited" },
    upcasters: [
      {
        manifest: "Credited",
        from: 1,
        to: 2,
        up: (old) => ({ ...(old as V1), type: "Credited", currency: "EUR" }),
      },
    ],
  });

  it("round-trips the current version", () => {
    const e: V2 = { type: "Credited", amount: 5, currency: "USD" };
    const { serializerId, bytes } = v2.encode(e);
    expect(v2.decode(serializerId, bytes)).toEqual(e);
  });

  it("reads what the previous version wrote: renamed type, upcast to the new shape", () => {
    const { serializerId, bytes } = v1.encode({ type: "Deposited", amount: 7 });
    expect(v2.decode(serializerId, bytes)).toEqual({
      type: "Credited",
      amount: 7,
      currency: "EUR",
    });
  });

  it("the previous version refuses what the new one wrote, with typed errors", () => {
    const { serializerId, bytes } = v2.encode({ type: "Credited", amount: 1, currency: "EUR" });
    expect(() => v1.decode(serializerId, bytes)).toThrow(UnknownManifestError);
    const v1again = manifestCodec<V1>({
      versions: { Deposited: 1 },
      aliases: { Credited: "Deposited" },
    });
    expect(() => v1again.decode(serializerId, bytes)).toThrow(ManifestVersionError);
  });

  it("reads values written by msgpackCodec only when told their legacy manifest", () => {
    const old = msgpackCodec<V1>().encode({ type: "Deposited", amount: 3 });
    expect(() => v2.decode(old.serializerId, old.bytes)).toThrow(CodecMismatchError);
    const withLegacy = manifestCodec<V2>({
      versions: { Credited: 2 },
      aliases: { Deposited: "Credited" },
      upcasters: [
        {
          manifest: "Credited",
          from: 1,
          to: 2,
          up: (o) => ({ ...(o as V1), type: "Credited", currency: "EUR" }),
        },
      ],
      legacy: { manifest: "Deposited", version: 1 },
    });
    expect(withLegacy.decode(old.serializerId, old.bytes)).toEqual({
      type: "Credited",
      amount: 3,
      currency: "EUR",
    });
  });

  it("refuses to write a value without a known manifest", () => {
    expect(() => v2.encode({ type: "Nope" } as unknown as V2)).toThrow(UnknownManifestError);
    expect(() => v2.encode({ amount: 1 } as unknown as V2)).toThrow(/no string `type` field/);
  });

  it("uses a custom manifest function, e.g. for snapshots", () => {
    type State = { total: number };
    const c = manifestCodec<State>({ manifest: () => "State", versions: { State: 1 } });
    const { serializerId, bytes } = c.encode({ total: 9 });
    expect(c.decode(serializerId, bytes)).toEqual({ total: 9 });
  });
});
