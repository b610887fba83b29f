/**
 * P4 with real processes on SQLite, and with sharding state in Distributed Data (the
 * tests: ./persistence-restart-scenario.ts).
 */
import { installChildTeardown } from "../support/child-teardown.js";
import { describePersistenceRestart } from "./persistence-restart-scenario.js";

installChildTeardown("perFile");

describePersistenceRestart("sqlite");
