/**
 * A hand-driven peer for real-process remoting tests: a raw node:net socket that speaks
 * the handshake (REQ, read the ACK, CONFIRM) with any identity and from any loopback
 * source address, or replays recorded bytes, and reports what the node answered.
 */
import { createHmac } from "node:crypto";
import { connect, type Socket } from "node:net";
import {
  decodeHandshakeHello,
  decodeHandshakeReject,
  encodeFrame,
  encodeHandshakeConfirm,
  encodeHandshakeHello,
  encodeUserEnvelope,
  FrameDecoder,
  FrameType,
  type HandshakeIdentity,
  type HandshakePolicy,
  onHandshakeAck,
  PROTOCOL_VERSION,
  type RejectReason,
  startHandshake,
} from "../../src/protocol/index.js";

export const hmac = (key: Uint8Array, data: Uint8Array) =>
  new Uint8Array(createHmac("sha256", key).update(data).digest());

export interface RawOutcome {
  /** The node closed (or reset) the connection before we stopped waiting. */
  readonly closedByPeer: boolean;
  /** Frames the node wrote to us. */
  readonly frames: readonly { type: number; payload: Uint8Array }[];
  /** Reason of a HANDSHAKE_REJECT among them. */
  readonly rejected: RejectReason | undefined;
}

/** Opens a socket to 127.0.0.1:`port` from `localAddress` (any 127.x.y.z on Linux). */
export function openRaw(port: number, localAddress = "127.0.0.1"): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port, localAddress });
    s.once("connect", () => resolve(s));
    s.once("error", reject);
  });
}

/** Collects what `socket` receives until it closes or `waitMs` passes; then destroys it. */
export function collect(socket: Socket, waitMs: number): Promise<RawOutcome> {
  return new Promise((done) => {
    const decoder = new FrameDecoder();
    const frames: { type: number; payload: Uint8Array }[] = [];
    let finished = false;
    const finish = (closedByPeer: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      const rej = frames.find((f) => f.type === FrameType.HANDSHAKE_REJECT);
      const r = rej ? decodeHandshakeReject(rej.payload) : undefined;
      done({ closedByPeer, frames, rejected: r?.ok ? r.value.reason : undefined });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on("data", (d: Buffer) => {
      for (const f of decoder.push(new Uint8Array(d)).frames)
        frames.push({ type: f.type, payload: f.payload.slice() });
    });
    socket.on("error", () => finish(true));
    socket.on("close", () => finish(true));
  });
}

/** Writes `bytes` on a new connection and waits for the node to close it. */
export async function replay(
  port: number,
  bytes: Uint8Array,
  options: { localAddress?: string; waitMs?: number } = {},
): Promise<RawOutcome> {
  const socket = await openRaw(port, options.localAddress);
  const outcome = collect(socket, options.waitMs ?? 5_000);
  socket.write(bytes);
  return outcome;
}

/** Reads frames from `socket` until one satisfies `pick`. */
function nextFrame(
  socket: Socket,
  timeoutMs: number,
): Promise<{ type: number; payload: Uint8Array }> {
  return new Promise((resolve, reject) => {
    const decoder = new FrameDecoder();
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error("no frame from the node"));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      const f = decoder.push(new Uint8Array(d)).frames[0];
      if (f === undefined) return;
      cleanup();
      resolve({ type: f.type, payload: f.payload.slice() });
    };
    const onClose = () => {
      cleanup();
      reject(new Error("closed before a frame"));
    };
    const cleanup = () => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
    };
    socket.on("data", onData);
    socket.on("close", onClose);
  });
}

/**
 * Completes a handshake as `self` (with `secret` if given), then sends `after` frames;
 * returns what the node did with the connection.
 */
export async function handshakeAs(
  port: number,
  self: HandshakeIdentity,
  options: {
    secret?: string;
    localAddress?: string;
    after?: readonly Uint8Array[];
    waitMs?: number;
  } = {},
): Promise<RawOutcome & { readonly acked: boolean }> {
  const socket = await openRaw(port, options.localAddress);
  const policy: HandshakePolicy = {
    systemName: self.systemName,
    secrets: options.secret ? [new TextEncoder().encode(options.secret)] : [],
    hmac,
  };
  const nonce = new Uint8Array(16).map(() => Math.floor(Math.random() * 256));
  const { req, state } = startHandshake(self, nonce);
  socket.write(encodeFrame(FrameType.HANDSHAKE_REQ, encodeHandshakeHello(req)));
  const first = await nextFrame(socket, options.waitMs ?? 5_000);
  if (first.type !== FrameType.HANDSHAKE_ACK) {
    const r = decodeHandshakeReject(first.payload);
    socket.destroy();
    return {
      acked: false,
      closedByPeer: true,
      frames: [first],
      rejected: r.ok ? r.value.reason : undefined,
    };
  }
  const ack = decodeHandshakeHello(first.payload);
  if (!ack.ok) throw new Error(`bad ACK: ${ack.error.detail}`);
  const step = onHandshakeAck(policy, state, ack.value, new Uint8Array(0));
  if (step.type !== "accept") throw new Error(`our side refused the ACK: ${step.logMessage}`);
  const outcome = collect(socket, options.waitMs ?? 5_000);
  socket.write(encodeFrame(FrameType.HANDSHAKE_CONFIRM, encodeHandshakeConfirm(step.confirm)));
  for (const f of options.after ?? []) socket.write(f);
  return { acked: true, ...(await outcome) };
}

/** A USER frame for `path` carrying msgpack `message` bytes. */
export function userFrame(path: string, message: Uint8Array): Uint8Array {
  return encodeFrame(
    FrameType.USER,
    encodeUserEnvelope({ recipient: path, serializerId: 1, message }),
  );
}

export { PROTOCOL_VERSION };
