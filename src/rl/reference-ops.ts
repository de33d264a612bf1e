// The reference value of every conformance op (src/contracts/conformance-ops.ts): the op's input,
// parsed by its schema as written in the vector file, evaluated by the reference math here.
import type * as z from "zod";
import { opSchemas, type OpInput, type OpName } from "../contracts/conformance-ops.js";
import { groupAdvantages, taskNormalize } from "./advantages.js";
import { passAtK } from "./eval.js";
import { gae } from "./gae.js";
import { klPerToken } from "./kl.js";
import { partitionedLoss, policyLoss, type PolicyBatch, type PolicyLossOptions } from "./policy-loss.js";
import { mismatchStats, tisWeights } from "./mismatch.js";
import { mixedGroupProbability } from "./sampling.js";

type Reference = (input: unknown) => unknown;

function reference<S extends z.ZodType>(input: S, evaluate: (input: z.output<S>) => unknown): Reference {
  return (raw) => evaluate(input.parse(raw));
}

function toBatch(v: OpInput<"policy_loss">): PolicyBatch {
  return {
    logp: v.logp,
    logpOld: v.logp_old,
    mask: v.mask,
    advantages: v.advantages,
    ...(v.groups ? { groups: v.groups } : {}),
    ...(v.is_weights ? { isWeights: v.is_weights } : {}),
  };
}

export const referenceOps = {
  advantages: reference(opSchemas.advantages.input, (v) =>
    groupAdvantages(v.rewards, { baseline: v.baseline, normalize: v.normalize }),
  ),
  task_normalize: reference(opSchemas.task_normalize.input, (v) => taskNormalize(v.advantages, v.tasks)),
  gae: reference(
    opSchemas.gae.input,
    (v) =>
      gae({
        rewards: v.rewards,
        values: v.values,
        gamma: v.gamma,
        lambda: v.lambda,
        end: v.end,
        ...(v.bootstrap_value !== undefined ? { bootstrapValue: v.bootstrap_value } : {}),
      }).advantages,
  ),
  policy_loss: reference(opSchemas.policy_loss.input, (v) => {
    const options: PolicyLossOptions = { clip: v.clip, reduction: v.reduction };
    const batch = toBatch(v);
    const result = v.microbatches ? partitionedLoss(batch, v.microbatches, options).total : policyLoss(batch, options);
    return { loss: result.loss };
  }),
  kl: reference(opSchemas.kl.input, (v) => klPerToken(v.logp, v.logp_ref, v.estimator)),
  mismatch: reference(opSchemas.mismatch.input, (v) => {
    const s = mismatchStats({ logpOld: v.logp_old, logpEngine: v.logp_engine, mask: v.mask }, v.threshold);
    return { mean_abs: s.meanAbs, max_abs: s.maxAbs, frac_over: s.fracOver, tokens: s.tokens };
  }),
  tis_weights: reference(opSchemas.tis_weights.input, (v) =>
    tisWeights({ logpOld: v.logp_old, logpEngine: v.logp_engine, mask: v.mask }, { cap: v.cap, level: v.level }).map(
      (w) => Array.from(w),
    ),
  ),
  pass_at_k: reference(opSchemas.pass_at_k.input, (v) => passAtK(v.n, v.c, v.k)),
  mixed_group_probability: reference(opSchemas.mixed_group_probability.input, (v) =>
    mixedGroupProbability(v.p, v.group_size),
  ),
} as const satisfies Record<OpName, Reference>;
