import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../src/base/assert.js";
import {
  checkHandshake,
  checkHandshakeAck,
  constantTimeEqual,
  decodeHandshakeHello,
  decodeHandshakeReject,
  encodeHandshakeHello,
  encodeHandshakeReject,
  FrameType,
  HANDSHAKE_PROOF_CONTEXT,
  type HandshakeHello,
  type HandshakeLocal,
  type HmacFn,
  handshakeProofInput,
  hmacProofVerifier,
  PROTOCOL_VERSION,
  RejectReason,
  rejectForDecodeError,
  signHandshake,
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
const local: HandshakeLocal = { systemName: "shop" };

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

describe("handshake proof", () => {
  it("MACs exactly context | type | version | nonce | systemName | host | port | uid (i64)", () => {
    const input = handshakeProofInput(FrameType.HANDSHAKE_REQ, { ...hello, nonce });
    const expected = [
      ...new TextEncoder().encode(HANDSHAKE_PROOF_CONTEXT),
      FrameType.HANDSHAKE_REQ,
      0,
      PROTOCOL_VERSION,
      ...nonce,
      0,
      4,
      ...new TextEncoder().encode("shop"),
      0,
      8,
      ...new TextEncoder().encode("10.0.0.1"),
      0x09,
      0xf8,
      0x7e,
      0xdc,
      0xba,
      0x98,
      0x76,
      0x54,
      0x32,
      0x10,
    ];
    expect([...input]).toEqual(expected);
  });

  it("differs between REQ and ACK for the same fields", () => {
    const h = { ...hello, nonce };
    expect(handshakeProofInput(FrameType.HANDSHAKE_REQ, h)).not.toEqual(
      handshakeProofInput(FrameType.HANDSHAKE_ACK, h),
    );
  });

  it("signs with the secret; the verifier accepts any configured secret", () => {
    const signed = signHandshake(hmac, secret, FrameType.HANDSHAKE_REQ, { ...hello, nonce });
    const input = handshakeProofInput(FrameType.HANDSHAKE_REQ, signed);
    expect(hmacProofVerifier(hmac, [secret])(input, signed.proof!)).toBe(true);
    expect(hmacProofVerifier(hmac, [otherSecret, secret])(input, signed.proof!)).toBe(true);
    expect(hmacProofVerifier(hmac, [otherSecret])(input, signed.proof!)).toBe(false);
  });

  it("compares in constant time semantics: equal only when every byte is", () => {
    expect(constantTimeEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2))).toBe(true);
    expect(constantTimeEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 3))).toBe(false);
    expect(constantTimeEqual(Uint8Array.of(1), Uint8Array.of(1, 0))).toBe(false);
  });
});

describe("checkHandshake (REQ side)", () => {
  const verify = hmacProofVerifier(hmac, [secret]);
  const signedReq = () => signHandshake(hmac, secret, FrameType.HANDSHAKE_REQ, { ...hello, nonce });

  it("accepts a matching REQ without a secret configured, ignoring any proof", () => {
    expect(checkHandshake(local, hello, undefined)).toEqual({ type: "accept" });
    expect(checkHandshake(local, { ...hello, nonce, proof: Uint8Array.of(1) }, undefined)).toEqual({
      type: "accept",
    });
  });

  it("rejects another protocol version", () => {
    const d = checkHandshake({ ...local, protocolVersion: 2 }, hello, undefined);
    expect(d).toMatchObject({ type: "reject", reason: "version-mismatch" });
    if (d.type === "reject") expect(d.logMessage).toContain("protocol version 1, local 2");
  });

  it("rejects another system name", () => {
    const d = checkHandshake(local, { ...hello, systemName: "bank" }, undefined);
    expect(d).toMatchObject({ type: "reject", reason: "system-mismatch" });
    if (d.type === "reject") expect(d.logMessage).toContain('system "bank", local "shop"');
  });

  it("accepts a valid proof and rejects a missing, forged or re-targeted one", () => {
    const req = signedReq();
    expect(checkHandshake(local, req, verify)).toEqual({ type: "accept" });
    expect(checkHandshake(local, hello, verify)).toMatchObject({ reason: "bad-secret" });
    const forged = signHandshake(hmac, otherSecret, FrameType.HANDSHAKE_REQ, { ...hello, nonce });
    expect(checkHandshake(local, forged, verify)).toMatchObject({ reason: "bad-secret" });
    const otherUid = { ...req, uid: req.uid + 1n };
    expect(checkHandshake(local, otherUid, verify)).toMatchObject({ reason: "bad-secret" });
  });

  it("never puts proof bytes in the log message", () => {
    const forged = signHandshake(hmac, otherSecret, FrameType.HANDSHAKE_REQ, { ...hello, nonce });
    const d = checkHandshake(local, forged, verify);
    expect(d.type === "reject" && d.logMessage).toBe(
      "handshake request from shop@10.0.0.1:2552#9141386507638288912: proof does not match the cluster secret",
    );
  });

  it("rejects a quarantined incarnation, but only after the proof checks out", () => {
    const quarantined: HandshakeLocal = {
      ...local,
      isQuarantined: (address, uid) => address.port === 2552 && uid === hello.uid,
    };
    expect(checkHandshake(quarantined, signedReq(), verify)).toMatchObject({
      reason: "quarantined",
    });
    expect(checkHandshake(quarantined, hello, verify)).toMatchObject({ reason: "bad-secret" });
    expect(checkHandshake(quarantined, { ...hello, uid: 1n }, undefined)).toEqual({
      type: "accept",
    });
  });

  it("maps undecodable REQ payloads to malformed", () => {
    const r = decodeHandshakeHello(Uint8Array.of(1, 2, 3));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(rejectForDecodeError(r.error, "x")).toMatchObject({ reason: "malformed" });
  });
});

describe("checkHandshakeAck (connecting side)", () => {
  const verify = hmacProofVerifier(hmac, [secret]);
  const acceptor: HandshakeHello = { ...hello, address: { host: "10.0.0.2", port: 2553 }, uid: 7n };

  it("accepts an ACK that echoes our nonce and proves the secret", () => {
    const ack = signHandshake(hmac, secret, FrameType.HANDSHAKE_ACK, { ...acceptor, nonce });
    expect(checkHandshakeAck(local, ack, nonce, verify)).toEqual({ type: "accept" });
  });

  it("rejects an ACK with a stale nonce or a REQ-typed proof", () => {
    const stale = Uint8Array.from(nonce, (b) => b ^ 1);
    const ack = signHandshake(hmac, secret, FrameType.HANDSHAKE_ACK, { ...acceptor, nonce: stale });
    expect(checkHandshakeAck(local, ack, nonce, verify)).toMatchObject({ reason: "bad-secret" });
    const reflected = signHandshake(hmac, secret, FrameType.HANDSHAKE_REQ, { ...acceptor, nonce });
    expect(checkHandshakeAck(local, reflected, nonce, verify)).toMatchObject({
      reason: "bad-secret",
    });
  });

  it("applies the version, system and quarantine rules too", () => {
    expect(
      checkHandshakeAck(local, { ...acceptor, systemName: "x" }, undefined, undefined),
    ).toMatchObject({ reason: "system-mismatch" });
    const q: HandshakeLocal = { ...local, isQuarantined: () => true };
    expect(checkHandshakeAck(q, acceptor, undefined, undefined)).toMatchObject({
      reason: "quarantined",
    });
  });
});
