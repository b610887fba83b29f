/**
 * Interpreter of the scripted interaction tests in test/core/scripts/*.txt (the
 * etcd/raft "datadriven" style): a script is a sequence of commands, each optionally
 * followed by the lines it must print, prefixed with `>`.
 *
 * - `#` lines and blank lines are comments.
 * - Setup commands (members, seen, unreachable, ...) print nothing and take no `>` lines.
 * - Action commands print at least one line (`ok` when they produce nothing); the `>`
 *   lines right after the command must match the printed lines exactly and in order.
 * - A mismatch or an exception fails with `script:line`, the command, and both traces.
 *
 * Node names: `a` is shardkit://sys@a:2552 with uid 1, `a#2` the same host:port with
 * uid 2. Host order is address order, so `a` < `b` < `c`. The commands themselves are
 * in script-commands.ts.
 */
import { type Address, addressOf } from "../../src/core/membership/address.js";
import type { ClusterEvent } from "../../src/core/membership/cluster-events.js";
import type { Member } from "../../src/core/membership/member.js";
import { UP_NUMBER_UNASSIGNED } from "../../src/core/membership/member.js";
import { nodeOf, type UniqueAddress } from "../../src/core/membership/unique-address.js";

/** Parsed arguments: positional tokens and key=value options. */
export interface Args {
  readonly pos: readonly string[];
  readonly kv: ReadonlyMap<string, string>;
}

/** A command: returns the printed lines, or undefined for a silent setup command. */
export type Command<W> = (world: W, args: Args) => string[] | undefined;

export const SYSTEM = "sys";
export const PROTOCOL = "shardkit";
export const PORT = 2552;

/** `a` or `a#2` -> the node. */
export function node(name: string): UniqueAddress {
  const [host, uid] = name.split("#");
  if (host === undefined || host === "") throw new Error(`bad node name "${name}"`);
  return nodeOf(PROTOCOL, SYSTEM, host, PORT, uid === undefined ? 1 : Number(uid));
}

/** `a` -> the address of host a. */
export function address(name: string): Address {
  return addressOf(PROTOCOL, SYSTEM, name, PORT);
}

/** The short name of a node: host, plus `#uid` when uid is not 1. */
export function nameOf(n: UniqueAddress): string {
  return n.uid === 1 ? n.address.host : `${n.address.host}#${n.uid}`;
}

/** Short names of nodes, comma-separated (`-` when empty). */
export function names(nodes: readonly UniqueAddress[]): string {
  return nodes.length === 0 ? "-" : nodes.map(nameOf).join(",");
}

/** `a:up:1@r1,r2` style, upNumber omitted when unassigned, roles omitted when none. */
export function formatMember(m: Member): string {
  const up = m.upNumber === UP_NUMBER_UNASSIGNED ? "" : `:${m.upNumber}`;
  const roles = m.roles.length === 0 ? "" : `@${m.roles.join(",")}`;
  return `${nameOf(m.uniqueAddress)}:${m.status}${up}${roles}`;
}

/** One line per event. */
export function formatEvent(e: ClusterEvent): string {
  switch (e.type) {
    case "member-joined":
      return `joined ${nameOf(e.member.uniqueAddress)}`;
    case "member-weakly-up":
      return `weakly-up ${nameOf(e.member.uniqueAddress)}`;
    case "member-up":
      return `up ${nameOf(e.member.uniqueAddress)} upNumber=${e.member.upNumber}`;
    case "member-preparing-for-shutdown":
      return `preparing-for-shutdown ${nameOf(e.member.uniqueAddress)}`;
    case "member-ready-for-shutdown":
      return `ready-for-shutdown ${nameOf(e.member.uniqueAddress)}`;
    case "member-left":
      return `left ${nameOf(e.member.uniqueAddress)}`;
    case "member-exited":
      return `exited ${nameOf(e.member.uniqueAddress)}`;
    case "member-downed":
      return `downed ${nameOf(e.member.uniqueAddress)}`;
    case "member-removed":
      return `removed ${nameOf(e.member.uniqueAddress)} previous=${e.previousStatus}`;
    case "unreachable-member":
      return `unreachable ${nameOf(e.member.uniqueAddress)}`;
    case "reachable-member":
      return `reachable ${nameOf(e.member.uniqueAddress)}`;
    case "leader-changed":
      return `leader-changed ${e.leader === undefined ? "none" : nameOf(e.leader)}`;
    case "role-leader-changed":
      return `role-leader-changed ${e.role} ${e.leader === undefined ? "none" : nameOf(e.leader)}`;
  }
}

/** Splits a command line into verb and arguments. */
export function parseCommand(line: string): { verb: string; args: Args } {
  const tokens = line.split(/\s+/).filter((t) => t !== "");
  const pos: string[] = [];
  const kv = new Map<string, string>();
  for (const t of tokens.slice(1)) {
    const eq = t.indexOf("=");
    if (eq > 0) kv.set(t.slice(0, eq), t.slice(eq + 1));
    else pos.push(t);
  }
  return { verb: tokens[0] ?? "", args: { pos, kv } };
}

/** A required option. */
export function req(args: Args, key: string): string {
  const v = args.kv.get(key);
  if (v === undefined) throw new Error(`missing option ${key}=`);
  return v;
}

/** A numeric option with a default. */
export function num(args: Args, key: string, fallback: number): number {
  const v = args.kv.get(key);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`option ${key}=${v} is not a number`);
  return n;
}

/** A comma-separated list option (empty when absent or `-`). */
export function list(args: Args, key: string): string[] {
  const v = args.kv.get(key);
  return v === undefined || v === "-" || v === "" ? [] : v.split(",");
}

interface Step {
  readonly lineNo: number;
  readonly text: string;
  readonly expected: string[];
}

function stepsOf(name: string, source: string): Step[] {
  const lines = source.split("\n");
  const steps: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    const text = (lines[i] as string).trim();
    if (text === "" || text.startsWith("#")) continue;
    if (text.startsWith(">"))
      throw new Error(`${name}:${i + 1}: expected output without a command`);
    const expected: string[] = [];
    while (i + 1 < lines.length && (lines[i + 1] as string).trim().startsWith(">")) {
      i++;
      expected.push((lines[i] as string).trim().slice(1).trim());
    }
    steps.push({ lineNo: i + 1 - expected.length, text, expected });
  }
  return steps;
}

function indent(lines: readonly string[]): string {
  return lines.length === 0 ? "    (nothing)" : lines.map((l) => `    > ${l}`).join("\n");
}

/**
 * Runs one script against a fresh world; throws an Error naming `name:line` at the first
 * mismatch. Returns the number of commands run.
 */
export function runScript<W>(
  name: string,
  source: string,
  world: W,
  commands: Readonly<Record<string, Command<W>>>,
): number {
  const steps = stepsOf(name, source);
  for (const step of steps) {
    const where = `${name}:${step.lineNo}: ${step.text}`;
    const { verb, args } = parseCommand(step.text);
    const command = commands[verb];
    if (command === undefined) throw new Error(`${where}\n  unknown command "${verb}"`);
    let printed: string[] | undefined;
    try {
      printed = command(world, args);
    } catch (e) {
      throw new Error(`${where}\n  failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    const actual = printed === undefined ? [] : printed.length === 0 ? ["ok"] : printed;
    if (printed === undefined && step.expected.length > 0)
      throw new Error(`${where}\n  setup command prints nothing but output is expected`);
    const same =
      actual.length === step.expected.length && actual.every((l, i) => l === step.expected[i]);
    if (!same)
      throw new Error(
        `${where}\n  expected:\n${indent(step.expected)}\n  actual:\n${indent(actual)}`,
      );
  }
  return steps.length;
}
