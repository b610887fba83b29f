/**
 * The simulated network: a deterministic Transport implementation for SimWorld
 * (see sim-network.ts and docs/simulator.md).
 */
export type { ResetCause } from "./net-errors.js";
export type { SimEndpoint } from "./sim-endpoint.js";
export type { SimListener } from "./sim-listener.js";
export {
  type DirectionOptions,
  type NodeNames,
  SimNetwork,
} from "./sim-network.js";
export {
  DEFAULT_LINK_CONFIG,
  type LinkConfig,
  type SimNetworkOptions,
} from "./sim-network-settings.js";
export type { SimTransport } from "./sim-transport.js";
