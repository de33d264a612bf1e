// The plan -> veRL mapping (src/export/verl/config.ts): each setting's veRL key and value, and
// the refusals. veRL's own loader checks the exported files in runtime-gpu/tests/test_verl_export.py.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { verlConfig } from "../../src/export/verl/config.js";
import { refusals } from "../../src/export/verl/findings.js";
import { pythonExpr } from "../../src/export/verl/reward.js";
import { toYaml } from "../../src/export/verl/yaml.js";
import { lowerModel } from "../../src/plan/lower.js";
import type { Plan } from "../../src/plan/schema.js";

const paths = {
  trainFile: "data/train.parquet",
  valFile: "data/val.parquet",
  rewardModule: "reward.py",
  toolConfig: "tool_config.yaml",
};

function plansOf(spec: string): Plan[] {
  const result = new Compiler().check(path.resolve("experiments", spec), { plan: false });
  if (!result.model) throw new Error(`${spec} did not compile`);
  return lowerModel(result.model).plans.map((p) => p.plan);
}

const agentrl = plansOf("agentrl-table6-ablation.arl").find((p) => p.variant === "full") as Plan;
const ppo = plansOf("pg-table8-algorithms.arl").find((p) => p.variant === "ppo") as Plan;

type Tree = Record<string, unknown>;
const get = (tree: unknown, dotted: string): unknown =>
  dotted.split(".").reduce<unknown>((node, k) => (node as Tree)[k], tree);

describe("verlConfig", () => {
  it("maps GRPO with k3 KL in the loss, group size, batches and GPUs", () => {
    const { overrides, findings } = verlConfig(agentrl, paths, 2048);
    expect(get(overrides, "algorithm.adv_estimator")).toBe("grpo");
    expect(get(overrides, "algorithm.norm_adv_by_std_in_grpo")).toBe(true);
    expect(get(overrides, "actor_rollout_ref.actor.use_kl_loss")).toBe(true);
    expect(get(overrides, "actor_rollout_ref.actor.kl_loss_coef")).toBe(0.04);
    expect(get(overrides, "actor_rollout_ref.actor.kl_loss_type")).toBe("k3");
    expect(get(overrides, "algorithm.use_kl_in_reward")).toBe(false);
    expect(get(overrides, "actor_rollout_ref.actor.loss_agg_mode")).toBe("seq-mean-token-mean");
    expect(get(overrides, "actor_rollout_ref.rollout.n")).toBe(8);
    expect(get(overrides, "data.train_batch_size")).toBe(40);
    expect(get(overrides, "actor_rollout_ref.actor.ppo_mini_batch_size")).toBe(40);
    expect(get(overrides, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu")).toBe(5);
    expect(get(overrides, "trainer.n_gpus_per_node")).toBe(8);
    expect(get(overrides, "trainer.nnodes")).toBe(8);
    expect(get(overrides, "actor_rollout_ref.model.path")).toBe("Qwen/Qwen2.5-14B-Instruct");
    expect(get(overrides, "actor_rollout_ref.actor.clip_ratio_c")).toBe(1e9);
    expect(get(overrides, "actor_rollout_ref.rollout.multi_turn.max_assistant_turns")).toBe(20);
    const refused = refusals(findings).map((f) => f.setting);
    expect(refused).toEqual(
      expect.arrayContaining(["algorithm.advantage.task_norm", "rollout.async", "rollout.cross_policy"]),
    );
    const bessel = findings.find((f) => f.setting === "algorithm.advantage.normalize");
    expect(bessel?.handling).toBe("differs");
    expect(bessel?.consequence).toContain("0.9354");
    expect(findings.find((f) => f.setting === "algorithm.kl.estimator")?.verl).toContain("[-10, 10]");
  });

  it("maps PPO: gae with a critic, k1 KL in the reward, dual clip", () => {
    const { overrides, findings } = verlConfig(ppo, paths, 2048);
    expect(get(overrides, "algorithm.adv_estimator")).toBe("gae");
    expect(get(overrides, "algorithm.use_kl_in_reward")).toBe(true);
    expect(get(overrides, "algorithm.kl_penalty")).toBe("k1");
    expect(get(overrides, "algorithm.kl_ctrl.kl_coef")).toBe(0.001);
    expect(get(overrides, "actor_rollout_ref.actor.use_kl_loss")).toBe(false);
    expect(get(overrides, "actor_rollout_ref.actor.clip_ratio_c")).toBe(3);
    expect(get(overrides, "critic.cliprange_value")).toBe(0.5);
    expect(get(overrides, "critic.optim.lr")).toBe(5e-6);
    expect(get(overrides, "actor_rollout_ref.rollout.top_k")).toBe(-1);
    expect(refusals(findings).map((f) => f.setting)).toContain("harness.format");
  });

  it("maps constant(C) to seq-mean-token-sum-norm with loss_scale_factor C, and refuses group_token_mean", () => {
    const constant = verlConfig(
      { ...agentrl, algorithm: { ...agentrl.algorithm, reduction: { mode: "constant", constant: 4096 } } },
      paths,
      2048,
    );
    expect(get(constant.overrides, "actor_rollout_ref.actor.loss_agg_mode")).toBe("seq-mean-token-sum-norm");
    expect(get(constant.overrides, "actor_rollout_ref.actor.loss_scale_factor")).toBe(4096);
    const group = verlConfig(
      { ...agentrl, algorithm: { ...agentrl.algorithm, reduction: { mode: "group_token_mean" } } },
      paths,
      2048,
    );
    expect(refusals(group.findings).map((f) => f.setting)).toContain("algorithm.reduction");
  });

  it("maps leave-one-out to rloo, tis to rollout_correction, and refuses the builtin model", () => {
    const rloo = verlConfig(
      {
        ...agentrl,
        algorithm: {
          ...agentrl.algorithm,
          advantage: { ...agentrl.algorithm.advantage, baseline: "leave_one_out", normalize: "none" },
        },
        mask: { ...agentrl.mask, tis: { cap: 2, level: "token" } },
      },
      paths,
      2048,
    );
    expect(get(rloo.overrides, "algorithm.adv_estimator")).toBe("rloo");
    expect(get(rloo.overrides, "algorithm.rollout_correction")).toEqual({
      rollout_is: "token",
      rollout_is_threshold: 2,
    });
    const tiny = verlConfig({ ...agentrl, policy: { ...agentrl.policy, model: "builtin:tiny" } }, paths, 2048);
    expect(refusals(tiny.findings).map((f) => f.setting)).toContain("policy.model");
  });
});

describe("reward and YAML", () => {
  it("writes reward expressions as Python and exponent numbers as YAML 1.1 floats", () => {
    expect(
      pythonExpr({
        op: "when",
        args: [
          { op: "const", value: -0.2 },
          { op: "signal", namespace: "episode", name: "aborted", type: "bool", timing: "outcome" },
        ],
      }),
    ).toBe('(_num(-0.2) if _truth(_signal(s, "episode", None, "aborted")) else 0)');
    expect(toYaml({ a: { lr: 5e-7, s: "x 5e-7" } })).toBe('a:\n  lr: 5.0e-7\n  s: "x 5e-7"\n');
  });
});
