/**
 * Laws of every Distributed Data CRDT, checked with fast-check over random histories of
 * three replicas that update and exchange states: merge is commutative, associative and
 * idempotent; deltas merged in any order, with duplicates, give the merge of the full
 * states; pruning a removed node never brings back data, whatever stale copy is merged.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeReplicatedData,
  encodeReplicatedData,
  Flag,
  GCounter,
  GSet,
  LWWMap,
  LWWRegister,
  ORMap,
  ORMultiMap,
  ORSet,
  PNCounter,
  PNCounterMap,
  type ReplicatedData,
} from "../../../src/core/ddata/index.js";

type Op<T> = (node: string, x: T) => T;
interface Spec<T extends ReplicatedData> {
  readonly name: string;
  readonly empty: T;
  readonly op: fc.Arbitrary<Op<T>>;
  readonly value: (x: T) => unknown;
  readonly deltas: boolean;
}

const elem = fc.constantFrom("a", "b", "c", "d");
const sorted = (s: Iterable<string | number | boolean>) => [...s].map(String).sort();

const specs: Spec<ReplicatedData>[] = [
  {
    name: "GCounter",
    empty: GCounter.empty,
    op: fc.integer({ min: 0, max: 5 }).map(
      (k): Op<GCounter> =>
        (n, x) =>
          x.increment(n, k),
    ),
    value: (x: GCounter) => x.value,
    deltas: true,
  },
  {
    name: "PNCounter",
    empty: PNCounter.empty,
    op: fc.integer({ min: -5, max: 5 }).map(
      (k): Op<PNCounter> =>
        (n, x) =>
          x.increment(n, k),
    ),
    value: (x: PNCounter) => x.value,
    deltas: true,
  },
  {
    name: "GSet",
    empty: GSet.empty<string>(),
    op: elem.map(
      (e): Op<GSet<string>> =>
        (_n, x) =>
          x.add(e),
    ),
    value: (x: GSet<string>) => sorted(x.elements),
    deltas: true,
  },
  {
    name: "ORSet",
    empty: ORSet.empty<string>(),
    op: fc.oneof(
      {
        weight: 5,
        arbitrary: elem.map(
          (e): Op<ORSet<string>> =>
            (n, x) =>
              x.add(n, e),
        ),
      },
      {
        weight: 4,
        arbitrary: elem.map(
          (e): Op<ORSet<string>> =>
            (n, x) =>
              x.remove(n, e),
        ),
      },
      { weight: 1, arbitrary: fc.constant((n: string, x: ORSet<string>) => x.clear(n)) },
    ),
    value: (x: ORSet<string>) => sorted(x.elements),
    deltas: true,
  },
  {
    name: "LWWRegister",
    empty: LWWRegister.create("init", 0),
    op: fc.integer({ min: 0, max: 9 }).map(
      (v): Op<LWWRegister<number>> =>
        (n, x) =>
          x.set(n, v),
    ),
    value: (x: LWWRegister<number>) => x.value,
    deltas: false,
  },
  {
    name: "Flag",
    empty: Flag.off,
    op: fc.constant((_n: string, x: Flag) => x.switchOn()),
    value: (x: Flag) => x.enabled,
    deltas: false,
  },
  {
    name: "ORMap<GSet>",
    empty: ORMap.empty<string, GSet<string>>(),
    op: fc.oneof(
      fc.tuple(elem, elem).map(
        ([k, e]): Op<ORMap<string, GSet<string>>> =>
          (n, x) =>
            x.update(n, k, GSet.empty<string>(), (s) => s.add(e)),
      ),
      elem.map(
        (k): Op<ORMap<string, GSet<string>>> =>
          (n, x) =>
            x.remove(n, k),
      ),
    ),
    value: (x: ORMap<string, GSet<string>>) =>
      x
        .entries()
        .map(([k, s]) => [k, sorted(s.elements)])
        .sort(),
    deltas: true,
  },
  {
    name: "LWWMap",
    empty: LWWMap.empty<string, number>(),
    op: fc.oneof(
      fc.tuple(elem, fc.integer({ min: 0, max: 9 })).map(
        ([k, v]): Op<LWWMap<string, number>> =>
          (n, x) =>
            x.put(n, k, v),
      ),
      elem.map(
        (k): Op<LWWMap<string, number>> =>
          (n, x) =>
            x.remove(n, k),
      ),
    ),
    value: (x: LWWMap<string, number>) => x.entries().sort(),
    deltas: true,
  },
  {
    name: "PNCounterMap",
    empty: PNCounterMap.empty<string>(),
    op: fc.oneof(
      fc.tuple(elem, fc.integer({ min: -3, max: 3 })).map(
        ([k, v]): Op<PNCounterMap<string>> =>
          (n, x) =>
            x.increment(n, k, v),
      ),
      elem.map(
        (k): Op<PNCounterMap<string>> =>
          (n, x) =>
            x.remove(n, k),
      ),
    ),
    value: (x: PNCounterMap<string>) => x.entries().sort(),
    deltas: true,
  },
  {
    name: "ORMultiMap",
    empty: ORMultiMap.empty<string, string>(),
    op: fc.oneof(
      fc.tuple(elem, elem).map(
        ([k, v]): Op<ORMultiMap<string, string>> =>
          (n, x) =>
            x.addBinding(n, k, v),
      ),
      fc.tuple(elem, elem).map(
        ([k, v]): Op<ORMultiMap<string, string>> =>
          (n, x) =>
            x.removeBinding(n, k, v),
      ),
      elem.map(
        (k): Op<ORMultiMap<string, string>> =>
          (n, x) =>
            x.remove(n, k),
      ),
    ),
    value: (x: ORMultiMap<string, string>) =>
      x
        .entries()
        .map(([k, s]) => [k, sorted(s)])
        .sort(),
    deltas: true,
  },
] as unknown as Spec<ReplicatedData>[];

const NODES = ["n1", "n2", "n3"];

type Step<T> = { kind: "op"; at: number; op: Op<T> } | { kind: "sync"; from: number; to: number };

interface Run<T> {
  readonly finals: T[];
  /** Every state any replica went through. */
  readonly history: T[];
  readonly deltas: T[];
}

function steps(spec: Spec<ReplicatedData>): fc.Arbitrary<Step<ReplicatedData>[]> {
  type T = ReplicatedData;
  const op = spec.op.chain((o) =>
    fc.integer({ min: 0, max: 2 }).map((at): Step<T> => ({ kind: "op", at, op: o })),
  );
  const sync = fc
    .tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 }))
    .map(([from, to]): Step<T> => ({ kind: "sync", from, to }));
  return fc.array(fc.oneof({ weight: 3, arbitrary: op }, { weight: 1, arbitrary: sync }), {
    maxLength: 30,
  });
}

function run(
  spec: Spec<ReplicatedData>,
  ss: Step<ReplicatedData>[],
  nodes = NODES,
): Run<ReplicatedData> {
  const reps = nodes.map(() => spec.empty);
  const history: ReplicatedData[] = [spec.empty];
  const deltas: ReplicatedData[] = [];
  for (const s of ss) {
    if (s.kind === "op") {
      const next = s.op(nodes[s.at] as string, reps[s.at] as ReplicatedData);
      const d = next.delta;
      if (d !== undefined) {
        deltas.push(d);
        // An update is the old state merged with its delta.
        expect(data(reps[s.at]?.merge(d) as ReplicatedData)).toEqual(data(next));
      }
      reps[s.at] = next.resetDelta();
    } else {
      reps[s.to] = (reps[s.to] as ReplicatedData).merge(reps[s.from] as ReplicatedData);
    }
    history.push(...reps);
  }
  return { finals: reps, history, deltas };
}

const data = (x: ReplicatedData) => encodeReplicatedData(x);
const joinAll = (xs: ReplicatedData[], from: ReplicatedData) =>
  xs.reduce((a, b) => a.merge(b), from);

describe.each(specs)("$name", (spec) => {
  const runs = steps(spec);
  const cfg = { numRuns: 150 };

  it("merge is commutative, associative and idempotent (fast-check)", () => {
    fc.assert(
      fc.property(runs, (ss) => {
        const [a, b, c] = run(spec, ss).finals as [ReplicatedData, ReplicatedData, ReplicatedData];
        expect(data(a.merge(b))).toEqual(data(b.merge(a)));
        expect(data(a.merge(b).merge(c))).toEqual(data(a.merge(b.merge(c))));
        expect(data(a.merge(a))).toEqual(data(a));
        expect(data(a.merge(b).merge(b))).toEqual(data(a.merge(b)));
      }),
      cfg,
    );
  });

  it("deltas merged in any order, duplicated, equal the merge of the full states (fast-check)", () => {
    if (!spec.deltas) {
      expect(spec.empty.supportsDeltas).toBe(false);
      return;
    }
    fc.assert(
      fc.property(runs, fc.infiniteStream(fc.nat()), (ss, rnd) => {
        const r = run(spec, ss);
        const full = joinAll(r.finals, spec.empty);
        const shuffled = [...r.deltas, ...r.deltas.slice(0, r.deltas.length >> 1)];
        const it = rnd[Symbol.iterator]();
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = (it.next().value as number) % (i + 1);
          [shuffled[i], shuffled[j]] = [
            shuffled[j] as ReplicatedData,
            shuffled[i] as ReplicatedData,
          ];
        }
        const fromDeltas = joinAll(shuffled, spec.empty);
        expect(data(fromDeltas)).toEqual(data(full));
        expect(spec.value(fromDeltas)).toEqual(spec.value(full));
      }),
      cfg,
    );
  });

  it("pruning a removed node never resurrects its data, whatever stale copy is merged (fast-check)", () => {
    fc.assert(
      fc.property(runs, runs, (ss, more) => {
        const r = run(spec, ss);
        const all = joinAll(r.finals, spec.empty);
        // n3 is removed; n1 collects its data.
        const pruned = all.prune("n3", "n1");
        expect(spec.value(pruned)).toEqual(spec.value(all));
        expect(pruned.modifiedByNodes().has("n3")).toBe(false);
        for (const stale of r.history) {
          const merged = pruned.merge(stale).pruningCleanup("n3");
          expect(spec.value(merged)).toEqual(spec.value(pruned));
          expect(merged.modifiedByNodes().has("n3")).toBe(false);
        }
        // The survivors go on updating; merging the stale copies again changes nothing.
        const later = run(
          { ...spec, empty: pruned },
          more.map((s) =>
            s.kind === "op"
              ? { ...s, at: s.at % 2 }
              : { kind: "sync", from: s.from % 2, to: s.to % 2 },
          ),
          ["n1", "n2"],
        );
        const after = joinAll(later.finals, pruned);
        let withStale = after;
        for (const stale of r.history) withStale = withStale.merge(stale).pruningCleanup("n3");
        expect(spec.value(withStale)).toEqual(spec.value(after));
      }),
      { numRuns: 60 },
    );
  });

  it("survives encode/decode unchanged (fast-check)", () => {
    fc.assert(
      fc.property(runs, (ss) => {
        for (const x of run(spec, ss).finals) {
          const back = decodeReplicatedData(
            JSON.parse(JSON.stringify(encodeReplicatedData(x))) as unknown,
          );
          expect(data(back)).toEqual(data(x));
          expect(spec.value(back)).toEqual(spec.value(x));
        }
      }),
      { numRuns: 50 },
    );
  });
});
