/**
 * The singleton protocol (protocol/singleton.ts): the guards tell the drivers' messages
 * from anything else (a proxy forwards everything else to the instance), and the
 * messages that cross nodes keep their shape through the wire serializer, refs included.
 */
import { describe, expect, it } from "vitest";
import {
  isSingletonManagerMessage,
  isSingletonManagerMsg,
  isSingletonProxyMsg,
  type RefCodec,
  SerializerRegistry,
  type SingletonIdentified,
  type SingletonIdentify,
  type SingletonManagerEnvelope,
  type WireRefData,
} from "../../src/protocol/index.js";

class FakeRef {
  constructor(
    readonly address: string,
    readonly path: string,
  ) {}
  tell(_message: unknown): void {}
}

const refCodec: RefCodec = {
  isRef: (v) => v instanceof FakeRef,
  encode: (ref) => ({ address: (ref as FakeRef).address, path: (ref as FakeRef).path }),
  decode: (d: WireRefData) => new FakeRef(d.address, d.path),
};

const A = "shardkit://app@10.0.0.1:2552#1";
const B = "shardkit://app@10.0.0.2:2552#2";
const proxyRef = new FakeRef("app@10.0.0.2:2552", "/system/singletonProxy-c-1");
const instanceRef = new FakeRef("app@10.0.0.1:2552", "/system/singletonManager-c/singleton");

const envelope: SingletonManagerEnvelope = {
  type: "shardkit.singleton.manager",
  from: A,
  to: B,
  message: { type: "hand-over-done", wasOldest: true },
};
const identify: SingletonIdentify = { type: "shardkit.singleton.identify", replyTo: proxyRef };
const identified: SingletonIdentified = {
  type: "shardkit.singleton.identified",
  node: A,
  instance: instanceRef,
};

describe("singleton protocol guards", () => {
  it("accept the manager's messages and refuse malformed ones", () => {
    expect(isSingletonManagerMsg(envelope)).toBe(true);
    expect(isSingletonManagerMsg(identify)).toBe(true);
    expect(isSingletonManagerMsg({ type: "shardkit.singleton.timer", key: "k" })).toBe(true);
    expect(isSingletonManagerMsg({ type: "shardkit.singleton.lease-result", ok: true })).toBe(true);
    expect(isSingletonManagerMsg({ ...envelope, to: 7 })).toBe(false);
    expect(isSingletonManagerMsg({ ...envelope, message: { type: "give-it-to-me" } })).toBe(false);
    expect(
      isSingletonManagerMsg({ ...envelope, message: { type: "hand-over-done", wasOldest: 1 } }),
    ).toBe(false);
    expect(isSingletonManagerMsg({ type: "shardkit.singleton.identify", replyTo: "x" })).toBe(
      false,
    );
    expect(isSingletonManagerMsg({ type: "shardkit.singleton.lease-result" })).toBe(false);
    expect(isSingletonManagerMsg(identified)).toBe(false);
    expect(isSingletonManagerMsg(null)).toBe(false);
  });

  it("tell a proxy's own messages from user messages", () => {
    expect(isSingletonProxyMsg(identified)).toBe(true);
    expect(isSingletonProxyMsg({ ...identified, instance: null })).toBe(true);
    expect(isSingletonProxyMsg({ type: "shardkit.singleton.members" })).toBe(true);
    expect(isSingletonProxyMsg({ type: "shardkit.singleton.instance-gone", node: A })).toBe(true);
    for (const user of [
      "hello",
      42,
      null,
      undefined,
      [1, 2],
      { type: "deposit", amount: 1 },
      { type: "shardkit.singleton.identify", replyTo: proxyRef },
      { type: "shardkit.singleton.timer" },
      { type: "toString" },
      { sk: "singleton", t: "members" },
    ])
      expect(isSingletonProxyMsg(user)).toBe(false);
  });

  it("know the four manager messages", () => {
    for (const type of [
      "hand-over-to-me",
      "hand-over-in-progress",
      "hand-over-done",
      "takeover-from-me",
    ])
      expect(isSingletonManagerMessage({ type })).toBe(true);
    expect(isSingletonManagerMessage({ type: "hand-over" })).toBe(false);
  });
});

describe("singleton messages on the wire", () => {
  const registry = new SerializerRegistry({ refCodec });
  const roundTrip = (value: unknown) => {
    const { serializerId, bytes } = registry.serialize(value);
    return registry.deserialize(serializerId, bytes);
  };

  it("keep their shape and refs, and pass the receiver's guard", () => {
    const e = roundTrip(envelope);
    expect(e).toEqual(envelope);
    expect(isSingletonManagerMsg(e)).toBe(true);
    const i = roundTrip(identify) as SingletonIdentify;
    expect(i.replyTo).toBeInstanceOf(FakeRef);
    expect(isSingletonManagerMsg(i)).toBe(true);
    const d = roundTrip(identified) as SingletonIdentified;
    expect(d.instance).toBeInstanceOf(FakeRef);
    expect(isSingletonProxyMsg(d)).toBe(true);
    expect(isSingletonProxyMsg(roundTrip({ ...identified, instance: null }))).toBe(true);
  });
});
