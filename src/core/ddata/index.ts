/** Distributed Data CRDTs (pure values); see docs/distributed-data.md. */
export { CausalContext } from "./causal.js";
export { GCounter, PNCounter } from "./counters.js";
export {
  createDDataSerializer,
  DDATA_SERIALIZER_ID,
  DDataDecodeError,
  decodeReplicatedData,
  encodeReplicatedData,
  isReplicatedData,
} from "./ddata-codec.js";
export { LWWMap, ORMap, ORMultiMap, PNCounterMap } from "./ormap.js";
export { ORSet } from "./orset.js";
export {
  type DDataElement,
  type DDataKind,
  DDataTypeMismatchError,
  InvalidDDataOperationError,
  ReplicatedData,
} from "./replicated-data.js";
export {
  Flag,
  GSet,
  LWW_LOGICAL_CLOCK,
  LWWRegister,
  type LwwClock,
  lwwWallClock,
} from "./simple.js";
