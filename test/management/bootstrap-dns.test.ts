/**
 * Cluster bootstrap through a real DNS server: five members, each in its own network
 * namespace (veth pairs on a bridge in a hub namespace; 10.77.x addresses exist only
 * inside the namespaces), discover each other through dnsmasq (SRV
 * `_management._tcp.shardkit.test` -> member names -> A records) started by the test in
 * the hub namespace (restarted with one more record set before the sixth member starts). Started at once in random order: exactly one cluster of five, every
 * time (SHARDKIT_BOOTSTRAP_REPEAT repetitions, default 1; `npm run test:bootstrap` runs
 * 30). Then a sixth member joins the existing cluster through discovery.
 *
 * Needs root, `ip netns` and dnsmasq (.ci/run installs it); otherwise prints a SKIP line.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { type StateReply, state, waitAllUp } from "../cluster-real/cluster-node.js";
import { type ShardingNode, startShardingNode } from "../cluster-real/sharding-node.js";
import { killAll } from "../support/child-process.js";
import { installChildTeardown } from "../support/child-teardown.js";

installChildTeardown("perFile");

const REPEAT = Number(process.env.SHARDKIT_BOOTSTRAP_REPEAT ?? 1);
const MEMBERS = 5;
const TOKEN = "bootstrap-dns-token-0123456789";
const TYPE = { name: "Counter", numberOfShards: 10 };
const SERVICE = "shardkit.test";
const SUBNET = "10.77.0";
const DNS_IP = `${SUBNET}.1`;
const REMOTING_PORT = 2552;
const MANAGEMENT_PORT = 8558;
const START_TIMEOUT_MS = 60_000;
const FORM_TIMEOUT_MS = 30_000;
const PREFIX = `sk${process.pid % 100_000}`;
const HUB = `${PREFIX}h`;

function can(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const isRoot = process.getuid?.() === 0;
const hasNetns = isRoot && can("ip", ["netns", "list"]);
const hasDnsmasq = can("dnsmasq", ["--version"]);
const skipReason = !isRoot
  ? "not root"
  : !hasNetns
    ? "no ip netns"
    : !hasDnsmasq
      ? "dnsmasq is not installed (apt-get install -y dnsmasq)"
      : undefined;
if (skipReason !== undefined)
  console.log(`SKIP test/management/bootstrap-dns.test.ts: ${skipReason}`);

const ip = (...args: string[]) => execFileSync("ip", args, { stdio: "pipe" });
const memberNs = (i: number) => `${PREFIX}m${i}`;
const memberIp = (i: number) => `${SUBNET}.${11 + i}`;
const memberName = (i: number) => `m${i}.${SERVICE}`;
const namespaces: string[] = [];
let dnsmasq: ChildProcess | undefined;

function setUpNetwork(count: number): void {
  ip("netns", "add", HUB);
  namespaces.push(HUB);
  ip("-n", HUB, "link", "set", "lo", "up");
  ip("-n", HUB, "link", "add", "br0", "type", "bridge");
  ip("-n", HUB, "addr", "add", `${DNS_IP}/24`, "dev", "br0");
  ip("-n", HUB, "link", "set", "br0", "up");
  for (let i = 0; i < count; i++) {
    const ns = memberNs(i);
    ip("netns", "add", ns);
    namespaces.push(ns);
    ip("-n", HUB, "link", "add", `v${i}`, "type", "veth", "peer", "name", "eth0", "netns", ns);
    ip("-n", HUB, "link", "set", `v${i}`, "master", "br0", "up");
    ip("-n", ns, "link", "set", "lo", "up");
    ip("-n", ns, "addr", "add", `${memberIp(i)}/24`, "dev", "eth0");
    ip("-n", ns, "link", "set", "eth0", "up");
  }
}

/** (Re)starts dnsmasq with SRV and A records for the first `count` members. */
async function startDns(count: number): Promise<void> {
  if (dnsmasq !== undefined) {
    const old = dnsmasq;
    old.kill("SIGKILL");
    if (old.exitCode === null) await new Promise((r) => old.once("exit", r));
  }
  const records: string[] = [];
  for (let i = 0; i < count; i++) {
    records.push(`--host-record=${memberName(i)},${memberIp(i)}`);
    records.push(`--srv-host=_management._tcp.${SERVICE},${memberName(i)},${MANAGEMENT_PORT}`);
  }
  dnsmasq = spawn(
    "ip",
    [
      "netns",
      "exec",
      HUB,
      "dnsmasq",
      "--keep-in-foreground",
      "--conf-file=/dev/null",
      "--no-resolv",
      "--no-hosts",
      "--user=root",
      "--pid-file=",
      `--listen-address=${DNS_IP}`,
      "--bind-interfaces",
      "--port=53",
      ...records,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let err = "";
  dnsmasq.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  // ready once it answers: ask it from a member namespace
  const deadline = Date.now() + 10_000;
  while (
    !can("ip", ["netns", "exec", memberNs(0), "getent", "hosts", "localhost"]) ||
    !dnsAnswers()
  ) {
    if (dnsmasq.exitCode !== null) throw new Error(`dnsmasq exited: ${err}`);
    if (Date.now() > deadline) throw new Error(`dnsmasq did not answer: ${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function dnsAnswers(): boolean {
  // node's resolver, inside a member namespace, against dnsmasq
  const script = `const{Resolver}=require("node:dns").promises;const r=new Resolver();r.setServers(["${DNS_IP}"]);r.resolveSrv("_management._tcp.${SERVICE}").then(x=>process.exit(x.length>0?0:1),()=>process.exit(1))`;
  return can("ip", ["netns", "exec", memberNs(0), process.execPath, "-e", script]);
}

function tearDown(): void {
  dnsmasq?.kill("SIGKILL");
  for (const ns of namespaces.splice(0).reverse()) {
    try {
      ip("netns", "del", ns);
    } catch {
      // already gone
    }
  }
}

afterAll(async () => {
  await killAll();
  tearDown();
}, 30_000);

function discovery(required: number) {
  return {
    method: "kubernetes-dns" as const,
    serviceName: SERVICE,
    portName: "management",
    requiredContactPoints: required,
    stableMarginMs: 1_000,
    probeIntervalMs: 200,
    probeTimeoutMs: 1_000,
    dnsServers: [DNS_IP],
  };
}

function startMember(i: number, required: number): Promise<ShardingNode> {
  return startShardingNode(
    {
      name: `M${i}`,
      types: [TYPE],
      host: memberIp(i),
      netns: memberNs(i),
      // Off loopback a member refuses to start without a secret or TLS (docs/security.md).
      secret: "bootstrap-dns-test-secret",
      management: { host: memberIp(i), port: MANAGEMENT_PORT, token: TOKEN },
      discovery: discovery(required),
      startTimeoutMs: START_TIMEOUT_MS,
    },
    REMOTING_PORT,
    [],
  );
}

describe.skipIf(skipReason !== undefined)(
  "bootstrap by discovery through dnsmasq, members in network namespaces",
  () => {
    let last: ShardingNode[] = [];

    it("sets up the namespaces and the DNS server", async () => {
      setUpNetwork(MEMBERS + 1);
      await startDns(MEMBERS);
    }, 60_000);

    for (let run = 1; run <= REPEAT; run++)
      it(`run ${run}/${REPEAT}: ${MEMBERS} members started at once in random order form exactly one cluster`, async () => {
        const order = [...Array(MEMBERS).keys()].sort(() => Math.random() - 0.5);
        const started: Promise<ShardingNode>[] = new Array(MEMBERS);
        for (const i of order)
          started[i] = new Promise<void>((r) => setTimeout(r, Math.random() * 1_500)).then(() =>
            startMember(i, MEMBERS),
          );
        try {
          const nodes = await Promise.all(started);
          const views: StateReply[] = await waitAllUp(nodes, nodes, FORM_TIMEOUT_MS).catch(
            (error: unknown) => {
              const logs = nodes.map(
                (n) =>
                  `${n.name}:\n${n.child.stderr
                    .filter((l) => /bootstrap|contact|join|formed/.test(l))
                    .slice(-6)
                    .join("\n")}`,
              );
              throw new Error(`${String(error)}\n${logs.join("\n")}`);
            },
          );
          // the lowest address formed it: it is the leader everywhere
          for (const v of views) expect(v.leader).toBe(`${memberIp(0)}:${REMOTING_PORT}`);
          last = nodes;
        } finally {
          // a failed run must not leave members holding the fixed ports of the next one
          if (run < REPEAT) await killAll();
        }
      }, 180_000);

    it("a sixth member joins the existing cluster through DNS discovery", async () => {
      expect(last).toHaveLength(MEMBERS);
      // the new member's records appear in DNS (as a new pod's would)
      await startDns(MEMBERS + 1);
      const newcomer = await startMember(MEMBERS, 2);
      await waitAllUp([...last, newcomer], [...last, newcomer], FORM_TIMEOUT_MS);
      expect((await state(newcomer)).members).toHaveLength(MEMBERS + 1);
    }, 120_000);
  },
);
