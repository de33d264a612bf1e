// Building records from entries and variants from overrides: the meaning of setting each path
// in turn, without sharing (or changing) anything the builder was given.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { WrittenValues } from "../../src/semantics/plain.js";
import { expandVariants } from "../../src/semantics/variants.js";
import {
  emptyRecord,
  getPath,
  RecordBuilder,
  type Origin,
  type RecordValue,
  type Value,
} from "../../src/semantics/values.js";

const at = (offset: number): Origin => ({
  file: "x.arl",
  range: { start: { offset, line: 1, column: offset + 1 }, end: { offset: offset + 1, line: 1, column: offset + 2 } },
});
const num = (value: number, offset = 0): Value => ({ kind: "scalar", value, origin: at(offset) });
const assign = (dotted: string, value: Value, offset = 0, doc?: string) => {
  const p = dotted.split(".");
  return { path: p, value, keyOrigins: p.map((_, i) => at(offset + i)), ...(doc !== undefined ? { doc } : {}) };
};
const plain = (v: Value | undefined): unknown =>
  v?.kind === "record"
    ? Object.fromEntries([...v.fields].map(([k, f]) => [k, plain(f)]))
    : v?.kind === "scalar"
      ? v.value
      : v?.kind;

describe("RecordBuilder", () => {
  it("nests dotted paths, merges blocks key by key, and keeps where each key and doc was written", () => {
    const inner = new RecordBuilder(emptyRecord(at(50)))
      .set(assign("b", num(1)))
      .set(assign("c", num(2)))
      .build();
    const r = new RecordBuilder(emptyRecord(at(0)))
      .set(assign("a", inner, 10, "the a block"))
      .set(assign("a.d", num(3), 20))
      .set(assign("a.b", num(4), 30))
      .set(assign("x.y.z", num(5), 40))
      .build();
    expect(plain(r)).toEqual({ a: { b: 4, c: 2, d: 3 }, x: { y: { z: 5 } } });
    expect(r.keyOrigins.get("a")).toEqual(at(10)); // a dotted path later does not move the block's key
    expect((getPath(r, ["a"]) as RecordValue).keyOrigins.get("b")).toEqual(at(31));
    expect(r.docs.get("a")).toBe("the a block");
    // What it was given is never changed: the block value still has only its own fields.
    expect(plain(inner)).toEqual({ b: 1, c: 2 });
  });

  it("never changes its base, and a record it returned is not changed by later assignments", () => {
    const base = new RecordBuilder(emptyRecord(at(0))).set(assign("a.b", num(1))).build();
    const builder = new RecordBuilder(base).set(assign("a.c", num(2)));
    const first = builder.build();
    const second = builder.set(assign("a.d", num(3))).build();
    expect(plain(base)).toEqual({ a: { b: 1 } });
    expect(plain(first)).toEqual({ a: { b: 1, c: 2 } });
    expect(plain(second)).toEqual({ a: { b: 1, c: 2, d: 3 } });
  });
});

describe("expandVariants", () => {
  it("applies each variant's overrides to its own copy of the experiment", () => {
    const sweep = new RecordBuilder(emptyRecord(at(0)))
      .set(assign("rollout.iterations", { kind: "list", items: [num(1), num(2), num(3)], origin: at(1) }))
      .build();
    const experiment = new RecordBuilder(emptyRecord(at(0)))
      .set(assign("rollout.iterations", num(10)))
      .set(assign("rollout.concurrency", num(4)))
      .set(assign("sweep", sweep))
      .build();
    const variants = expandVariants(experiment, []);
    expect(variants.map((v) => plain(v.value))).toEqual(
      [1, 2, 3].map((iterations) => ({ rollout: { iterations, concurrency: 4 } })),
    );
    expect(plain(getPath(experiment, ["rollout"]))).toEqual({ iterations: 10, concurrency: 4 });
  });
});

describe("large blocks", () => {
  it("reports every error of a reward block of 150,000 terms, without overflowing the stack", () => {
    const n = 150_000;
    const terms = Array.from({ length: n }, (_, i) => `    t_${i}: "not a number"\n`).join("");
    const dir = mkdtempSync(path.join(tmpdir(), "arl-values-"));
    const file = path.join(dir, "main.arl");
    writeFileSync(
      file,
      `import "std/envs/findmax" as findmax\nexperiment e {\n  policy { model: "builtin:tiny" }\n  env code extends findmax.task {}\n  reward {\n${terms}  }\n}\n`,
    );
    const errors = new Compiler().check(file, { plan: false }).diagnostics.filter((d) => d.severity === "error");
    expect(errors).toHaveLength(n);
    expect(errors[n - 1]).toMatchObject({ code: "invalid-value", range: { start: { line: 5 + n } } });
  }, 120_000);
});

describe("WrittenValues", () => {
  // The paths are those of the plain form zod reports issues at: a call's arguments sit right
  // under the call (by index, named ones by name), not under `args`/`named`.
  const str = (value: string, offset = 0): Value => ({ kind: "scalar", value, origin: at(offset) });
  const item = num(7, 3);
  const positional = str("p", 5);
  const named = str("n", 6);
  const call: Value = { kind: "call", callee: "f", args: [positional], named: new Map([["k", named]]), origin: at(4) };
  const root = new RecordBuilder(emptyRecord(at(0)))
    .set(assign("a.list", { kind: "list", items: [num(6, 2), item], origin: at(1) }))
    .set(assign("a.call", call))
    .build();
  const written = new WrittenValues(root);

  it("finds the record itself, its fields, list items by index and call arguments by index or name", () => {
    expect(written.get([])).toBe(root);
    expect(written.get(["a", "list", 1])).toBe(item);
    expect(written.get(["a", "call"])).toBe(call);
    expect(written.get(["a", "call", 0])).toBe(positional);
    expect(written.get(["a", "call", "k"])).toBe(named);
    expect(written.has(["a", "list"])).toBe(true);
  });

  it("finds nothing where the path does not lead: a missing field, an index as a string, a name into a list, past a scalar, a symbol", () => {
    expect(written.has(["a", "missing"])).toBe(false);
    expect(written.get(["a", "list", "1"])).toBeUndefined();
    expect(written.get(["a", "list", 2])).toBeUndefined();
    expect(written.get(["a", "list", -1])).toBeUndefined();
    expect(written.get(["a", "list", 0, "x"])).toBeUndefined();
    expect(written.get(["a", "call", "args", 0])).toBeUndefined();
    expect(written.get(["a", 0])).toBeUndefined();
    expect(written.get(["a", Symbol("a")])).toBeUndefined();
  });
});
