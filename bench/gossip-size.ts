/**
 * `node --import tsx bench/gossip-size.ts [N...]`: bytes of one full gossip message on the
 * wire (payload + kind byte + 5-byte frame header) for a converged N-member cluster (all
 * Up, all seen, one clock entry per member, realistic 53-bit uids), as this code encodes
 * it. Used for the before/after figures of docs/cluster-scale.md ("Gossip size"): run it
 * in two worktrees.
 */
import { encodeMembershipMessage } from "../src/cluster/membership/membership-messages.js";
import { clockKeyOf, gossipOf, incrementVersion } from "../src/core/membership/gossip.js";
import { memberFrom } from "../src/core/membership/member.js";
import { MembershipKind } from "../src/core/membership/membership-messages.js";
import { nodeOf, uniqueAddressToString } from "../src/core/membership/unique-address.js";
import { SerializerRegistry } from "../src/protocol/serializer-registry.js";

const sizes = process.argv.slice(2).map(Number);
const registry = new SerializerRegistry();
for (const n of sizes.length > 0 ? sizes : [250, 1000]) {
  const nodes = Array.from({ length: n }, (_, i) =>
    nodeOf(
      "shardkit",
      "sk",
      `n${String(i).padStart(3, "0")}`,
      2552,
      4_000_000_000_000_000 + i * 7_919,
    ),
  );
  let g = gossipOf({
    members: nodes.map((u, i) => memberFrom({ uniqueAddress: u, status: "up", upNumber: i + 1 })),
    seen: nodes,
  });
  for (const u of nodes.slice(0, 3)) g = incrementVersion(g, clockKeyOf(u));
  const payload = encodeMembershipMessage(registry, {
    kind: MembershipKind.Gossip,
    to: uniqueAddressToString(nodes[1] ?? nodes[0]!),
    gossip: g,
  });
  process.stdout.write(
    `${n} members: ${payload.length + 6} B (${((payload.length + 6) / n).toFixed(1)} B/member)\n`,
  );
}
