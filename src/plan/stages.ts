// The plan's stages: what each stage of a training iteration runs on, from the resources, and
// the update's loss denominator from the reduction.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { defined } from "../contracts/checked.js";
import type { ExperimentModel, VariantModel } from "../semantics/analyze.js";
import type { ExperimentConfig } from "../semantics/schema/experiment.js";
import { planHash } from "./hash.js";
import type { Plan, PlanReduction, PlanStage } from "./schema.js";

const denominators: Record<PlanReduction["mode"], Plan["stages"]["update"]["denominator"]> = {
  token_mean: { scope: "global", divide_by: "target_tokens", inner: "none" },
  seq_mean_token_mean: { scope: "global", divide_by: "sequences", inner: "sequence_target_tokens" },
  seq_mean_token_sum: { scope: "global", divide_by: "sequences", inner: "none" },
  constant: { scope: "global", divide_by: "sequences_times_constant", inner: "none" },
  group_token_mean: { scope: "global", divide_by: "groups", inner: "group_target_tokens" },
};

export function lowerStages(
  config: ExperimentConfig,
  variant: VariantModel,
  experiment: ExperimentModel,
  diagnostics: Diagnostic[],
): Plan["stages"] | undefined {
  const r = config.resources;
  const stages = planStages(r, config.algorithm.advantage.estimator, config.algorithm.reduction);
  if (!stages) {
    const nodes = r.backend === "torch" ? r.nodes : 1;
    const origin = variant.valuesByPath.get(["resources", "gpus"])?.origin ?? {
      file: experiment.declaration.module.path,
      range: defined(experiment.declaration.block.name, "the experiment's name").range,
    };
    diagnostics.push({
      code: "uneven-gpus",
      severity: "error",
      message: `resources.gpus (${r.gpus}) does not split evenly across ${nodes} nodes`,
      file: origin.file,
      range: origin.range,
      hint: `use a multiple of ${nodes} GPUs, or change resources.nodes`,
    });
    return undefined;
  }
  return stages;
}

/** What each stage runs on, from the resources; undefined when the GPUs do not split evenly across the nodes. */
function planStages(
  r: Pick<Plan["resources"], "backend" | "gpus" | "nodes" | "launcher">,
  estimator: Plan["algorithm"]["advantage"]["estimator"],
  reduction: PlanReduction,
): Plan["stages"] | undefined {
  const torch = r.backend === "torch";
  const nodes = torch ? r.nodes : 1;
  const processes = torch ? Math.max(r.gpus, nodes) : 1;
  if (processes % nodes !== 0) return undefined;
  const launcher =
    torch && (r.launcher === "torchrun" || (r.launcher === "auto" && processes > 1)) ? "torchrun" : "none";
  const trainer: PlanStage = {
    runs_on: "trainer",
    backend: r.backend,
    processes,
    nodes,
    processes_per_node: processes / nodes,
    launcher,
  };
  const runtime: PlanStage = {
    runs_on: "runtime",
    backend: "local",
    processes: 1,
    nodes: 1,
    processes_per_node: 1,
    launcher: "none",
  };
  return {
    provision: trainer,
    rollout: trainer,
    reward: runtime,
    // GAE needs the critic's values, which only the trainer can compute.
    advantage: estimator === "gae" ? trainer : runtime,
    update: { ...trainer, reduction, denominator: denominators[reduction.mode] },
    eval: trainer,
    checkpoint: trainer,
  };
}

/**
 * The plan lowered again with another resources.backend (`arl run --backend`): the stages follow
 * the new backend, the change is recorded in the overrides, and the hash is taken again, so the
 * plan a run writes says what it ran. A string when the plan cannot run on that backend's layout.
 */
export function withBackend(plan: Plan, backend: Plan["resources"]["backend"]): Plan | string {
  if (plan.resources.backend === backend) return plan;
  const resources = { ...plan.resources, backend };
  const stages = planStages(resources, plan.algorithm.advantage.estimator, plan.algorithm.reduction);
  if (!stages) return `resources.gpus (${resources.gpus}) does not split evenly across ${resources.nodes} nodes`;
  const overrides = [
    ...plan.overrides.filter((o) => o.path !== "resources.backend"),
    { path: "resources.backend", value: backend },
  ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const { hash: _hash, provenance, ...meaning } = plan;
  const next = JSON.parse(JSON.stringify({ ...meaning, overrides, resources, stages })) as Omit<
    Plan,
    "hash" | "provenance"
  >;
  const { format_version, ...rest } = next;
  return { format_version, hash: planHash(next), ...rest, provenance };
}
