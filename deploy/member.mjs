// A shardkit cluster member for containers (deploy/Dockerfile). Configured by environment:
//   SHARDKIT_SYSTEM_NAME          actor system name (default "shardkit")
//   SHARDKIT_HOST                 address other members reach this pod at (default: POD_IP)
//   SHARDKIT_PORT                 remoting port (default 2552)
//   SHARDKIT_MANAGEMENT_PORT      management port (default 8558)
//   SHARDKIT_MANAGEMENT_TOKEN     bearer token (required: the API binds to 0.0.0.0)
//   SHARDKIT_DISCOVERY_SERVICE    DNS name of the headless Service (bootstrap by discovery)
//   SHARDKIT_DISCOVERY_PORT_NAME  SRV port name (default "management")
//   SHARDKIT_REQUIRED_CONTACT_POINTS  (default 3)
//   SHARDKIT_REMOTING_SECRET      cluster secret (at least 16 characters), optional
// It hosts an example sharded entity type "Counter"; replace it with your application's.
import { Behaviors, ClusterNode, ClusterSharding, EntityTypeKey } from "../dist/index.js";

const env = process.env;
const host = env.SHARDKIT_HOST ?? env.POD_IP ?? "127.0.0.1";

const node = await ClusterNode.start({
  systemName: env.SHARDKIT_SYSTEM_NAME ?? "shardkit",
  host,
  port: Number(env.SHARDKIT_PORT ?? 2552),
  ...(env.SHARDKIT_REMOTING_SECRET ? { remoting: { secret: env.SHARDKIT_REMOTING_SECRET } } : {}),
  management: {
    host: "0.0.0.0",
    port: Number(env.SHARDKIT_MANAGEMENT_PORT ?? 8558),
    token: env.SHARDKIT_MANAGEMENT_TOKEN,
  },
  discovery: {
    method: "kubernetes-dns",
    serviceName: env.SHARDKIT_DISCOVERY_SERVICE,
    portName: env.SHARDKIT_DISCOVERY_PORT_NAME ?? "management",
    requiredContactPoints: Number(env.SHARDKIT_REQUIRED_CONTACT_POINTS ?? 3),
    stableMarginMs: 5_000,
  },
});

const Counter = EntityTypeKey("Counter");
ClusterSharding.get(node).init({
  typeKey: Counter,
  createBehavior: () => {
    let value = 0;
    return Behaviors.receive((_ctx, m) => {
      if (m.type === "add") value += m.n;
      else if (m.type === "get") m.replyTo.tell(value);
      return undefined;
    });
  },
});
