// policy.lora and policy.dtype: their defaults and checks in the language, their place in the
// plan (so in its hash), and the embedded trainer's refusal of both at configure.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import type { ConfigureParams } from "../../src/contracts/trainer-protocol.js";
import { defaultOptions, TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { hashesOf, lower, validatePlan, workspace } from "./support.js";

const spec = (policy: string) => `import "std/algorithms" as algo
import "std/envs/findmax" as findmax
experiment e {
  policy { model: "hf:Qwen/Qwen3-0.6B"${policy} }
  resources { backend: torch }
  env code extends findmax.task {}
  reward { success: outcome.tests_passed }
  algorithm extends algo.rloo { optimizer { lr: 2e-4 } }
}
`;

function planOf(policy: string) {
  const plans = lower(path.join(workspace({ "spec.arl": spec(policy) }), "spec.arl"));
  expect(plans).toHaveLength(1);
  return plans[0]!.plan;
}

function errorsOf(policy: string): string[] {
  const result = new Compiler().check(path.join(workspace({ "spec.arl": spec(policy) }), "spec.arl"));
  return result.diagnostics.filter((d) => d.severity === "error").map((d) => `${d.code}: ${d.message}`);
}

describe("policy.lora and policy.dtype", () => {
  it("default to full fine-tuning of float32 weights, written out in the plan", () => {
    const plan = planOf("");
    expect(plan.policy.lora).toBeNull();
    expect(plan.policy.dtype).toBe("float32");
    expect(validatePlan(plan)).toEqual([]);
  });

  it("lower the adapters with their defaults (dropout 0, the attention projections)", () => {
    const plan = planOf(", dtype: bfloat16, lora { rank: 16, alpha: 32 }");
    expect(plan.policy.dtype).toBe("bfloat16");
    expect(plan.policy.lora).toEqual({
      rank: 16,
      alpha: 32,
      dropout: 0,
      targets: ["q_proj", "k_proj", "v_proj", "o_proj"],
    });
    expect(validatePlan(plan)).toEqual([]);
    const custom = planOf(', lora { rank: 8, alpha: 8, dropout: 0.05, targets: ["q_proj", "v_proj", "gate_proj"] }');
    expect(custom.policy.lora).toEqual({
      rank: 8,
      alpha: 8,
      dropout: 0.05,
      targets: ["q_proj", "v_proj", "gate_proj"],
    });
  });

  it("are part of the plan hash", () => {
    const hash = (policy: string) => hashesOf({ "spec.arl": spec(policy) });
    const full = hash("");
    expect(hash(", lora { rank: 16, alpha: 32 }")).not.toEqual(full);
    expect(hash(", lora { rank: 16, alpha: 32 }")).not.toEqual(hash(", lora { rank: 8, alpha: 32 }"));
    expect(hash(", dtype: bfloat16")).not.toEqual(full);
    expect(hash(", dtype: float32")).toEqual(full);
  });

  it("reject a bad rank, dropout, target list or dtype at the field", () => {
    expect(errorsOf(", lora { rank: 0, alpha: 16 }").join("\n")).toMatch(/rank/);
    expect(errorsOf(", lora { rank: 4.5, alpha: 16 }").join("\n")).toMatch(/rank/);
    expect(errorsOf(", lora { rank: 8, alpha: 16, dropout: 1 }").join("\n")).toMatch(/dropout/);
    expect(errorsOf(", lora { rank: 8, alpha: 16, targets: [] }").join("\n")).toMatch(/targets/);
    expect(errorsOf(", lora { rank: 8 }").join("\n")).toMatch(/alpha/);
    expect(errorsOf(", dtype: float64").join("\n")).toMatch(/float32, bfloat16, float16/);
  });
});

describe("the embedded trainer", () => {
  const configure = (policy: Partial<ConfigureParams["policy"]>): ConfigureParams => ({
    seed: 1,
    policy: {
      model: "builtin:tiny",
      chat_template: null,
      sampling: { temperature: 1, top_p: 1, top_k: 0, max_new_tokens: 8 },
      ...policy,
    },
    algorithm: {
      optimizer: {
        name: "adamw",
        lr: 1e-3,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weight_decay: 0,
        grad_clip: null,
        warmup_steps: 0,
      },
      critic: null,
      clip: { low: 0.2, high: 0.2, dual: null },
      kl: { coef: 0, estimator: "k3", placement: "loss", reference: null },
    },
    vocabulary: ["take", "key"],
  });

  it("refuses LoRA and a dtype other than float32 as unsupported, naming the field", async () => {
    const t = new TinyTrainer(defaultOptions());
    await t.init();
    const lora = { rank: 8, alpha: 16, dropout: 0, targets: ["q_proj"] };
    expect(() => t.configure(configure({ lora }))).toThrow(
      expect.objectContaining({ code: "unsupported", message: expect.stringContaining("policy.lora") }),
    );
    expect(() => t.configure(configure({ dtype: "bfloat16" }))).toThrow(
      expect.objectContaining({ code: "unsupported", message: expect.stringContaining("policy.dtype") }),
    );
    expect(t.configure(configure({ dtype: "float32", lora: null })).model.name).toBe("builtin:tiny");
  });
});
