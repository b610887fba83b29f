/**
 * Shard leases with real processes on SQLite (the tests: ./sharding-lease-scenario.ts).
 */
import { installChildTeardown } from "../support/child-teardown.js";
import { describeShardLeases } from "./sharding-lease-scenario.js";

installChildTeardown("perFile");

describeShardLeases("sqlite");
