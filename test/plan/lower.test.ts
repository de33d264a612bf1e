import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { canonicalize } from "../../src/plan/canonical.js";
import { sha256Hex } from "../../src/plan/hash.js";
import { lowerModel } from "../../src/plan/lower.js";
import type { Plan } from "../../src/plan/schema.js";
import { examplesDir, lower, validatePlan, workspace } from "./support.js";

const byName = (file: string) =>
  Object.fromEntries(lower(path.join(examplesDir, file)).map((p) => [`${p.experiment}/${p.variant}`, p.plan]));

describe("lowering the shared examples", () => {
  it("gives one plan per variant, with the stable variant names", () => {
    expect(Object.keys(byName("tw-max-steps.arl"))).toEqual([
      "tw_max_steps/max_turns=6",
      "tw_max_steps/max_turns=8",
      "tw_max_steps/max_turns=12",
      "tw_max_steps/max_turns=16",
    ]);
    expect(Object.keys(byName("agentrl-ablation.arl"))).toEqual([
      "agentrl_multitask/full",
      "agentrl_multitask/no_cross_policy",
      "agentrl_multitask/no_task_norm",
    ]);
    expect(Object.keys(byName("findmax.arl"))).toEqual([
      "findmax_grpo/default",
      "findmax_loo/default",
      "findmax_reductions/seq_mean",
      "findmax_reductions/token_mean",
      "findmax_reductions/dr_grpo",
    ]);
    for (const file of ["tw-max-steps.arl", "agentrl-ablation.arl", "findmax.arl", "shaping.arl"]) {
      for (const [name, plan] of Object.entries(byName(file))) expect(validatePlan(plan), name).toEqual([]);
    }
  });

  it("findmax: the variants differ exactly where the spec says", () => {
    const plans = byName("findmax.arl");
    const grpo = plans["findmax_grpo/default"]!;
    const loo = plans["findmax_loo/default"]!;
    expect(grpo.algorithm.advantage.baseline).toBe("mean");
    expect(loo.algorithm.advantage.baseline).toBe("leave_one_out");
    expect({ ...loo.algorithm, advantage: grpo.algorithm.advantage }).toEqual(grpo.algorithm);
    expect(loo.hash).not.toBe(grpo.hash);

    const dr = plans["findmax_reductions/dr_grpo"]!;
    expect(dr.overrides).toEqual([{ path: "algorithm.reduction", value: { mode: "constant", constant: 1024 } }]);
    expect(dr.algorithm.reduction).toEqual({ mode: "constant", constant: 1024 });
    expect(dr.stages.update.reduction).toEqual({ mode: "constant", constant: 1024 });
    expect(dr.stages.update.denominator).toEqual({
      scope: "global",
      divide_by: "sequences_times_constant",
      inner: "none",
    });
    expect(plans["findmax_reductions/seq_mean"]!.stages.update.denominator).toEqual({
      scope: "global",
      divide_by: "sequences",
      inner: "sequence_target_tokens",
    });
    expect(plans["findmax_reductions/token_mean"]!.stages.update.denominator).toEqual({
      scope: "global",
      divide_by: "target_tokens",
      inner: "none",
    });
    // token_mean is also the base experiment's reduction: the same meaning as findmax_grpo but another name.
    const {
      hash: _h1,
      experiment: _e1,
      variant: _v1,
      overrides: _o1,
      provenance: _p1,
      ...tokenMean
    } = plans["findmax_reductions/token_mean"]!;
    const { hash: _h2, experiment: _e2, variant: _v2, overrides: _o2, provenance: _p2, ...base } = grpo;
    expect(tokenMean).toEqual(base);
  });

  it("findmax: every default is explicit and the implicit ones are resolved", () => {
    const grpo = byName("findmax.arl")["findmax_grpo/default"]!;
    expect(grpo.algorithm.batch_size).toBe(16 * 4); // tasks_per_batch * group_size
    expect(grpo.eval).toEqual({
      split: "test",
      every: 10,
      before_training: true,
      base: false,
      samples_per_task: 4,
      k: [1, 4],
      tasks: null,
      temperature: 1,
      // Unnamed: the env's own success signal.
      success: { op: "signal", namespace: "env", name: "success", type: "bool", timing: "outcome" },
    });
    expect(grpo.algorithm.kl).toEqual({
      coef: 0.04,
      estimator: "k3",
      placement: "loss",
      reference: { kind: "initial" },
    });
    expect(grpo.tools.map((t) => t.name)).toEqual(["run_tests", "read_code", "write_code", "finish"]); // the harness's own order
    expect(grpo.tools[2]!.definition.function.parameters).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      required: ["code"],
      additionalProperties: false,
    });
    expect(grpo.reward.terms).toEqual({
      success: {
        kind: "plain",
        expr: {
          op: "*",
          args: [
            { op: "const", value: 1 },
            { op: "signal", namespace: "outcome", name: "tests_passed", type: "bool", timing: "outcome" },
          ],
        },
      },
    });
    expect(grpo.stages.rollout).toEqual({
      runs_on: "trainer",
      backend: "local",
      processes: 1,
      nodes: 1,
      processes_per_node: 1,
      launcher: "none",
    });
    expect(grpo.stages.reward.runs_on).toBe("runtime");
    expect(grpo.envs.code!.split).toEqual({ train: 0.8, valid: 0, test: 0.2 });
    expect(grpo.provenance.entry).toBe("findmax.arl");
    expect(grpo.provenance.sources.map((s) => s.path)).toEqual([
      "findmax.arl",
      "std/algorithms.arl",
      "std/envs/findmax.arl",
    ]);
    expect(grpo.provenance.sources[0]!.sha256).toBe(sha256Hex(readFileSync(path.join(examplesDir, "findmax.arl"))));
  });

  it("tw-max-steps: sweep values, PPO with a critic, torchrun over 8 GPUs", () => {
    const plans = byName("tw-max-steps.arl");
    expect(Object.values(plans).map((p) => p.harness.max_turns)).toEqual([6, 8, 12, 16]);
    const p = plans["tw_max_steps/max_turns=8"]!;
    expect(p.overrides).toEqual([{ path: "harness.max_turns", value: 8 }]);
    expect(p.algorithm.batch_size).toBe(256);
    expect(p.algorithm.critic?.optimizer.lr).toBe(5e-6);
    expect(p.stages.update).toMatchObject({
      runs_on: "trainer",
      backend: "torch",
      processes: 8,
      nodes: 1,
      processes_per_node: 8,
      launcher: "torchrun",
    });
    expect(p.stages.advantage.runs_on).toBe("trainer"); // GAE needs the critic's values
    expect(p.tools.map((t) => t.name)).toEqual(["go", "inventory", "look", "open", "put", "take"]); // quest.tools: by name
    expect(p.eval.temperature).toBe(0.7); // the policy's
  });

  it("agentrl: five envs, the ablation arms, and none as an override", () => {
    const plans = byName("agentrl-ablation.arl");
    const full = plans["agentrl_multitask/full"]!;
    expect(Object.keys(full.envs)).toEqual(["alfworld", "db", "kg", "os", "webshop"]);
    expect(full.rollout.cross_policy).toEqual({ pool: ["hf:THUDM/GLM-4-9B-0414"], probability: 0.5 });
    expect(full.overrides).toEqual([]);
    expect(plans["agentrl_multitask/no_cross_policy"]!.overrides).toEqual([
      { path: "rollout.cross_policy", value: null },
    ]);
    expect(plans["agentrl_multitask/no_cross_policy"]!.rollout.cross_policy).toBeNull();
    expect(plans["agentrl_multitask/no_task_norm"]!.algorithm.advantage.task_norm).toBe(false);
    expect(full.stages.update).toMatchObject({ backend: "torch", processes: 64, launcher: "torchrun" });
    expect(full.tools.map((t) => `${t.env}.${t.name}`)).toContain("webshop.search_action");
    expect(full.envs.os).toMatchObject({
      kind: "agentrl",
      mode: "controller",
      url: "http://localhost:5020/api",
      task: "os-std",
    });
    expect(full.reward.terms.abnormal!.expr).toEqual({
      op: "when",
      args: [
        { op: "const", value: -0.2 },
        { op: "signal", namespace: "episode", name: "aborted", type: "bool", timing: "outcome" },
      ],
    });
  });

  it("shaping: potential terms, constraints as IR, tool_cost folded to a constant", () => {
    const p = byName("shaping.arl")["sql_agent/default"]!;
    expect(p.reward.terms.progress!.kind).toBe("potential");
    expect(p.reward.terms.tool_cost!.expr.op).toBe("*");
    expect((p.reward.terms.tool_cost!.expr as { args: unknown[] }).args[0]).toEqual({ op: "const", value: -0.02 });
    expect(p.constraints).toEqual({
      no_writes: {
        action: "block",
        condition: {
          op: "==",
          args: [
            { op: "signal", namespace: "tool", name: "name", type: "string", timing: "state" },
            { op: "const", value: "execute" },
          ],
        },
      },
    });
    expect(p.envs.bank).toMatchObject({ kind: "sql", database: null, questions: null, read_only: true });
  });

  it("the hash is sha256 over the canonical JSON without hash and provenance", () => {
    for (const p of Object.values(byName("findmax.arl"))) {
      const { hash, provenance: _p, ...rest } = p;
      expect(hash).toBe(`sha256:${sha256Hex(canonicalize(rest))}`);
    }
  });
});

const sqlSpec = (database: string) => `import "std/envs/sql" as sql
experiment e {
  policy { model: "builtin:tiny" }
  env bank extends sql.bank_demo {
    database: "${database}"
    questions: "./data/questions.jsonl"
  }
}
`;

function lowerWithDiagnostics(file: string) {
  const result = new Compiler().check(file, { plan: false });
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return lowerModel(result.model!);
}

describe("data files", () => {
  it("are resolved relative to the spec that names them and recorded with their sha256", () => {
    const dir = workspace({
      "exp/spec.arl": `import "./envs/bank" as b
experiment e {
  policy { model: "builtin:tiny" }
  env bank extends b.bank {}
}
`,
      "exp/envs/bank.arl": `import "std/envs/sql" as sql
env bank extends sql.bank_demo { database: "../data/bank.sqlite", questions: "./q.jsonl" }
`,
      "exp/data/bank.sqlite": "SQLite format 3\0 pretend",
      "exp/envs/q.jsonl": '{"q": 1}\n',
    });
    const [p] = lower(path.join(dir, "exp/spec.arl"));
    const env = p!.plan.envs.bank as Extract<Plan["envs"][string], { kind: "sql" }>;
    expect(env.database).toEqual({ path: "data/bank.sqlite", sha256: sha256Hex("SQLite format 3\0 pretend") });
    expect(env.questions).toEqual({ path: "envs/q.jsonl", sha256: sha256Hex('{"q": 1}\n') });
    expect(validatePlan(p!.plan)).toEqual([]);
    expect(p!.plan.overrides).toEqual([]);
  });

  it("a missing one is data-file-not-found at the field, and no plan", () => {
    const dir = workspace({ "spec.arl": sqlSpec("./data/missing.sqlite"), "data/questions.jsonl": "{}\n" });
    const lowered = lowerWithDiagnostics(path.join(dir, "spec.arl"));
    expect(lowered.plans).toEqual([]);
    expect(lowered.diagnostics.map((d) => [d.code, d.severity, d.range.start.line, d.range.start.column])).toEqual([
      ["data-file-not-found", "error", 5, 15],
    ]);
    expect(lowered.diagnostics[0]!.message).toContain("'./data/missing.sqlite'");
    // arl check reports it too (the plan stage of the compiler), without a lock file.
    const checked = new Compiler().check(path.join(dir, "spec.arl"));
    expect(checked.diagnostics.map((d) => d.code)).toEqual(["data-file-not-found"]);
  });

  it("a directory is not a data file", () => {
    const dir = workspace({ "spec.arl": sqlSpec("./data"), "data/questions.jsonl": "{}\n" });
    expect(lowerWithDiagnostics(path.join(dir, "spec.arl")).diagnostics.map((d) => d.code)).toEqual([
      "data-file-not-found",
    ]);
  });
});

describe("resources, tools and silenced rules", () => {
  const spec = (resources: string, extra = "") => `import "std/envs/rooms" as rooms
experiment e {
  policy { model: "hf:x/y" }
  env world extends rooms.world {}
  resources { ${resources} }
  ${extra}
}
`;

  it("torch processes: one per GPU, at least one per node; torchrun only when needed or asked", () => {
    const stage = (resources: string) =>
      lower(path.join(workspace({ "spec.arl": spec(resources) }), "spec.arl"))[0]!.plan.stages.update;
    expect(stage("backend: torch, gpus: 1")).toMatchObject({ backend: "torch", processes: 1, launcher: "none" });
    expect(stage("backend: torch, gpus: 1, launcher: torchrun")).toMatchObject({ processes: 1, launcher: "torchrun" });
    expect(stage("backend: torch, gpus: 8")).toMatchObject({
      processes: 8,
      nodes: 1,
      processes_per_node: 8,
      launcher: "torchrun",
    });
    expect(stage("backend: torch, gpus: 4, launcher: none")).toMatchObject({ processes: 4, launcher: "none" });
    // The embedded trainer serves builtin:tiny only (local-backend-model otherwise).
    const local = lower(
      path.join(
        workspace({ "spec.arl": spec("backend: local, gpus: 4").replace('"hf:x/y"', '"builtin:tiny"') }),
        "spec.arl",
      ),
    )[0]!.plan.stages.update;
    expect(local).toMatchObject({ backend: "local", processes: 1, nodes: 1, launcher: "none" });
  });

  it("more than one node checks clean: the torchrun stage spans the nodes (arl run needs a rendezvous)", () => {
    const dir = workspace({ "spec.arl": spec("backend: torch, gpus: 16, nodes: 2") });
    const { plans, diagnostics } = lowerWithDiagnostics(path.join(dir, "spec.arl"));
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(plans[0]!.plan.stages.update).toMatchObject({
      backend: "torch",
      processes: 16,
      nodes: 2,
      processes_per_node: 8,
      launcher: "torchrun",
    });
    // A local plan runs on one process whatever resources.nodes says.
    expect(
      lower(
        path.join(
          workspace({ "spec.arl": spec("backend: local, nodes: 2").replace('"hf:x/y"', '"builtin:tiny"') }),
          "spec.arl",
        ),
      )[0]!.plan.stages.update.nodes,
    ).toBe(1);
  });

  it("GPUs that do not split evenly across nodes are an error", () => {
    const dir = workspace({ "spec.arl": spec("backend: torch, gpus: 6, nodes: 4") });
    expect(
      lowerWithDiagnostics(path.join(dir, "spec.arl")).diagnostics.map((d) => [d.code, d.range.start.line]),
    ).toEqual([["uneven-gpus", 5]]);
    // arl check reports lowering's diagnostics too, lock file or not.
    expect(
      new Compiler()
        .check(path.join(dir, "spec.arl"))
        .diagnostics.filter((d) => d.severity === "error")
        .map((d) => d.code),
    ).toEqual(["uneven-gpus"]);
  });

  it("a tool's own time limit wins when written; otherwise the harness's applies", () => {
    const dir = workspace({
      "spec.arl": `import "std/algorithms" as algo
experiment e {
  policy { model: "builtin:tiny" }
  algorithm extends algo.grpo { group_size: 4 }
  env w {
    kind: subprocess
    command: ["./env"]
    signals { success { scope: outcome, type: bool } }
    tool slow { description: "Slow.", timeout_s: 120 }
    tool quick { description: "Quick." }
  }
  tool note { description: "Write a note.", parameters { text { type: string } } }
  harness { tools: [w.tools, note], tool_timeout_s: 45 }
  allow { self-inclusive-baseline: "the original GRPO objective", length-biased-reduction: "as published" }
}
`,
    });
    const p = lower(path.join(dir, "spec.arl"))[0]!.plan;
    expect(p.tools.map((t) => [t.env, t.name, t.timeout_s])).toEqual([
      ["w", "quick", 45],
      ["w", "slow", 120],
      [null, "note", 45],
    ]);
    expect(p.silenced).toEqual([
      { rule: "length-biased-reduction", reason: "as published" },
      { rule: "self-inclusive-baseline", reason: "the original GRPO objective" },
    ]);
    expect(validatePlan(p)).toEqual([]);
  });
});
