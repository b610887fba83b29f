export type { Peer } from "./inbound-connection.js";
export { RemoteActorRef } from "./remote-actor-ref.js";
export {
  CONTROL_KIND_USER_MIN,
  type ControlHandler,
  RemoteSendError,
  Remoting,
  type RemotingOptions,
} from "./remoting.js";
export {
  defaultRemotingSettings,
  type RemotingSettings,
  remotingSettings,
} from "./remoting-settings.js";
export type { ControlKindStats, RemotingStats } from "./remoting-stats.js";
export type { WireNode } from "./wire-path.js";
