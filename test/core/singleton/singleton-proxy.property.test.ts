/**
 * Property test of the singleton proxy (fast-check): under any sequence of sends,
 * membership changes (the oldest changes), identification answers (right or stale,
 * found or not), terminations and timers:
 * - every message sent is accounted for exactly once: delivered, dead-lettered or still
 *   buffered, and `stats` agrees;
 * - deliveries happen in send order, and only to the node that answered "found" while it
 *   was the oldest eligible member;
 * - the buffer never holds more than bufferSizeMax; overflow drops the oldest.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Member, memberFrom } from "../../../src/core/membership/member.js";
import { uniqueAddressToString } from "../../../src/core/membership/unique-address.js";
import {
  SINGLETON_PROXY_IDENTIFY_TIMER,
  SingletonProxyMachine,
  type SingletonProxyOutput,
} from "../../../src/core/singleton/index.js";
import { node } from "../script-runner.js";

const HOSTS = ["a", "b", "c", "d"] as const;
const key = (host: string) => uniqueAddressToString(node(host));

const op = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "send" as const }) },
  { weight: 2, arbitrary: fc.nat({ max: 3 }).map((i) => ({ kind: "leave" as const, i })) },
  {
    weight: 3,
    arbitrary: fc
      .record({ i: fc.nat({ max: 3 }), found: fc.boolean() })
      .map((r) => ({ kind: "identified" as const, ...r })),
  },
  { weight: 1, arbitrary: fc.nat({ max: 3 }).map((i) => ({ kind: "terminated" as const, i })) },
  { weight: 1, arbitrary: fc.constant({ kind: "timer" as const }) },
);

describe("singleton proxy (property)", () => {
  it("accounts for every message, delivers in order, bounds the buffer", () => {
    fc.assert(
      fc.property(fc.nat({ max: 5 }), fc.array(op, { maxLength: 200 }), (bufferSizeMax, ops) => {
        const proxy = new SingletonProxyMachine<number>({
          role: undefined,
          settings: { bufferSizeMax },
        });
        const status: Member["status"][] = HOSTS.map(() => "up");
        const membersNow = () =>
          HOSTS.map((h, i) =>
            memberFrom({ uniqueAddress: node(h), status: status[i] ?? "up", upNumber: i + 1 }),
          );
        const oldestNow = () => HOSTS.find((_, i) => status[i] === "up");
        let sent = 0;
        let lastDelivered = -1;
        /** Host where the model says the instance is located. */
        let located: string | undefined;
        const delivered: number[] = [];
        const dropped: number[] = [];
        const apply = (outs: SingletonProxyOutput<number>[]) => {
          for (const o of outs) {
            if (o.type === "deliver") {
              expect(o.message).toBeGreaterThan(lastDelivered);
              lastDelivered = o.message;
              expect(uniqueAddressToString(o.to)).toBe(located && key(located));
              delivered.push(o.message);
            } else if (o.type === "dead-letter") dropped.push(o.message);
          }
        };
        apply(proxy.handle({ type: "members", oldestFirst: membersNow() }));
        for (const o of ops) {
          if (o.kind === "send") apply(proxy.handle({ type: "send", message: sent++ }));
          else if (o.kind === "leave") {
            status[o.i] = "leaving";
            if (oldestNow() !== located) located = undefined;
            apply(proxy.handle({ type: "members", oldestFirst: membersNow() }));
          } else if (o.kind === "identified") {
            const h = HOSTS[o.i] as string;
            if (o.found && h === oldestNow() && located === undefined) located = h;
            apply(proxy.handle({ type: "identify-result", from: node(h), found: o.found }));
          } else if (o.kind === "terminated") {
            const h = HOSTS[o.i] as string;
            if (h === located) located = undefined;
            apply(proxy.handle({ type: "singleton-terminated", at: node(h) }));
          } else apply(proxy.handle({ type: "timer", key: SINGLETON_PROXY_IDENTIFY_TIMER }));
          const s = proxy.stats;
          expect(s.buffered).toBeLessThanOrEqual(bufferSizeMax);
          expect(s.buffered + delivered.length + dropped.length).toBe(sent);
          expect(s.droppedCount).toBe(dropped.length);
          expect(s.deliveredCount).toBe(delivered.length);
          expect(proxy.location && uniqueAddressToString(proxy.location)).toBe(
            located && key(located),
          );
          if (located !== undefined) expect(s.buffered).toBe(0);
        }
        // Every message is delivered or dropped at most once, and what is buffered is
        // the newest ones not yet delivered: overflow dropped the oldest.
        const seen = new Set([...delivered, ...dropped]);
        expect(seen.size).toBe(delivered.length + dropped.length);
        for (let m = sent - proxy.stats.buffered; m < sent; m++) expect(seen.has(m)).toBe(false);
      }),
      { numRuns: 300, seed: 0x5eed },
    );
  });
});
