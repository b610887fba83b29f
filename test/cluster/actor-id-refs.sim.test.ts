/**
 * ActorIdRefs (src/cluster/sharding/sharding-messages.ts): actor ids resolve to refs,
 * remote ones cached, local ones resolved anew each time — a local id may name an actor
 * that does not exist yet (simulator S20wL seed 210: a region cached the miss for its own
 * coordinator's id, named earlier by the previous process at the address, and looped).
 */
import { describe, expect, it } from "vitest";
import { Behaviors } from "../../src/actor/index.js";
import { ActorIdRefs, actorIdOf } from "../../src/cluster/sharding/sharding-messages.js";
import { SimCluster } from "./sim-remoting.js";

describe("ActorIdRefs", () => {
  it("a local id resolved before its actor exists resolves to the actor once it does", async () => {
    const c = new SimCluster(1);
    const a = await c.node("a");
    const ids = new ActorIdRefs(a.remoting);
    const first = a.system.spawn(
      Behaviors.receiveMessage<string>(() => undefined),
      "probe",
    );
    const id = actorIdOf(a.remoting, first as never);
    // the id of the next actor at a path, before it is spawned: the uid is the next one
    const uid = Number(id.slice(id.lastIndexOf("#") + 1)) + 1;
    const laterId = `${a.remoting.address}/user/later#${uid}`;
    expect(ids.refOf(laterId)?.path.elements).toEqual(["deadLetters"]);
    const later = a.system.spawn(
      Behaviors.receiveMessage<string>(() => undefined),
      "later",
    );
    expect(actorIdOf(a.remoting, later as never)).toBe(laterId);
    expect(ids.refOf(laterId)).toBe(later);
  });

  it("a remote id is resolved once and reused", async () => {
    const c = new SimCluster(1);
    const a = await c.node("a");
    const b = await c.node("b");
    const ids = new ActorIdRefs(a.remoting);
    const remote = b.system.spawn(
      Behaviors.receiveMessage<string>(() => undefined),
      "remote",
    );
    const id = actorIdOf(b.remoting, remote as never);
    const ref = ids.refOf(id);
    expect(ref?.path.elements).toEqual(["user", "remote"]);
    expect(ids.refOf(id)).toBe(ref);
  });
});
