// The plan's stages (src/plan/schema.ts): what each stage of a training iteration runs on
// (runtime or trainer, local or torch, processes and launcher), derived from the resources, and
// the update's loss denominator. Apart from the blocks the spec writes, since the compiler
// derives all of it (src/plan/stages.ts).
import * as z from "zod";
import { bounded, d, positiveInt } from "./schema-parts.js";
import { reductionSchema } from "./algorithm-schema.js";

const stageFields = {
  runs_on: d(
    z.enum(["runtime", "trainer"]),
    "runtime: the orchestrator process itself; trainer: the trainer process(es).",
  ),
  backend: d(z.enum(["local", "torch"]), "What executes the stage."),
  // Derived from resources, so bounded like them.
  processes: d(
    bounded("resources.gpus", positiveInt),
    "Processes in all (torch: one per GPU, at least one per node; local: 1).",
  ),
  nodes: bounded("resources.nodes", positiveInt),
  processes_per_node: bounded("resources.gpus", positiveInt),
  launcher: d(z.enum(["none", "torchrun"]), "torchrun when more than one process is needed (or asked for)."),
};

const stageSchema = z.strictObject(stageFields).meta({ id: "Stage" });

const denominatorSchema = z.strictObject({
  scope: d(
    z.literal("global"),
    "Sums are taken over the whole optimizer step (every microbatch, every rank) before dividing; never a mean of per-microbatch means.",
  ),
  divide_by: d(
    z.enum(["target_tokens", "sequences", "sequences_times_constant", "groups"]),
    "The global count the summed loss is divided by: sum_i L_i, N, N*L, or the number of groups.",
  ),
  inner: d(
    z.enum(["none", "sequence_target_tokens", "group_target_tokens"]),
    "Normalisation applied before the outer division: each sequence's sum by its own L_i (seq_mean_token_mean), each group's by its token count (group_token_mean), or none.",
  ),
});

export const stagesSchema = z.strictObject({
  provision: d(stageSchema, "Start the envs and the trainer; load the policy (and reference, critic)."),
  rollout: d(stageSchema, "Generate episodes with the harness."),
  reward: d(stageSchema, "Evaluate the reward terms and constraints."),
  advantage: d(stageSchema, "Advantages (with critic values for GAE, which the trainer computes)."),
  update: d(
    z.strictObject({ ...stageFields, reduction: reductionSchema, denominator: denominatorSchema }),
    "Policy (and critic) optimizer steps.",
  ),
  eval: d(stageSchema, "Periodic evaluation on the eval split."),
  checkpoint: d(stageSchema, "Save and restore trainer state."),
});
