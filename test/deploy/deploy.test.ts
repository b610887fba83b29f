/**
 * deploy/: every YAML document of the Kubernetes manifests parses, the probes use the
 * management routes and port of the code's defaults, the termination grace period covers
 * the coordinated shutdown, the headless Service publishes not-ready pods (bootstrap needs
 * them) and has the SRV port name discovery uses; the Dockerfile is multi-stage, runs as
 * a non-root user and starts an entry point that exists and parses.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { resolveShutdownSettings } from "../../src/core/shutdown/shutdown-settings.js";
import { MANAGEMENT_PORT_DEFAULT } from "../../src/management/index.js";

const ROOT = resolve(import.meta.dirname, "../..");
const K8S = join(ROOT, "deploy/kubernetes");

type Doc = Record<string, unknown> & { kind: string; metadata: { name: string } };

function documents(): Doc[] {
  const out: Doc[] = [];
  for (const f of readdirSync(K8S).filter((x) => /\.ya?ml$/.test(x))) {
    for (const d of parseAllDocuments(readFileSync(join(K8S, f), "utf8"))) {
      expect(d.errors, `${f}: ${d.errors.map((e) => e.message).join("; ")}`).toEqual([]);
      const js = d.toJS() as Doc | null;
      if (js !== null) out.push(js);
    }
  }
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: walking untyped YAML
type Any = any;

describe("deploy/", () => {
  const docs = documents();
  const byKind = (k: string) => docs.filter((d) => d.kind === k);

  it("has a StatefulSet, a headless Service, a PodDisruptionBudget and a Secret", () => {
    expect(byKind("StatefulSet")).toHaveLength(1);
    expect(byKind("Service")).toHaveLength(1);
    expect(byKind("PodDisruptionBudget")).toHaveLength(1);
    expect(byKind("Secret")).toHaveLength(1);
    for (const d of docs) {
      expect(typeof d.apiVersion).toBe("string");
      expect(d.metadata.name).toBe("shardkit");
    }
  });

  it("probes the management routes on the management port of the code's defaults", () => {
    const sts = byKind("StatefulSet")[0] as Any;
    const container = sts.spec.template.spec.containers[0];
    const ports = Object.fromEntries(
      container.ports.map((p: Any) => [p.name, p.containerPort]),
    ) as Record<string, number>;
    expect(ports.management).toBe(MANAGEMENT_PORT_DEFAULT);
    expect(container.readinessProbe.httpGet).toEqual({ path: "/health/ready", port: "management" });
    expect(container.livenessProbe.httpGet).toEqual({ path: "/health/alive", port: "management" });
    expect(sts.spec.selector.matchLabels).toEqual(sts.spec.template.metadata.labels);
  });

  it("gives a pod longer to stop than the coordinated shutdown may take", () => {
    const sts = byKind("StatefulSet")[0] as Any;
    const totalMs = resolveShutdownSettings().phases.reduce(
      (n, p) => n + (p.enabled === false ? 0 : p.timeoutMs),
      0,
    );
    expect(sts.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(totalMs);
  });

  it("discovers members through the headless Service", () => {
    const svc = byKind("Service")[0] as Any;
    const sts = byKind("StatefulSet")[0] as Any;
    expect(svc.spec.clusterIP).toBe("None");
    expect(svc.spec.publishNotReadyAddresses).toBe(true);
    expect(sts.spec.serviceName).toBe(svc.metadata.name);
    expect(svc.spec.selector).toEqual(sts.spec.template.metadata.labels);
    const mgmt = svc.spec.ports.find((p: Any) => p.name === "management");
    expect(mgmt.port).toBe(MANAGEMENT_PORT_DEFAULT);
    const env = Object.fromEntries(
      sts.spec.template.spec.containers[0].env.map((e: Any) => [e.name, e.value]),
    );
    expect(env.SHARDKIT_DISCOVERY_PORT_NAME).toBe("management");
    expect(String(env.SHARDKIT_DISCOVERY_SERVICE)).toMatch(/^shardkit\./);
    const pdb = byKind("PodDisruptionBudget")[0] as Any;
    expect(pdb.spec.selector.matchLabels).toEqual(sts.spec.template.metadata.labels);
    expect(pdb.spec.maxUnavailable).toBe(1);
  });

  it("Dockerfile: multi-stage, non-root, starts an entry point that exists and parses", () => {
    const text = readFileSync(join(ROOT, "deploy/Dockerfile"), "utf8");
    expect(text.match(/^FROM /gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^USER node$/m);
    const cmd = /^CMD \["node", "([^"]+)"\]$/m.exec(text);
    expect(cmd?.[1]).toBe("deploy/member.mjs");
    execFileSync(process.execPath, ["--check", join(ROOT, cmd?.[1] as string)]);
    const member = readFileSync(join(ROOT, "deploy/member.mjs"), "utf8");
    expect(member).toContain("SHARDKIT_MANAGEMENT_PORT ?? 8558");
  });
});
