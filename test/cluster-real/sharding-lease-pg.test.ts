/**
 * Shard leases with real processes on PostgreSQL when SHARDKIT_PG_URL is set, else a
 * visible SKIP line (the tests: ./sharding-lease-scenario.ts).
 */
import { installChildTeardown } from "../support/child-teardown.js";
import { describeShardLeases } from "./sharding-lease-scenario.js";

installChildTeardown("perFile");

describeShardLeases("postgres");
