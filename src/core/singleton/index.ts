/**
 * Cluster singleton (sans-IO, docs/architecture.md, "Layers"): the manager machine that
 * runs exactly one instance on the oldest eligible member with the role, handing it over
 * when that member leaves and taking it over when it is downed and removed; the proxy
 * machine that locates the instance and buffers messages until then. The drivers in
 * cluster/ feed membership, messages and timers in and perform the outputs.
 */

export {
  SINGLETON_MANAGER_MESSAGE_TYPES,
  type SingletonManagerMessage,
} from "../../protocol/singleton.js";
export * from "./singleton-errors.js";
export * from "./singleton-manager.js";
export * from "./singleton-manager-types.js";
export * from "./singleton-members.js";
export * from "./singleton-proxy.js";
export * from "./singleton-settings.js";
export * from "./singleton-wire.js";
