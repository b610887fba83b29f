export { type BackoffSettings, backoffMs } from "./backoff.js";
export {
  type PendingSystemMessage,
  type ReceiveVerdict,
  SystemMessageReceiver,
  SystemMessageSender,
} from "./system-channel.js";
