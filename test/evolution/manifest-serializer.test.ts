/**
 * Remote messages with a type manifest (docs/evolution.md): the manifest serializer, and
 * two members on different versions in the simulator — a renamed type is read through
 * its alias, a type the receiver does not know becomes a typed dead letter (reason
 * "unknown-manifest") and the connection keeps carrying the messages it does know.
 */
import { describe, expect, it } from "vitest";
import type { DeadLetter } from "../../src/actor/event-stream.js";
import { Behaviors } from "../../src/actor/index.js";
import { ConfigError } from "../../src/base/errors.js";
import { UnknownManifestError } from "../../src/protocol/evolution.js";
import { type ManifestType, manifestSerializer } from "../../src/protocol/manifest-serializer.js";
import { SimCluster } from "../cluster/sim-remoting.js";

type Deposit = { kind: "Deposit"; amount: number };
type Withdraw = { kind: "Withdraw"; amount: number };

const enc = new TextEncoder();
const dec = new TextDecoder();
/** A JSON type keyed by its `kind`, written under `manifest`. */
function jsonType<T extends { kind: string }>(manifest: string, kind: string): ManifestType<T> {
  return {
    manifest,
    matches: (v) => (v as { kind?: unknown } | null)?.kind === kind,
    toBinary: (v) => enc.encode(JSON.stringify(v)),
    fromBinary: (b) => ({ ...(JSON.parse(dec.decode(b)) as T), kind }),
  };
}

describe("manifestSerializer", () => {
  it("round-trips each type under its manifest and refuses unknown manifests", () => {
    const { serializer } = manifestSerializer({
      id: 200,
      name: "bank",
      types: [jsonType<Deposit>("Deposit", "Deposit"), jsonType<Withdraw>("Withdraw", "Withdraw")],
    });
    const bytes = serializer.toBinary({ kind: "Withdraw", amount: 3 });
    expect(serializer.fromBinary(bytes)).toEqual({ kind: "Withdraw", amount: 3 });
    const older = manifestSerializer({
      id: 200,
      name: "bank",
      types: [jsonType("Deposit", "Deposit")],
    });
    expect(() => older.serializer.fromBinary(bytes)).toThrow(UnknownManifestError);
    expect(() => older.serializer.fromBinary(Uint8Array.of(0))).toThrow(/truncated/);
    expect(() => older.serializer.fromBinary(Uint8Array.of(0, 250, 1))).toThrow(/manifest length/);
  });

  it("refuses duplicate manifests and aliases onto unknown ones", () => {
    expect(() =>
      manifestSerializer({
        id: 200,
        name: "bank",
        types: [jsonType("A", "A"), jsonType("A", "B")],
      }),
    ).toThrow(ConfigError);
    expect(() =>
      manifestSerializer({
        id: 200,
        name: "bank",
        types: [jsonType("A", "A")],
        aliases: { Old: "B" },
      }),
    ).toThrow(ConfigError);
    expect(() =>
      manifestSerializer({ id: 200, name: "bank", types: [jsonType("x".repeat(201), "A")] }),
    ).toThrow(ConfigError);
  });
});

describe.each([1, 2])("members on two versions (seed %i)", (seed) => {
  it("a renamed type arrives through its alias; an unknown one is a typed dead letter", async () => {
    const c = new SimCluster(seed);
    const v1 = await c.node("a", {}, "bank");
    const v2 = await c.node("b", {}, "bank");
    // v1 writes Deposit and Withdraw; v2 renamed Deposit to Credit and does not know Withdraw.
    const s1 = manifestSerializer({
      id: 200,
      name: "bank",
      types: [jsonType<Deposit>("Deposit", "Deposit"), jsonType<Withdraw>("Withdraw", "Withdraw")],
    });
    v1.remoting.registry.register(s1.serializer, s1.binding);
    const s2 = manifestSerializer({
      id: 200,
      name: "bank",
      types: [jsonType("Credit", "Credit")],
      aliases: { Deposit: "Credit" },
    });
    v2.remoting.registry.register(s2.serializer, s2.binding);

    const got: unknown[] = [];
    v2.system.spawn(
      Behaviors.receiveMessage<unknown>((m) => void got.push(m)),
      "account",
    );
    const dead: DeadLetter[] = [];
    v2.system.eventStream.subscribe("DeadLetter", (d) => dead.push(d));
    const ref = v1.remoting.actorRefFor<Deposit | Withdraw>(v2.remoting.address, "/user/account");
    ref.tell({ kind: "Deposit", amount: 5 });
    ref.tell({ kind: "Withdraw", amount: 2 });
    ref.tell({ kind: "Deposit", amount: 7 });
    await c.until(() => got.length === 2 && dead.length === 1, 5_000);

    expect(got).toEqual([
      { kind: "Credit", amount: 5 },
      { kind: "Credit", amount: 7 },
    ]);
    const [letter] = dead;
    expect(letter?.reason).toBe("unknown-manifest");
    expect(letter?.cause).toBeInstanceOf(UnknownManifestError);
    expect(letter?.cause).toMatchObject({ fields: { manifest: "Withdraw" } });
    expect(v2.remoting.stats.unknownManifests).toBe(1);
    expect(v2.remoting.stats.badMessages).toBe(0);
  });
});
