/**
 * The byte, frame, CONTROL-kind and reconnect counters of `remoting.stats`
 * (src/cluster/remoting/remoting-stats.ts) that the metrics read: on a lossless link what
 * one side counts out the other counts in, byte for byte, and the figures match the
 * framing (a 4-byte length prefix and a type byte per frame).
 */
import { describe, expect, it } from "vitest";
import { Behaviors } from "../../src/actor/index.js";
import { FRAME_LENGTH_PREFIX_BYTES, FRAME_TYPE_BYTES } from "../../src/protocol/framing.js";
import { SimCluster, type SimNode } from "./sim-remoting.js";

const FRAME_OVERHEAD = FRAME_LENGTH_PREFIX_BYTES + FRAME_TYPE_BYTES;
const KIND = 40;

/** The numbers told to /user/sink on `node`, as they arrive. */
function sinkOn(node: SimNode): number[] {
  const got: number[] = [];
  node.system.spawn(
    Behaviors.receiveMessage<number>((n) => void got.push(n)),
    "sink",
  );
  return got;
}

describe("remoting stats (simulated, seed 1)", () => {
  it("counts user, system and control frames and bytes per lane, the same on both sides", async () => {
    const c = new SimCluster(1);
    const a = await c.node("a");
    const b = await c.node("b");
    const got = sinkOn(b);
    const sink = a.remoting.actorRefFor<number>(b.remoting.address, "/user/sink");
    for (let i = 0; i < 50; i++) sink.tell(i);
    await c.until(() => got.length === 50, 5_000);
    // a system message (watch) from a to b
    a.system.spawn(
      Behaviors.setup<string>((ctx) => {
        ctx.watch(sink as never);
        return Behaviors.receiveMessage<string>(() => undefined);
      }),
    );
    // a CONTROL message of a kind b handles, with a 7-byte payload
    const controls: number[] = [];
    b.remoting.registerControlHandler(KIND, (_peer, payload) => void controls.push(payload.length));
    a.remoting.sendControl(b.remoting.node, KIND, new Uint8Array(7));
    await c.until(() => controls.length === 1, 5_000);
    await c.world.advance(1_000);

    const out = a.remoting.stats;
    const inb = b.remoting.stats;
    expect(out.userMessagesOut).toBe(50);
    expect(inb.userMessagesIn).toBe(50);
    expect(out.userBytesOut).toBe(inb.userBytesIn);
    expect(out.userBytesOut).toBeGreaterThan(50 * FRAME_OVERHEAD);
    expect(out.systemMessagesOut).toBeGreaterThanOrEqual(1);
    expect(inb.systemMessagesIn).toBe(out.systemMessagesOut);
    expect(out.systemBytesOut).toBe(inb.systemBytesIn);
    expect(out.systemBytesOut).toBeGreaterThan(out.systemMessagesOut * FRAME_OVERHEAD);
    expect(out.controlFramesOut).toBe(inb.controlFramesIn);
    expect(out.controlBytesOut).toBe(inb.controlBytesIn);
    // per kind: the payload as given, without the kind byte and the framing
    expect(out.controlKinds.messagesOut[KIND]).toBe(1);
    expect(out.controlKinds.bytesOut[KIND]).toBe(7);
    expect(inb.controlKinds.messagesIn[KIND]).toBe(1);
    expect(inb.controlKinds.bytesIn[KIND]).toBe(7);
    expect(inb.controlKinds.messagesOut[KIND]).toBe(0);
    expect(out.reconnects).toBe(0);
    expect(Object.fromEntries(a.remoting.associationStates())).toEqual({ active: 1 });
  });

  it("counts a reconnect per connection attempt after a failure", async () => {
    const c = new SimCluster(1);
    const a = await c.node("a", {
      reconnectBackoffMinMs: 100,
      reconnectBackoffMaxMs: 100,
      connectTimeoutMs: 200,
    });
    // no node b yet: every connect times out, and each later attempt is a reconnect
    a.remoting.actorRefFor<number>("sk@b:2552", "/user/sink").tell(1);
    await c.world.advance(2_000);
    const during = a.remoting.stats.reconnects;
    expect(during).toBeGreaterThanOrEqual(2);
    expect(a.remoting.associationStates().get("active")).toBeUndefined();
    expect([...a.remoting.associationStates().values()]).toEqual([1]);
    const b = await c.node("b");
    const got = sinkOn(b);
    await c.until(() => got.length === 1, 5_000);
    expect(a.remoting.stats.reconnects).toBeGreaterThan(during);
    expect(b.remoting.stats.reconnects).toBe(0);
  });
});
