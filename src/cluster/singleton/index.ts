export {
  ClusterSingleton,
  type ClusterSingletonOptions,
  type SingletonHost,
  SingletonNameTakenError,
} from "./cluster-singleton.js";
