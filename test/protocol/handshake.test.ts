import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../src/base/assert.js";
import {
  type AcceptorChallenge,
  constantTimeEqual,
  decodeHandshakeConfirm,
  decodeHandshakeHello,
  decodeHandshakeReject,
  encodeHandshakeConfirm,
  encodeHandshakeHello,
  encodeHandshakeReject,
  FrameType,
  HANDSHAKE_PROOF_CONTEXT,
  type HandshakeConfirm,
  type HandshakeHello,
  type HandshakeIdentity,
  type HandshakePolicy,
  type HandshakeTranscript,
  type HmacFn,
  handshakeProofInput,
  normalizeHost,
  onHandshakeAck,
  onHandshakeConfirm,
  onHandshakeRequest,
  PROTOCOL_VERSION,
  proveHandshake,
  RejectReason,
  rejectForDecodeError,
  startHandshake,
  verifyHandshakeProof,
} from "../../src/protocol/index.js";

const hmac: HmacFn = (key, data) => new Uint8Array(createHmac("sha256", key).update(data).digest());
const secret = new TextEncoder().encode("cluster-secret");
const otherSecret = new TextEncoder().encode("another-secret");
const nonce = Uint8Array.from({ length: 16 }, (_, i) => i + 1);

const hello: HandshakeHello = {
  protocolVersion: PROTOCOL_VERSION,
  systemName: "shop",
  address: { host: "10.0.0.1", port: 2552 },
  uid: 0x7edc_ba98_7654_3210n,
};

describe("handshake hello codec", () => {
  it("starts with the magic SKIT and the version, and round-trips without nonce/proof", () => {
    const bytes = encodeHandshakeHello(hello);
    expect([...bytes.subarray(0, 6)]).toEqual([0x53, 0x4b, 0x49, 0x54, 0, PROTOCOL_VERSION]);
    expect(decodeHandshakeHello(bytes)).toEqual({ ok: true, value: hello });
  });

  it("round-trips nonce, proof, unicode names and the extreme uids", () => {
    for (const uid of [0n, -1n, -(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n]) {
      const h = {
        ...hello,
        systemName: "système-🚀",
        uid,
        nonce,
        proof: new Uint8Array(64).fill(7),
      };
      const r = decodeHandshakeHello(encodeHandshakeHello(h));
      expect(r).toEqual({ ok: true, value: h });
    }
  });

  it("fails on a wrong magic, a truncated payload and trailing bytes", () => {
    const bytes = encodeHandshakeHello({ ...hello, nonce });
    const badMagic = bytes.slice();
    badMagic[0] = 0x41;
    expect(decodeHandshakeHello(badMagic)).toMatchObject({
      ok: false,
      error: { code: "HANDSHAKE_BAD_MAGIC" },
    });
    for (let n = 0; n < bytes.length; n++)
      expect(decodeHandshakeHello(bytes.subarray(0, n))).toMatchObject({
        ok: false,
        error: { code: "PAYLOAD_TRUNCATED" },
      });
    const trailing = new Uint8Array(bytes.length + 1);
    trailing.set(bytes);
    expect(decodeHandshakeHello(trailing)).toMatchObject({
      ok: false,
      error: { code: "PAYLOAD_TRAILING_BYTES" },
    });
  });

  it("reports an unsupported version with the version the peer sent", () => {
    const bytes = encodeHandshakeHello(hello).slice();
    bytes[5] = 9;
    const r = decodeHandshakeHello(bytes);
    expect(r).toMatchObject({
      ok: false,
      error: { code: "HANDSHAKE_VERSION_UNSUPPORTED", version: 9 },
    });
    if (!r.ok)
      expect(rejectForDecodeError(r.error, "10.0.0.9:1")).toMatchObject({
        type: "reject",
        reason: "version-mismatch",
      });
  });

  it("rejects unknown flags, port 0, empty names and invalid UTF-8", () => {
    const bytes = encodeHandshakeHello(hello);
    expect(decodeHandshakeHello(bytes).ok).toBe(true);
    const flags = bytes.slice();
    flags[6] = 0x80;
    expect(decodeHandshakeHello(flags)).toMatchObject({ error: { code: "PAYLOAD_INVALID_FIELD" } });
    const port0 = encodeHandshakeHello(hello).slice();
    const portAt = 7 + 2 + 4 + 2 + 8; // flags end, systemName "shop", host "10.0.0.1"
    port0[portAt] = 0;
    port0[portAt + 1] = 0;
    expect(decodeHandshakeHello(port0)).toMatchObject({ error: { code: "PAYLOAD_INVALID_FIELD" } });
    const badUtf8 = bytes.slice();
    badUtf8[9] = 0xff;
    expect(decodeHandshakeHello(badUtf8)).toMatchObject({
      error: { code: "PAYLOAD_INVALID_FIELD" },
    });
    // systemName of length 0: header (7 bytes), then 0x0000, then the rest without "shop"
    const emptyName = new Uint8Array([...bytes.subarray(0, 7), 0, 0, ...bytes.subarray(13)]);
    expect(decodeHandshakeHello(emptyName)).toMatchObject({
      error: { code: "PAYLOAD_INVALID_FIELD", offset: 7 },
    });
  });

  it("asserts on invalid fields when encoding (programmer errors)", () => {
    expect(() => encodeHandshakeHello({ ...hello, systemName: "" })).toThrow(AssertionError);
    expect(() => encodeHandshakeHello({ ...hello, uid: 2n ** 63n })).toThrow(AssertionError);
    expect(() => encodeHandshakeHello({ ...hello, nonce: new Uint8Array(15) })).toThrow(
      AssertionError,
    );
    expect(() => encodeHandshakeHello({ ...hello, address: { host: "h", port: 0 } })).toThrow(
      AssertionError,
    );
  });
});

describe("handshake reject codec", () => {
  it("round-trips every reason", () => {
    for (const reason of Object.values(RejectReason)) {
      const reject = { ...hello, reason };
      delete (reject as { nonce?: unknown }).nonce;
      expect(decodeHandshakeReject(encodeHandshakeReject(reject))).toEqual({
        ok: true,
        value: reject,
      });
    }
  });

  it("decodes a reject of another protocol version (its layout is frozen)", () => {
    const bytes = encodeHandshakeReject({ ...hello, protocolVersion: 7, reason: "quarantined" });
    expect(decodeHandshakeReject(bytes)).toMatchObject({ ok: true, value: { protocolVersion: 7 } });
  });

  it("fails on an unknown reason code", () => {
    const bytes = encodeHandshakeReject({ ...hello, reason: "malformed" }).slice();
    bytes[6] = 99;
    expect(decodeHandshakeReject(bytes)).toMatchObject({
      error: { code: "PAYLOAD_INVALID_FIELD" },
    });
  });
});

describe("handshake decoders never throw (fast-check)", () => {
  const valid = encodeHandshakeHello({ ...hello, nonce, proof: new Uint8Array(32) });
  it("on arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        expect(typeof decodeHandshakeHello(bytes).ok).toBe("boolean");
        expect(typeof decodeHandshakeReject(bytes).ok).toBe("boolean");
      }),
      { numRuns: 2000 },
    );
  });

  it("on arbitrary bytes behind a valid magic and version", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), (tail) => {
        const bytes = new Uint8Array(6 + tail.length);
        bytes.set(valid.subarray(0, 6));
        bytes.set(tail, 6);
        expect(typeof decodeHandshakeHello(bytes).ok).toBe("boolean");
        expect(typeof decodeHandshakeReject(bytes).ok).toBe("boolean");
      }),
      { numRuns: 2000 },
    );
  });

  it("on single-byte mutations of a valid hello", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 255 }), (at, xor) => {
        const bytes = valid.slice();
        bytes[at % bytes.length]! ^= xor;
        const r = decodeHandshakeHello(bytes);
        if (r.ok) expect(r.value.nonce?.length).toBe(16);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("handshake confirm codec", () => {
  it("round-trips with and without a proof, and refuses unknown flags and other versions", () => {
    for (const c of [
      { protocolVersion: PROTOCOL_VERSION },
      { protocolVersion: PROTOCOL_VERSION, proof: new Uint8Array(32).fill(3) },
    ] as HandshakeConfirm[]) {
      const r = decodeHandshakeConfirm(encodeHandshakeConfirm(c));
      expect(r).toEqual({ ok: true, value: { proof: undefined, ...c } });
    }
    const bytes = encodeHandshakeConfirm({ protocolVersion: PROTOCOL_VERSION }).slice();
    bytes[6] = 0x01;
    expect(decodeHandshakeConfirm(bytes)).toMatchObject({
      error: { code: "PAYLOAD_INVALID_FIELD" },
    });
    bytes[6] = 0;
    bytes[5] = 1; // protocol version 1 (the replayable two-message handshake)
    expect(decodeHandshakeConfirm(bytes)).toMatchObject({
      error: { code: "HANDSHAKE_VERSION_UNSUPPORTED", version: 1 },
    });
  });

  it("never throws on arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        expect(typeof decodeHandshakeConfirm(bytes).ok).toBe("boolean");
      }),
      { numRuns: 2000 },
    );
  });
});

// ------------------------------------------------------------------ proof and machine

const connecting: HandshakeIdentity = {
  systemName: "shop",
  address: { host: "10.0.0.1", port: 2552 },
  uid: 0x7edc_ba98_7654_3210n,
};
const accepting: HandshakeIdentity = {
  systemName: "shop",
  address: { host: "10.0.0.2", port: 2553 },
  uid: 7n,
};
const nonceC = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
const nonceA = Uint8Array.from({ length: 16 }, (_, i) => 100 + i);
const noBinding = new Uint8Array(0);
const open: HandshakePolicy = { systemName: "shop", secrets: [] };
const withSecret = (...secrets: Uint8Array[]): HandshakePolicy => ({
  systemName: "shop",
  secrets,
  hmac,
});

describe("handshake proof", () => {
  const t: HandshakeTranscript = {
    protocolVersion: PROTOCOL_VERSION,
    connecting,
    connectingNonce: nonceC,
    accepting,
    acceptingNonce: nonceA,
    binding: Uint8Array.of(0xaa, 0xbb),
  };
  const te = (s: string) => [...new TextEncoder().encode(s)];
  const uidC = [0x7e, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10];

  it("MACs context | kind | version | both nonces | both identities | binding", () => {
    expect([...handshakeProofInput(FrameType.HANDSHAKE_CONFIRM, t)]).toEqual([
      ...te(HANDSHAKE_PROOF_CONTEXT),
      FrameType.HANDSHAKE_CONFIRM,
      0,
      PROTOCOL_VERSION,
      ...nonceC,
      ...nonceA,
      0,
      4,
      ...te("shop"),
      0,
      8,
      ...te("10.0.0.1"),
      0x09,
      0xf8,
      ...uidC,
      0,
      4,
      ...te("shop"),
      0,
      8,
      ...te("10.0.0.2"),
      0x09,
      0xf9,
      ...[0, 0, 0, 0, 0, 0, 0, 7],
      0,
      2,
      0xaa,
      0xbb,
    ]);
  });

  it("changes with every covered field, and between ACK and CONFIRM", () => {
    const base = proveHandshake(hmac, secret, FrameType.HANDSHAKE_ACK, t);
    const variants: HandshakeTranscript[] = [
      { ...t, protocolVersion: PROTOCOL_VERSION + 1 },
      { ...t, connectingNonce: nonceA },
      { ...t, acceptingNonce: nonceC },
      { ...t, connecting: { ...connecting, uid: 1n } },
      { ...t, connecting: { ...connecting, address: { host: "10.0.0.1", port: 1 } } },
      { ...t, accepting: { ...accepting, uid: 8n } },
      { ...t, accepting: { ...accepting, address: { host: "10.0.0.3", port: 2553 } } },
      { ...t, binding: noBinding },
    ];
    for (const v of variants)
      expect(proveHandshake(hmac, secret, FrameType.HANDSHAKE_ACK, v)).not.toEqual(base);
    expect(proveHandshake(hmac, secret, FrameType.HANDSHAKE_CONFIRM, t)).not.toEqual(base);
  });

  it("verifies against any accepted secret (rotation), never another one", () => {
    const proof = proveHandshake(hmac, secret, FrameType.HANDSHAKE_ACK, t);
    const kind = FrameType.HANDSHAKE_ACK;
    expect(verifyHandshakeProof(hmac, [secret], kind, t, proof)).toBe(true);
    expect(verifyHandshakeProof(hmac, [otherSecret, secret], kind, t, proof)).toBe(true);
    expect(verifyHandshakeProof(hmac, [otherSecret], kind, t, proof)).toBe(false);
    expect(verifyHandshakeProof(hmac, [secret], FrameType.HANDSHAKE_CONFIRM, t, proof)).toBe(false);
  });

  it("compares in constant time semantics: equal only when every byte is", () => {
    expect(constantTimeEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2))).toBe(true);
    expect(constantTimeEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 3))).toBe(false);
    expect(constantTimeEqual(Uint8Array.of(1), Uint8Array.of(1, 0))).toBe(false);
  });
});

interface Exchange {
  readonly initiator: HandshakePolicy;
  readonly acceptor: HandshakePolicy;
  readonly bindingC?: Uint8Array;
  readonly bindingA?: Uint8Array;
  readonly sourceHost?: string;
}

/** Runs REQ -> ACK -> CONFIRM through the pure functions of both sides. */
function exchange(x: Exchange) {
  const { req, state } = startHandshake(connecting, nonceC);
  const challenge = onHandshakeRequest(x.acceptor, accepting, req, {
    nonce: nonceA,
    binding: x.bindingA ?? noBinding,
    sourceHost: x.sourceHost ?? "10.0.0.1",
  });
  if (challenge.type === "reject") return { at: "request" as const, step: challenge };
  const ack = onHandshakeAck(x.initiator, state, challenge.ack, x.bindingC ?? noBinding);
  if (ack.type === "reject") return { at: "ack" as const, step: ack };
  const done = onHandshakeConfirm(x.acceptor, challenge.state, ack.confirm);
  return { at: "confirm" as const, step: done, challenge, confirm: ack.confirm };
}

describe("handshake machine: the whole exchange", () => {
  it("without a secret: accepts, and neither side sends a proof", () => {
    const r = exchange({ initiator: open, acceptor: open });
    expect(r.step).toEqual({ type: "accept", peer: connecting });
    if (r.at === "confirm") {
      expect(r.challenge.ack.proof).toBeUndefined();
      expect(r.confirm.proof).toBeUndefined();
      expect(r.challenge.ack.nonce).toEqual(nonceA);
    }
  });

  it("with the same secret: both proofs verify and the peer is accepted", () => {
    const r = exchange({ initiator: withSecret(secret), acceptor: withSecret(secret) });
    expect(r.step).toEqual({ type: "accept", peer: connecting });
    if (r.at === "confirm") {
      expect(r.challenge.ack.proof?.length).toBe(32);
      expect(r.confirm.proof?.length).toBe(32);
    }
  });

  it("rotation: accepts a peer proving with any listed secret, proves with the first", () => {
    // Rolling restart: old members know [old]; restarted ones [old, new], later [new, old].
    const oldOnly = withSecret(otherSecret);
    const phase1 = withSecret(otherSecret, secret);
    const phase2 = withSecret(secret, otherSecret);
    for (const [i, a] of [
      [oldOnly, phase1],
      [phase1, oldOnly],
      [phase1, phase2],
      [phase2, phase1],
      [phase2, withSecret(secret)],
      [withSecret(secret), phase2],
    ] as const)
      expect(exchange({ initiator: i, acceptor: a }).step.type).toBe("accept");
    // ...but a member that only knows the new secret cannot talk to one that only knows the old.
    expect(exchange({ initiator: oldOnly, acceptor: withSecret(secret) }).step).toMatchObject({
      reason: "bad-secret",
    });
  });

  it("with TLS: accepts when both ends see the same binding, refuses a relay between sessions", () => {
    const p = withSecret(secret);
    const b1 = new Uint8Array(32).fill(1);
    expect(exchange({ initiator: p, acceptor: p, bindingA: b1, bindingC: b1 }).step.type).toBe(
      "accept",
    );
    const relayed = exchange({
      initiator: p,
      acceptor: p,
      bindingA: b1,
      bindingC: new Uint8Array(32).fill(2),
    });
    expect(relayed).toMatchObject({ at: "ack", step: { reason: "bad-secret" } });
  });
});

describe("handshake machine: accepting side, REQ", () => {
  const input = { nonce: nonceA, binding: noBinding, sourceHost: "10.0.0.1" };
  const req: HandshakeHello = { protocolVersion: PROTOCOL_VERSION, ...connecting, nonce: nonceC };

  it("refuses another protocol version, another system name and a REQ without a nonce", () => {
    const v = onHandshakeRequest({ ...open, protocolVersion: 3 }, accepting, req, input);
    expect(v).toMatchObject({ type: "reject", reason: "version-mismatch" });
    if (v.type === "reject") expect(v.logMessage).toContain(`protocol version 2, local 3`);
    const sys = onHandshakeRequest(open, accepting, { ...req, systemName: "bank" }, input);
    expect(sys).toMatchObject({ reason: "system-mismatch" });
    if (sys.type === "reject") expect(sys.logMessage).toContain('system "bank", local "shop"');
    const { nonce: _, ...noNonce } = req;
    expect(onHandshakeRequest(open, accepting, noNonce, input)).toMatchObject({
      reason: "protocol-error",
    });
  });

  it("answers with its own fresh nonce and reveals no admission decision yet", () => {
    const tombstoned: HandshakePolicy = { ...withSecret(secret), isTombstoned: () => true };
    const step = onHandshakeRequest(tombstoned, accepting, req, input);
    expect(step.type).toBe("challenge");
    if (step.type === "challenge") {
      expect(step.ack.nonce).toEqual(nonceA);
      expect(step.ack.uid).toBe(accepting.uid);
    }
  });

  it("maps undecodable payloads to malformed", () => {
    const r = decodeHandshakeHello(Uint8Array.of(1, 2, 3));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(rejectForDecodeError(r.error, "x")).toMatchObject({ reason: "malformed" });
  });
});

describe("handshake machine: accepting side, CONFIRM", () => {
  const p = withSecret(secret);
  const challengeFor = (policy: HandshakePolicy, nonce = nonceA, sourceHost = "10.0.0.1") => {
    const { req } = startHandshake(connecting, nonceC);
    const step = onHandshakeRequest(policy, accepting, req, {
      nonce,
      binding: noBinding,
      sourceHost,
    });
    if (step.type !== "challenge") throw new Error("expected a challenge");
    return step;
  };
  const confirmFor = (challenge: AcceptorChallenge, s: Uint8Array): HandshakeConfirm => ({
    protocolVersion: PROTOCOL_VERSION,
    proof: proveHandshake(hmac, s, FrameType.HANDSHAKE_CONFIRM, challenge.transcript),
  });

  it("refuses a missing proof, a proof with another secret, and an ACK-labelled proof", () => {
    const c = challengeFor(p).state;
    expect(onHandshakeConfirm(p, c, { protocolVersion: PROTOCOL_VERSION })).toMatchObject({
      reason: "bad-secret",
      logMessage: expect.stringContaining("no proof, but a cluster secret is required"),
    });
    const forged = onHandshakeConfirm(p, c, confirmFor(c, otherSecret));
    expect(forged).toMatchObject({ reason: "bad-secret" });
    // The log names the peer and the mismatch, never proof bytes.
    expect(forged.type === "reject" && forged.logMessage).toBe(
      "handshake confirm from shop@10.0.0.1:2552#9141386507638288912: proof does not match the cluster secret",
    );
    const reflected = proveHandshake(hmac, secret, FrameType.HANDSHAKE_ACK, c.transcript);
    expect(
      onHandshakeConfirm(p, c, { protocolVersion: PROTOCOL_VERSION, proof: reflected }),
    ).toMatchObject({ reason: "bad-secret" });
    expect(onHandshakeConfirm(p, c, confirmFor(c, secret))).toEqual({
      type: "accept",
      peer: connecting,
    });
  });

  it("refuses a replayed CONFIRM: a recorded exchange is worthless on a new connection", () => {
    const recorded = challengeFor(p);
    const recordedConfirm = confirmFor(recorded.state, secret);
    expect(onHandshakeConfirm(p, recorded.state, recordedConfirm).type).toBe("accept");
    // The replayer re-sends the recorded REQ and CONFIRM; the acceptor drew a new nonce.
    const fresh = challengeFor(
      p,
      Uint8Array.from(nonceA, (b) => b ^ 0x5a),
    ).state;
    expect(onHandshakeConfirm(p, fresh, recordedConfirm)).toMatchObject({ reason: "bad-secret" });
  });

  it("refuses another protocol version in the CONFIRM", () => {
    const c = challengeFor(open).state;
    expect(onHandshakeConfirm(open, c, { protocolVersion: 3 })).toMatchObject({
      reason: "version-mismatch",
    });
  });

  it("refuses a tombstoned incarnation, but only once the proof checks out", () => {
    const tombstoned = (q: HandshakePolicy): HandshakePolicy => ({
      ...q,
      isTombstoned: (address, uid) => address.port === 2552 && uid === connecting.uid,
    });
    const c = challengeFor(p).state;
    expect(onHandshakeConfirm(tombstoned(p), c, confirmFor(c, secret))).toMatchObject({
      reason: "quarantined",
    });
    expect(onHandshakeConfirm(tombstoned(p), c, confirmFor(c, otherSecret))).toMatchObject({
      reason: "bad-secret",
    });
    const o = challengeFor(open).state;
    expect(
      onHandshakeConfirm(tombstoned(open), o, { protocolVersion: PROTOCOL_VERSION }),
    ).toMatchObject({ reason: "quarantined" });
  });

  it("without a secret, refuses a claim to a live association's address from another host", () => {
    const live: HandshakePolicy = {
      ...open,
      liveAssociationHost: (a) => (a.port === 2552 ? "::ffff:10.0.0.1" : undefined),
    };
    const confirm = { protocolVersion: PROTOCOL_VERSION };
    const spoofed = onHandshakeConfirm(live, challengeFor(live, nonceA, "10.6.6.6").state, confirm);
    expect(spoofed).toMatchObject({ reason: "address-claim" });
    if (spoofed.type === "reject") expect(spoofed.logMessage).toContain("comes from 10.6.6.6");
    // The member itself (reconnecting, or restarted) comes from the same host.
    expect(onHandshakeConfirm(live, challengeFor(live).state, confirm).type).toBe("accept");
    // No live association: nothing to compare with.
    expect(
      onHandshakeConfirm(
        { ...open, liveAssociationHost: () => undefined },
        challengeFor(open, nonceA, "10.6.6.6").state,
        confirm,
      ).type,
    ).toBe("accept");
    // With a secret the claim is authenticated by the proof instead.
    const ps = { ...p, liveAssociationHost: live.liveAssociationHost };
    const c = challengeFor(ps, nonceA, "10.6.6.6").state;
    expect(onHandshakeConfirm(ps, c, confirmFor(c, secret)).type).toBe("accept");
  });

  it("normalizes IPv4-mapped IPv6 and case when comparing hosts", () => {
    expect(normalizeHost("::FFFF:10.0.0.1")).toBe("10.0.0.1");
    expect(normalizeHost("Fe80::1")).toBe("fe80::1");
  });
});

describe("handshake machine: connecting side, ACK", () => {
  const p = withSecret(secret);
  const ackFor = (policy: HandshakePolicy, binding = noBinding, forNonce = nonceC) => {
    const req: HandshakeHello = {
      protocolVersion: PROTOCOL_VERSION,
      ...connecting,
      nonce: forNonce,
    };
    const step = onHandshakeRequest(policy, accepting, req, {
      nonce: nonceA,
      binding,
      sourceHost: "10.0.0.1",
    });
    if (step.type !== "challenge") throw new Error("expected a challenge");
    return step.ack;
  };
  const { state } = startHandshake(connecting, nonceC);

  it("accepts a proven ACK and returns a CONFIRM proving the same transcript", () => {
    const step = onHandshakeAck(p, state, ackFor(p), noBinding);
    expect(step).toMatchObject({ type: "accept", peer: accepting });
    if (step.type === "accept") expect(step.confirm.proof?.length).toBe(32);
  });

  it("refuses an ACK without proof, with another secret, or answering another REQ (replayed)", () => {
    const { proof: _, ...unproven } = ackFor(p);
    expect(onHandshakeAck(p, state, unproven, noBinding)).toMatchObject({ reason: "bad-secret" });
    expect(onHandshakeAck(p, state, ackFor(withSecret(otherSecret)), noBinding)).toMatchObject({
      reason: "bad-secret",
    });
    const replayed = ackFor(
      p,
      noBinding,
      Uint8Array.from(nonceC, (b) => b ^ 1),
    );
    expect(onHandshakeAck(p, state, replayed, noBinding)).toMatchObject({ reason: "bad-secret" });
  });

  it("refuses another version, another system, an ACK without a nonce, a tombstoned acceptor", () => {
    const ack = ackFor(open);
    expect(onHandshakeAck(open, state, { ...ack, protocolVersion: 9 }, noBinding)).toMatchObject({
      reason: "version-mismatch",
    });
    expect(onHandshakeAck(open, state, { ...ack, systemName: "x" }, noBinding)).toMatchObject({
      reason: "system-mismatch",
    });
    const { nonce: _, ...noNonce } = ack;
    expect(onHandshakeAck(open, state, noNonce, noBinding)).toMatchObject({
      reason: "protocol-error",
    });
    expect(
      onHandshakeAck({ ...open, isTombstoned: () => true }, state, ack, noBinding),
    ).toMatchObject({ reason: "quarantined" });
  });

  it("every reject reason round-trips through the REJECT codec", () => {
    for (const reason of Object.values(RejectReason)) {
      const bytes = encodeHandshakeReject({ ...hello, reason });
      expect(decodeHandshakeReject(bytes)).toMatchObject({ ok: true, value: { reason } });
    }
  });
});
