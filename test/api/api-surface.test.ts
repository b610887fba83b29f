/**
 * The public API as a visible diff: the sorted names (values and types) exported by each
 * package entry point in package.json "exports". Changing what `shardkit` or a subpath
 * exports changes a snapshot below, so the change shows in review; update the list on
 * purpose, never to make the test pass by accident.
 *
 * The names are read from the TypeScript sources with the compiler's parser (no type
 * checking, so it is fast), following `export ... from` and `export *` through the
 * files. It also checks that an entry point exports each name once (one export line per
 * name) and that `shardkit` and `shardkit/internal` share no name, and that every
 * `import { ... } from "shardkit..."` in README.md and docs/ names something exported.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

interface Surface {
  /** Exported name -> the export statements (file:line) that export it. */
  readonly names: Map<string, string[]>;
}

function sourceOf(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
}

function tsPath(from: string, spec: string): string {
  return resolve(dirname(from), spec).replace(/\.js$/, ".ts");
}

function hasExportModifier(node: ts.Node): boolean {
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
  );
}

/** The names `file` exports, each with where it is exported from `file`. */
function surfaceOf(file: string, seen: Set<string> = new Set()): Surface {
  const names = new Map<string, string[]>();
  const add = (name: string, where: string) => names.set(name, [...(names.get(name) ?? []), where]);
  if (seen.has(file)) return { names };
  seen.add(file);
  const sf = sourceOf(file);
  const rel = file.slice(ROOT.length + 1);
  for (const st of sf.statements) {
    const where = `${rel}:${sf.getLineAndCharacterOfPosition(st.getStart()).line + 1}`;
    if (ts.isExportDeclaration(st)) {
      const spec =
        st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)
          ? st.moduleSpecifier.text
          : undefined;
      if (st.exportClause === undefined) {
        // export * from "x": every name of x except default
        if (spec === undefined) continue;
        for (const name of surfaceOf(tsPath(file, spec), new Set(seen)).names.keys())
          if (name !== "default") add(name, where);
      } else if (ts.isNamedExports(st.exportClause)) {
        for (const el of st.exportClause.elements) add(el.name.text, where);
      } else add(st.exportClause.name.text, where);
    } else if (hasExportModifier(st)) {
      if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations)
          if (ts.isIdentifier(d.name)) add(d.name.text, where);
      } else if (
        (ts.isFunctionDeclaration(st) ||
          ts.isClassDeclaration(st) ||
          ts.isInterfaceDeclaration(st) ||
          ts.isTypeAliasDeclaration(st) ||
          ts.isEnumDeclaration(st) ||
          ts.isModuleDeclaration(st)) &&
        st.name !== undefined
      )
        add(st.name.text, where);
    }
  }
  return { names };
}

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  exports: Record<string, string | { types?: string }>;
};

/** package.json subpath -> its TypeScript source (dist/x.d.ts -> src/x.ts). */
const ENTRY_POINTS: ReadonlyMap<string, string> = new Map(
  Object.entries(pkg.exports)
    .filter(([, v]) => typeof v === "object" && v.types !== undefined)
    .map(([k, v]) => [
      k,
      join(
        ROOT,
        (v as { types: string }).types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts"),
      ),
    ]),
);

const sorted = (entry: string): string[] =>
  [...surfaceOf(ENTRY_POINTS.get(entry) as string).names.keys()].sort();

describe("public API surface", () => {
  it("lists the entry points of package.json", { timeout: 30_000 }, () => {
    expect([...ENTRY_POINTS.keys()].sort()).toEqual([
      ".",
      "./ddata",
      "./internal",
      "./node",
      "./postgres",
      "./sim",
      "./sqlite",
      "./testing",
    ]);
  });

  it("exports each name once per entry point", { timeout: 30_000 }, () => {
    const duplicates: string[] = [];
    for (const [entry, file] of ENTRY_POINTS)
      for (const [name, where] of surfaceOf(file).names)
        if (where.length > 1) duplicates.push(`${entry} ${name}: ${where.join(", ")}`);
    expect(duplicates).toEqual([]);
  });

  it("shardkit and shardkit/internal share no name", { timeout: 30_000 }, () => {
    const pub = new Set(sorted("."));
    expect(sorted("./internal").filter((n) => pub.has(n))).toEqual([]);
  });

  it("shardkit does not export the internals", { timeout: 30_000 }, () => {
    const pub = new Set(sorted("."));
    for (const name of [
      "Cluster",
      "Remoting",
      "RemoteActorRef",
      "ShutdownMachine",
      "SelfExitWatch",
      "installClusterShutdown",
      "RedeliveryPlanner",
      "applyOutboxEvent",
      "JournalCoordinatorStore",
    ])
      expect(pub.has(name), name).toBe(false);
  });

  it("every import from shardkit in README.md and docs/ names an export", {
    timeout: 30_000,
  }, () => {
    const files = [
      join(ROOT, "README.md"),
      ...readdirSync(join(ROOT, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => join(ROOT, "docs", f)),
    ];
    const importRe = /import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*"shardkit(\/[a-z]+)?"/g;
    const missing: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const m of readFileSync(file, "utf8").matchAll(importRe)) {
        checked++;
        const entry = `.${m[2] ?? ""}`;
        const source = ENTRY_POINTS.get(entry);
        if (source === undefined) {
          missing.push(`${file.slice(ROOT.length + 1)}: no entry point shardkit${m[2] ?? ""}`);
          continue;
        }
        const names = surfaceOf(source).names;
        for (const raw of (m[1] as string).split(",")) {
          const name = raw
            .trim()
            .replace(/^type\s+/, "")
            .split(/\s+as\s+/)[0] as string;
          if (name !== "" && !names.has(name))
            missing.push(`${file.slice(ROOT.length + 1)}: ${name} from shardkit${m[2] ?? ""}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  it("the reader follows export *, named re-exports and local declarations", () => {
    const s = surfaceOf(join(ROOT, "src/core/shutdown/index.ts")).names;
    expect(s.has("ShutdownMachine")).toBe(true); // export * -> export class
    expect(s.has("ShutdownReason")).toBe(true); // export * -> export type
    expect(s.has("DEFAULT_PHASE_TIMEOUT_MS")).toBe(true); // export * -> export const
    expect(surfaceOf(join(ROOT, "src/runtime/node/index.ts")).names.has("yieldToHost")).toBe(true);
  });

  it("shardkit", { timeout: 30_000 }, () => {
    expect(sorted(".")).toMatchInlineSnapshot(`
      [
        "AbortError",
        "AbstractBehavior",
        "ActorContext",
        "ActorFailed",
        "ActorPath",
        "ActorRef",
        "ActorSettings",
        "ActorSystem",
        "ActorSystemOptions",
        "ActorSystemStats",
        "ActorSystemView",
        "AnyEvent",
        "AskOptions",
        "AskRejectedError",
        "AskTimeoutError",
        "AsyncSchemaError",
        "BUILT_IN_PHASE_NAMES",
        "BackoffOptions",
        "Behavior",
        "BehaviorResult",
        "Behaviors",
        "BuiltInShutdownPhase",
        "CheckResult",
        "ClassicShardingOptions",
        "Clock",
        "ClusterEvent",
        "ClusterEventHandler",
        "ClusterNode",
        "ClusterNodeOptions",
        "ClusterProfile",
        "ClusterProfiles",
        "ClusterSettings",
        "ClusterSharding",
        "ClusterShardingStats",
        "ClusterSingleton",
        "ClusterSingletonOptions",
        "ClusterState",
        "CodecMismatchError",
        "Collector",
        "ConfigError",
        "ConsistentHashingSettings",
        "ControlKindStats",
        "CoordinatedShutdown",
        "CoordinatedShutdownOptions",
        "CoordinatorAllocationStrategy",
        "CoordinatorSettings",
        "DEFAULT_PHASE_TIMEOUT_MS",
        "DURATION_BUCKETS_SECONDS",
        "DeadLetter",
        "DeadLetterReason",
        "DeathPactError",
        "DeliverFn",
        "Delivery",
        "DiscoveryOptions",
        "DiscoverySettings",
        "Disposable",
        "Effect",
        "EffectFactory",
        "EntityCreationContext",
        "EntityId",
        "EntityLocation",
        "EntityRef",
        "EntityTypeKey",
        "EntityTypeKeyOptions",
        "EventCodec",
        "EventOf",
        "EventSourcedBehavior",
        "EventSourcedOptions",
        "EventSourcedPersistError",
        "EventSourcedRecoveryError",
        "EventStream",
        "EventValidationError",
        "EvolutionSpec",
        "FencedWriteError",
        "HandOffAbandonCause",
        "HandOffReason",
        "HandlerResult",
        "HashCodeExtractorOptions",
        "HashCodeMessageExtractor",
        "HistogramSeries",
        "InvalidActorNameError",
        "InvalidActorRefError",
        "InvalidAddressError",
        "InvalidEffectError",
        "InvalidRememberBatchError",
        "Journal",
        "JournalConflictError",
        "JournalEvent",
        "JournalRejectedError",
        "KNOWN_SHUTDOWN_REASONS",
        "KnownShutdownReason",
        "Labels",
        "Lease",
        "LeaseLostError",
        "LeaseProvider",
        "LeaseStore",
        "LeaseUnavailableError",
        "LeastShardSettings",
        "LogLevel",
        "Logger",
        "MANAGEMENT_HOST_DEFAULT",
        "MANAGEMENT_PORT_DEFAULT",
        "MANIFEST_BYTES_MAX",
        "MANIFEST_CODEC_SERIALIZER_ID",
        "Management",
        "ManagementOptions",
        "ManagementSettings",
        "ManifestCodecOptions",
        "ManifestCorruptError",
        "ManifestMissingError",
        "ManifestSerializer",
        "ManifestSerializerOptions",
        "ManifestType",
        "ManifestVersionError",
        "MemoryJournal",
        "MemoryJournalOptions",
        "MemoryLease",
        "MemoryLeaseStore",
        "MemoryRememberEntitiesStore",
        "MemorySnapshotStore",
        "MessageExtractor",
        "MessageHandler",
        "MessageValidationError",
        "Metric",
        "MetricOptions",
        "MetricType",
        "MetricsRegistry",
        "MissingPeerDependencyError",
        "NodeMetrics",
        "NodeRuntimeOptions",
        "NotAChildError",
        "OUTBOX_SNAPSHOT_AFTER_DEFAULT",
        "OtelMeterLike",
        "Outbox",
        "OutboxAccepted",
        "OutboxCommand",
        "OutboxConfirm",
        "OutboxEntry",
        "OutboxEvent",
        "OutboxGetStatus",
        "OutboxOptions",
        "OutboxRejected",
        "OutboxSend",
        "OutboxSendReply",
        "OutboxSettings",
        "OutboxSnapshot",
        "OutboxStatus",
        "OutboxUnconfirmedWarning",
        "PERSISTENCE_ID_SEPARATOR",
        "PROMETHEUS_CONTENT_TYPE",
        "PassivationReason",
        "PersistedEvent",
        "PersistenceStoreError",
        "PhaseDefinition",
        "PhaseOverride",
        "PhaseSettings",
        "PlannedPhase",
        "PoisonPill",
        "Props",
        "Random",
        "ReadinessCheck",
        "RebalanceClusterFacts",
        "RegionMember",
        "RegionProbe",
        "RegionSettings",
        "RegionView",
        "RememberEntitiesStore",
        "RememberEntitiesUpdate",
        "RemoteSendError",
        "RemotingSettings",
        "RemotingStats",
        "Runtime",
        "SIZE_BUCKETS",
        "SbrSettings",
        "Scheduler",
        "Schema",
        "SchemaIssue",
        "SerializationError",
        "ShardAllocationStrategy",
        "ShardHandOff",
        "ShardId",
        "ShardIdAlgorithm",
        "ShardLeaseProfiles",
        "ShardRegionState",
        "ShardSettings",
        "ShardedEntityOptions",
        "ShardingDDataOptions",
        "ShardingEnvelope",
        "ShardingLifecycleListener",
        "ShardingProxyOptions",
        "ShardingSettingsOptions",
        "ShardingStoreCorruptError",
        "ShardingStoreOptions",
        "ShardingTypeNotStartedError",
        "ShardingTypeOptions",
        "ShardkitError",
        "ShardkitErrorCode",
        "ShutdownAbortCause",
        "ShutdownAbortedError",
        "ShutdownPhase",
        "ShutdownPhaseStartedError",
        "ShutdownReason",
        "ShutdownSettings",
        "ShutdownSettingsOverrides",
        "ShutdownStatus",
        "ShutdownTask",
        "ShutdownTaskContext",
        "SideEffect",
        "Signal",
        "SignalHandler",
        "SingletonHost",
        "SingletonNameTakenError",
        "SnapshotCodec",
        "SnapshotPayload",
        "SnapshotStore",
        "SnapshotTooLargeError",
        "StartEntity",
        "StashBuffer",
        "StashOverflowError",
        "StateStoreMode",
        "StoredSnapshot",
        "SupervisorStrategy",
        "SystemEvent",
        "SystemTerminatedError",
        "ThresholdRebalanceSettings",
        "TimerScheduler",
        "TracingOptions",
        "TransportError",
        "UnhandledMessage",
        "UnknownManifestError",
        "UnknownSerializerError",
        "UnknownShutdownPhaseError",
        "Upcaster",
        "ValueSeries",
        "WriteFence",
        "actorSettings",
        "ask",
        "bridgeToOpenTelemetry",
        "consistentHashingStrategy",
        "createNodeRuntime",
        "defaultActorSettings",
        "defaultEventSourcedBackoff",
        "defaultOutboxSettings",
        "envelopeExtractor",
        "instrumentJournal",
        "isKnownShutdownReason",
        "isStartEntity",
        "leastShardStrategy",
        "managementOf",
        "manifestCodec",
        "manifestSerializer",
        "metricsOf",
        "msgpackCodec",
        "outboxSettings",
        "parsePersistenceId",
        "persistenceIdOf",
        "prometheusText",
        "thresholdStrategy",
        "traceJournal",
      ]
    `);
  });

  it("shardkit/internal", { timeout: 30_000 }, () => {
    expect(sorted("./internal")).toMatchInlineSnapshot(`
      [
        "AddTaskResult",
        "Cluster",
        "ClusterOptions",
        "ClusterShutdownTask",
        "CoordinatorRecoveryData",
        "CoordinatorStore",
        "DEFAULT_MANAGEMENT_SETTINGS",
        "HttpError",
        "HttpMethod",
        "JournalCoordinatorStore",
        "JournalRememberEntitiesSettings",
        "JournalRememberEntitiesStore",
        "MemberJson",
        "OutboxState",
        "PhaseOrderProblem",
        "PhaseOrderResult",
        "PhaseOutcome",
        "PlannedAttempt",
        "PlannerSettings",
        "RedeliveryPlanner",
        "RemoteActorRef",
        "Remoting",
        "RemotingOptions",
        "RouteHandler",
        "RouteOptions",
        "RouteRequest",
        "RouteResponse",
        "Router",
        "SHARDING_PERSISTENCE_ID_PREFIX",
        "SelfExitEvent",
        "SelfExitState",
        "SelfExitWatch",
        "ShutdownInput",
        "ShutdownMachine",
        "ShutdownOutput",
        "ShutdownTaskInfo",
        "TaskId",
        "TickPlan",
        "addActorSystemTerminateTask",
        "admitsSend",
        "applyOutboxEvent",
        "builtInPhases",
        "coordinatorPersistenceId",
        "emptyOutboxState",
        "installClusterShutdown",
        "isLoopbackHost",
        "lookupContactPoints",
        "membersJson",
        "orderPhases",
        "outboxSnapshotOf",
        "outboxStateOf",
        "redeliveryDelayMs",
        "rememberPersistenceId",
        "resolveDiscoverySettings",
        "resolveManagementSettings",
        "resolveShutdownSettings",
        "shutdownReasonOfSelfExit",
        "startManagement",
        "tokenMatches",
      ]
    `);
  });

  it("shardkit/testing", { timeout: 30_000 }, () => {
    expect(sorted("./testing")).toMatchInlineSnapshot(`
      [
        "ShardingOracle",
        "ShardingOracleError",
        "ShardingOracleOptions",
        "ShardingViolation",
        "SimFailure",
        "SimWorld",
        "SimWorldOptions",
        "simActorSystem",
        "simWorld",
        "withSeed",
      ]
    `);
  });

  it("shardkit/node", { timeout: 30_000 }, () => {
    expect(sorted("./node")).toMatchInlineSnapshot(`
      [
        "ConsoleLogger",
        "ConsoleLoggerOptions",
        "EVENT_LOOP_MONITOR_RESOLUTION_MS",
        "LOG_FORMAT_ENV",
        "LOG_LEVEL_ENV",
        "LogFormat",
        "LogRecord",
        "NODE_TIMER_DELAY_MAX_MS",
        "NodeClock",
        "NodeEventLoopMonitor",
        "NodeRandom",
        "NodeRuntime",
        "NodeRuntimeOptions",
        "NodeScheduler",
        "NodeSchedulerOptions",
        "PemInput",
        "PinoLike",
        "SHUTDOWN_SIGNALS",
        "SignalHandlerOptions",
        "SignalTarget",
        "TCP_TRANSPORT_DEFAULTS",
        "TRANSPORT_LOG_BURST_MAX",
        "TRANSPORT_LOG_INTERVAL_MS",
        "TcpTransport",
        "TcpTransportOptions",
        "TcpTransportTlsOptions",
        "createNodeRuntime",
        "formatRecord",
        "hmacSha256",
        "installSignalHandlers",
        "nodeCrypto",
        "pinoLogger",
        "resolveLogFormat",
        "resolveLogLevel",
        "shutdownReasonOfSignal",
        "yieldToHost",
      ]
    `);
  });

  it("shardkit/sim", { timeout: 30_000 }, () => {
    expect(sorted("./sim")).toMatchInlineSnapshot(`
      [
        "DEFAULT_LINK_CONFIG",
        "DirectionOptions",
        "EventQueue",
        "Fnv1a64",
        "LinkConfig",
        "NodeNames",
        "QueuedEvent",
        "ResetCause",
        "SeededRandom",
        "SimClock",
        "SimClockOptions",
        "SimEndpoint",
        "SimEventHost",
        "SimFailure",
        "SimListener",
        "SimLogSink",
        "SimLogger",
        "SimNetwork",
        "SimNetworkOptions",
        "SimNodeOptions",
        "SimRuntime",
        "SimScheduler",
        "SimStepsExceededError",
        "SimTransport",
        "SimWorld",
        "SimWorldOptions",
        "Trace",
        "TraceEntry",
        "WORLD_NODE",
        "WorldTime",
        "nodeSeed",
        "rootSeed",
        "toDetail",
        "withSeed",
      ]
    `);
  });

  it("shardkit/ddata", { timeout: 30_000 }, () => {
    expect(sorted("./ddata")).toMatchInlineSnapshot(`
      [
        "ALL",
        "CausalContext",
        "Consistency",
        "DDATA_SERIALIZER_ID",
        "DDataDecodeError",
        "DDataDurableStore",
        "DDataElement",
        "DDataKind",
        "DDataTypeMismatchError",
        "DEFAULT_REPLICATOR_SETTINGS",
        "DataDeletedError",
        "DurableEntry",
        "DurableStoreError",
        "Flag",
        "GCounter",
        "GSet",
        "GetFailureError",
        "InvalidDDataOperationError",
        "Key",
        "LOCAL",
        "LWWMap",
        "LWWRegister",
        "LWW_LOGICAL_CLOCK",
        "LwwClock",
        "MAJORITY",
        "MemoryDDataDurableStore",
        "ModifyFailureError",
        "ORMap",
        "ORMultiMap",
        "ORSet",
        "OperationOptions",
        "PNCounter",
        "PNCounterMap",
        "ReplicatedData",
        "Replicator",
        "ReplicatorHost",
        "ReplicatorOptions",
        "ReplicatorSettings",
        "ReplicatorStoppedError",
        "TooManyKeysError",
        "UpdateTimeoutError",
        "consistencyFrom",
        "createDDataSerializer",
        "ddataKey",
        "decodeReplicatedData",
        "encodeReplicatedData",
        "isReplicatedData",
        "lwwWallClock",
        "majority",
      ]
    `);
  });

  it("shardkit/sqlite", { timeout: 30_000 }, () => {
    expect(sorted("./sqlite")).toMatchInlineSnapshot(`
      [
        "SqliteDDataStore",
        "SqliteDDataStoreOptions",
        "SqliteJournal",
        "SqliteJournalOptions",
        "SqliteLeaseStore",
        "SqlitePersistence",
        "SqlitePersistenceOptions",
        "SqliteSettings",
        "SqliteSnapshotStore",
        "SqliteSnapshotStoreOptions",
        "SqliteTables",
        "defaultSqliteSettings",
        "migrateSqlite",
        "sqlitePersistence",
        "sqliteTables",
      ]
    `);
  });

  it("shardkit/postgres", { timeout: 30_000 }, () => {
    expect(sorted("./postgres")).toMatchInlineSnapshot(`
      [
        "PostgresJournal",
        "PostgresJournalOptions",
        "PostgresLease",
        "PostgresLeaseStore",
        "PostgresLeaseStoreOptions",
        "PostgresPersistence",
        "PostgresPersistenceOptions",
        "PostgresSettings",
        "PostgresSnapshotStore",
        "PostgresSnapshotStoreOptions",
        "PostgresTables",
        "defaultPostgresSettings",
        "migratePostgres",
        "postgresPersistence",
        "postgresTables",
      ]
    `);
  });
});
