/**
 * Remoting between real processes on 127.0.0.1: tell and ask both ways, per-pair
 * ordering, refs inside messages, a ref handed on to a third node, and remote death
 * watch when the remote actor stops. Three child nodes (A, B, C) shared by the file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";
import {
  askEcho,
  command,
  type RemoteNode,
  startNode,
  stats,
  stopNode,
  waitForCounter,
  waitForStats,
} from "./remote-node.js";

installChildTeardown("perFile");

let a: RemoteNode;
let b: RemoteNode;
let c: RemoteNode;

beforeAll(async () => {
  [a, b, c] = await Promise.all([startNode("A"), startNode("B"), startNode("C")]);
}, 30_000);

afterAll(async () => {
  await Promise.all([a, b, c].filter((n) => n !== undefined).map((n) => stopNode(n)));
});

describe("two processes", () => {
  it("ask works both ways and the reply comes from the other process", async () => {
    const ab = await askEcho(a, b, { hello: "from A", n: [1, { deep: true }] });
    expect(ab).toEqual({ from: b.address, value: { hello: "from A", n: [1, { deep: true }] } });
    const ba = await askEcho(b, a, ["from B", 2]);
    expect(ba).toEqual({ from: a.address, value: ["from B", 2] });
  }, 20_000);

  it("tell works both ways, with the sender's own actor ref inside the message", async () => {
    // A tells B's echo { replyTo: <A's inbox>, value }; B replies to that ref: the ref
    // crossed the wire as address + path and resolved back to A's live inbox.
    await command(a, "tellRef", { address: b.address, path: "/user/echo", value: "a->b" });
    await command(b, "tellRef", { address: a.address, path: "/user/echo", value: "b->a" });
    const atA = await waitFor(
      a.child,
      (e) => e.event === "inbox" && (e.message as { value?: unknown }).value === "a->b",
      5_000,
    );
    expect(atA.message).toEqual({ from: b.address, value: "a->b" });
    const atB = await waitFor(
      b.child,
      (e) => e.event === "inbox" && (e.message as { value?: unknown }).value === "b->a",
      5_000,
    );
    expect(atB.message).toEqual({ from: a.address, value: "b->a" });
  }, 20_000);

  it("10 000 numbered messages each way arrive in order, without gaps or duplicates", async () => {
    const count = 10_000;
    const [fromA, fromB] = await Promise.all([
      command(a, "seq", { address: b.address, path: "/user/counter", count, stream: "order" }),
      command(b, "seq", { address: a.address, path: "/user/counter", count, stream: "order" }),
    ]);
    for (const [receiver, sender] of [
      [b, String(fromA.from)],
      [a, String(fromB.from)],
    ] as const) {
      const report = await waitForCounter(receiver, sender, count, 15_000);
      expect(report.errors).toEqual([]);
      expect(report.errorCount).toBe(0);
      expect(report.received).toBe(count);
    }
    const sa = await stats(a);
    expect(sa.userMessagesOut).toBeGreaterThanOrEqual(count);
    expect(sa.userMessagesIn).toBeGreaterThanOrEqual(count);
  }, 30_000);
});

describe("three processes", () => {
  it("A asks C through a ref it obtained from B", async () => {
    await command(b, "setDirectory", { address: c.address, path: "/user/echo" });
    const r = await command(a, "askVia", { address: b.address, value: "via B", timeoutMs: 3_000 });
    expect(r.via).toBe(`shardkit://${c.address}/user/echo`);
    expect(r.reply).toEqual({ from: c.address, value: "via B" });
  }, 20_000);

  it("a message to an ask path of B that is not a pending ask is counted as an unknown recipient", async () => {
    // Replies to asks take a shortcut on the receiving side (no path split); these paths
    // look like ask replies but name no pending ask, or one below it.
    const paths = [
      "/temp/$ask999999#999999",
      "/temp/$ask1/x#1",
      "/temp/$ask77#0",
      "/temp/$ask077#077",
    ];
    const before = await stats(b);
    for (const path of paths) await command(a, "tellRef", { address: b.address, path, value: 1 });
    await waitForStats(
      b,
      (s) => s.unknownRecipients >= before.unknownRecipients + paths.length,
      5_000,
    );
    // and a real ask still gets its reply through the shortcut
    expect(await askEcho(a, b, "after")).toEqual({ from: b.address, value: "after" });
    expect((await stats(b)).badMessages).toBe(before.badMessages);
  }, 20_000);
});

describe("remote death watch", () => {
  it("a watcher on A gets Terminated when the watched actor on B stops", async () => {
    await command(a, "watch", { watchId: "victim", address: b.address, path: "/user/victim" });
    // The watch is a system message: make sure it has been delivered before the stop.
    await askEcho(a, b, "sync");
    const before = await stats(a);
    expect(a.child.events.some((e) => e.event === "terminated")).toBe(false);
    await command(b, "stop", { name: "victim" });
    const t = await waitFor(
      a.child,
      (e) => e.event === "terminated" && e.watchId === "victim",
      5_000,
    );
    expect(String(t.ref)).toContain(`${b.address}/user/victim`);
    // Only the actor stopped, not the node: B still answers and nothing was quarantined.
    expect(await askEcho(a, b, "still up")).toEqual({ from: b.address, value: "still up" });
    expect((await stats(a)).quarantines).toBe(before.quarantines);
  }, 20_000);

  it("watching an actor that does not exist on B yields Terminated at once", async () => {
    await command(a, "watch", { watchId: "ghost", address: b.address, path: "/user/ghost" });
    const t = await waitFor(
      a.child,
      (e) => e.event === "terminated" && e.watchId === "ghost",
      5_000,
    );
    expect(String(t.ref)).toContain("/user/ghost");
  }, 20_000);
});
