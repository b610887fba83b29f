/**
 * P4 with real processes on PostgreSQL when SHARDKIT_PG_URL is set, else a visible SKIP
 * line (the tests: ./persistence-restart-scenario.ts).
 */
import { installChildTeardown } from "../support/child-teardown.js";
import { describePersistenceRestart } from "./persistence-restart-scenario.js";

installChildTeardown("perFile");

describePersistenceRestart("postgres");
