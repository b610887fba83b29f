/**
 * The run order of shutdown phases: a topological sort of the `dependsOn` graph.
 *
 * Among the many valid orders this one runs every phase as early as its dependencies
 * allow: phases are ranked by their depth (the longest `dependsOn` chain below them) and
 * ties keep definition order. So a user phase that depends on `service-stop` runs right
 * after it (beside `before-cluster-shutdown`), not after `actor-system-terminate` as a
 * plain depth-first sort over definition order would place it; and the same definitions
 * always give the same order.
 *
 * Problems (a dependency on an unknown phase, a cycle, a duplicate name) are values, so
 * settings validation can turn them into a ConfigError naming the key.
 */
import type { PhaseDefinition } from "./shutdown-phases.js";

/** Why phases cannot be ordered. */
export type PhaseOrderProblem =
  | { readonly type: "duplicate-phase"; readonly phase: string }
  | { readonly type: "unknown-dependency"; readonly phase: string; readonly dependency: string }
  /** `cycle` starts and ends with `phase`, e.g. ["a", "b", "a"]; `phase` is the first
   * phase of the cycle in definition order reached by the search (for built-in phases
   * made to depend on an application phase: the overridden built-in one). */
  | { readonly type: "cycle"; readonly phase: string; readonly cycle: readonly string[] };

/** The ordered phases, or why there is no order. */
export type PhaseOrderResult<P extends PhaseDefinition> =
  | { readonly ok: true; readonly order: readonly P[] }
  | { readonly ok: false; readonly problem: PhaseOrderProblem };

/** Orders `phases` (see the module comment). */
export function orderPhases<P extends PhaseDefinition>(phases: readonly P[]): PhaseOrderResult<P> {
  const byName = new Map<string, P>();
  for (const p of phases) {
    if (byName.has(p.name))
      return { ok: false, problem: { type: "duplicate-phase", phase: p.name } };
    byName.set(p.name, p);
  }
  for (const p of phases)
    for (const d of p.dependsOn)
      if (!byName.has(d))
        return { ok: false, problem: { type: "unknown-dependency", phase: p.name, dependency: d } };
  const depths = depthsOf(phases, byName);
  if (!depths.ok) return depths;
  const index = new Map(phases.map((p, i) => [p.name, i]));
  const order = [...phases].sort(
    (a, b) =>
      (depths.depth.get(a.name) as number) - (depths.depth.get(b.name) as number) ||
      (index.get(a.name) as number) - (index.get(b.name) as number),
  );
  return { ok: true, order };
}

type DepthResult =
  | { readonly ok: true; readonly depth: ReadonlyMap<string, number> }
  | { readonly ok: false; readonly problem: PhaseOrderProblem };

/** Longest dependency chain below each phase, by iterative depth-first search. */
function depthsOf(
  phases: readonly PhaseDefinition[],
  byName: ReadonlyMap<string, PhaseDefinition>,
): DepthResult {
  const depth = new Map<string, number>();
  const onStack = new Set<string>();
  for (const root of phases) {
    if (depth.has(root.name)) continue;
    // Each frame: a phase and the index of the next dependency to visit.
    const stack: { name: string; next: number }[] = [{ name: root.name, next: 0 }];
    onStack.add(root.name);
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { name: string; next: number };
      const deps = (byName.get(top.name) as PhaseDefinition).dependsOn;
      if (top.next < deps.length) {
        const d = deps[top.next++] as string;
        if (depth.has(d)) continue;
        if (onStack.has(d)) {
          const from = stack.findIndex((f) => f.name === d);
          const cycle = [...stack.slice(from).map((f) => f.name), d];
          return { ok: false, problem: { type: "cycle", phase: d, cycle } };
        }
        onStack.add(d);
        stack.push({ name: d, next: 0 });
        continue;
      }
      let max = -1;
      for (const d of deps) max = Math.max(max, depth.get(d) as number);
      depth.set(top.name, max + 1);
      onStack.delete(top.name);
      stack.pop();
    }
  }
  return { ok: true, depth };
}
