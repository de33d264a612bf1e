import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  compareWithTolerance,
  opNames,
  parseVectorFile,
  referenceBackend,
  runVectors,
  type ConformanceBackend,
  type OpName,
} from "../../src/conformance/index.js";

const dir = path.dirname(new URL(import.meta.url).pathname);
const vectorFiles = readdirSync(dir)
  .filter((n) => n.endsWith(".json"))
  .sort();

function parse(cases: unknown): ReturnType<typeof parseVectorFile> {
  return parseVectorFile("v.json", JSON.stringify({ cases }));
}

describe("the conformance suite", () => {
  it("every file parses and every case passes against the in-process reference", async () => {
    expect(vectorFiles.length).toBeGreaterThanOrEqual(6);
    for (const name of vectorFiles) {
      const parsed = parseVectorFile(name, readFileSync(path.join(dir, name), "utf8"));
      if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
      const results = await runVectors([parsed.vectors]);
      expect(
        results.filter((r) => !r.passed).map((r) => r.case.name),
        name,
      ).toEqual([]);
    }
  });

  it("covers every op", () => {
    const seen = new Set<string>();
    for (const name of vectorFiles)
      for (const c of JSON.parse(readFileSync(path.join(dir, name), "utf8")).cases) seen.add(c.op);
    expect([...seen].sort()).toEqual([...opNames].sort());
  });

  it("runs microbatch partitions for every reduction", () => {
    const cases = JSON.parse(readFileSync(path.join(dir, "policy-loss.json"), "utf8")).cases as {
      op: string;
      input: { reduction: { mode: string }; microbatches?: number[][] };
    }[];
    const modes = new Set(cases.filter((c) => c.input.microbatches).map((c) => c.input.reduction.mode));
    expect([...modes].sort()).toEqual([
      "constant",
      "group_token_mean",
      "seq_mean_token_mean",
      "seq_mean_token_sum",
      "token_mean",
    ]);
  });
});

describe("vector file parsing", () => {
  it("locates problems by case index, name and field path", () => {
    const r = parse([
      { name: "ok", op: "pass_at_k", input: { n: 10, c: 2, k: 3 }, expected: 0.5 },
      {
        name: "bad rewards",
        op: "advantages",
        input: { rewards: [[1, "x"]], baseline: "mean", normalize: "std" },
        expected: [[0, 0]],
      },
      { name: "bad k", op: "pass_at_k", input: { n: 3, c: 1, k: 4 }, expected: 1 },
      { name: "no op", op: "median", input: {}, expected: 0 },
      { name: "ok", op: "kl", input: { logp: [0], logp_ref: [0], estimator: "k9" }, expected: [0] },
    ]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      "v.json: case 1 'bad rewards' (advantages): input.rewards[0][1]: Invalid input: expected number, received string",
      "v.json: case 2 'bad k' (pass_at_k): input.k: k (4) exceeds n (3); the estimator needs n >= k",
      "v.json: case 3 'no op': op: unknown op 'median' (known: advantages, task_normalize, gae, policy_loss, kl, mismatch, tis_weights, pass_at_k, mixed_group_probability)",
      "v.json: case 4 'ok': duplicate name (also case 0)",
      expect.stringMatching(/^v\.json: case 4 'ok' \(kl\): input\.estimator: Invalid option/),
    ]);
  });

  it("checks policy_loss shapes, partitions and the fields a reduction needs", () => {
    const base = {
      logp: [[0, 0], [0]],
      logp_old: [[0, 0], [0]],
      mask: [[1, 1], [1]],
      advantages: [1, 2],
      clip: { low: 0.2, high: 0.2, dual: null },
      reduction: { mode: "token_mean" },
    };
    const problems = (input: unknown) => {
      const r = parse([{ name: "c", op: "policy_loss", input, expected: { loss: 0 } }]);
      return r.ok ? [] : r.problems;
    };
    expect(problems(base)).toEqual([]);
    expect(
      problems({
        ...base,
        mask: [
          [1, 1],
          [1, 0],
        ],
      }),
    ).toEqual(["v.json: case 0 'c' (policy_loss): input.mask[1]: has 2 tokens, logp[1] has 1"]);
    expect(problems({ ...base, mask: [[1, 2], [1]] })[0]).toMatch(/input\.mask\[0\]\[1\]: expected 0 or 1/);
    expect(problems({ ...base, reduction: { mode: "group_token_mean" } })).toEqual([
      "v.json: case 0 'c' (policy_loss): input.groups: group_token_mean needs the group of every sequence",
    ]);
    expect(problems({ ...base, reduction: { mode: "constant" } })[0]).toMatch(
      /input\.reduction\.constant: Invalid input/,
    );
    expect(problems({ ...base, microbatches: [[0]] })).toEqual([
      "v.json: case 0 'c' (policy_loss): input.microbatches: not a partition of the sequences: sequence 1 appears 0 times",
    ]);
    expect(problems({ ...base, clip: { low: 0.2, high: 0.2 } })[0]).toMatch(/input\.clip\.dual/);
    expect(problems({ ...base, extra: 1 })[0]).toMatch(/Unrecognized key: "extra"/);
  });

  it("checks the expected value's shape per op", () => {
    const r = parse([
      {
        name: "e",
        op: "policy_loss",
        input: {
          logp: [[0]],
          logp_old: [[0]],
          mask: [[1]],
          advantages: [1],
          clip: { low: 0.2, high: 0.2, dual: null },
          reduction: { mode: "token_mean" },
        },
        expected: -1,
      },
    ]);
    expect(r.ok ? [] : r.problems).toEqual([
      "v.json: case 0 'e' (policy_loss): expected: Invalid input: expected object, received number",
    ]);
  });

  it("reports invalid JSON with a line and column, and a wrong envelope", () => {
    const r = parseVectorFile("x.json", '{"cases": [\n  {"name": "a",}\n]}');
    expect(r.ok ? [] : r.problems).toEqual([expect.stringMatching(/^x\.json:2:16: invalid JSON: /)]);
    const e = parseVectorFile("x.json", '{"case": []}');
    expect(e.ok ? [] : e.problems).toEqual([
      "x.json: cases: Invalid input: expected array, received undefined",
      'x.json: Unrecognized key: "case"',
    ]);
    const n = parse([{ name: "a", op: "kl", input: {}, expected: 0, tol: -1 }]);
    expect(n.ok ? [] : n.problems).toEqual(["v.json: case 0 'a': tol: tol is an absolute tolerance: >= 0"]);
    const m = parse([{ op: "kl" }, 3, { name: "p", op: "pass_at_k", input: { n: 1, c: 2, k: 1 }, expected: 1 }]);
    expect(m.ok ? [] : m.problems).toEqual([
      "v.json: case 0: input: missing",
      "v.json: case 0: expected: missing",
      "v.json: case 0: name: Invalid input: expected string, received undefined",
      "v.json: case 1: Invalid input: expected object, received number",
      "v.json: case 2 'p' (pass_at_k): input.c: c (2) exceeds n (1)",
    ]);
  });

  it("defaults tol to 1e-6", () => {
    const r = parse([{ name: "a", op: "pass_at_k", input: { n: 1, c: 1, k: 1 }, expected: 1 }]);
    expect(r.ok && r.vectors.cases[0]!.tol).toBe(1e-6);
  });
});

describe("comparison with an absolute tolerance", () => {
  it("compares numbers, arrays and objects recursively and reports the largest error", () => {
    expect(compareWithTolerance([[1, 2], [3]], [[1, 2 + 5e-7], [3 - 2e-7]], 1e-6)).toEqual({
      ok: true,
      maxAbsError: expect.closeTo(5e-7, 12),
    });
    expect(compareWithTolerance({ loss: 1 }, { loss: 1.01 }, 1e-6)).toEqual({
      ok: false,
      maxAbsError: expect.closeTo(0.01, 12),
    });
    expect(compareWithTolerance([1, 2], [1], 1e-6)).toEqual({
      ok: false,
      maxAbsError: Infinity,
      mismatch: "expected 2 entries, got 1",
    });
    expect(compareWithTolerance({ loss: 1 }, { loss: 1, extra: 2 }, 1e-6).mismatch).toBe(
      "expected keys {loss}, got {extra, loss}",
    );
    expect(compareWithTolerance([[1]], [["1"]], 1e-6).mismatch).toBe("[0][0]: expected a number, got string");
    expect(compareWithTolerance(1, NaN, 1e-6)).toEqual({ ok: false, maxAbsError: Infinity });
  });
});

describe("backends", () => {
  it("a trainer backend evaluates the ops it supports; the reference evaluates the rest", async () => {
    const calls: string[] = [];
    const fake: ConformanceBackend = {
      name: "fake-trainer",
      supports: (op: OpName) => op === "kl",
      evaluate: async (op, input) => {
        calls.push(op);
        return referenceBackend.evaluate(op, input);
      },
      close: async () => {},
    };
    const parsed = parse([
      { name: "kl", op: "kl", input: { logp: [-1], logp_ref: [-1], estimator: "k3" }, expected: [0] },
      { name: "pass", op: "pass_at_k", input: { n: 2, c: 1, k: 1 }, expected: 0.5 },
    ]);
    if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
    const results = await runVectors([parsed.vectors], fake);
    expect(results.map((r) => [r.case.name, r.backend, r.passed])).toEqual([
      ["kl", "fake-trainer", true],
      ["pass", "reference", true],
    ]);
    expect(calls).toEqual(["kl"]);
  });

  it("an op that throws is a failing case with the error, not a crash", async () => {
    const broken: ConformanceBackend = {
      name: "broken",
      supports: () => true,
      evaluate: async () => {
        throw new Error("trainer died");
      },
      close: async () => {},
    };
    const parsed = parse([{ name: "x", op: "pass_at_k", input: { n: 2, c: 1, k: 1 }, expected: 0.5 }]);
    if (!parsed.ok) throw new Error("unreachable");
    const [r] = await runVectors([parsed.vectors], broken);
    expect(r).toMatchObject({ passed: false, backend: "broken", error: "trainer died" });
  });
});
