// The registry: every lint rule, in the order they run and are documented. One rule a file.
import type { LintRule } from "../rule.js";
import { blockAfterTheFact } from "./block-after-the-fact.js";
import { clipHighBelowLow } from "./clip-high-below-low.js";
import { criticMissing } from "./critic-missing.js";
import { dynamicSamplingUnbounded } from "./dynamic-sampling-unbounded.js";
import { engineSamplingMaskUnset } from "./engine-sampling-mask-unset.js";
import { engineWithoutMismatchCorrection } from "./engine-without-mismatch-correction.js";
import { envBehaviourUnchecked } from "./env-behaviour-unchecked.js";
import { envErrorAsFailure } from "./env-error-as-failure.js";
import { evalSplitOverlap } from "./eval-split-overlap.js";
import { filteredBatchLengthBias } from "./filtered-batch-length-bias.js";
import { greedyPassAtK } from "./greedy-pass-at-k.js";
import { groupSizeOne } from "./group-size-one.js";
import { historyUnsetForRewritingTemplate } from "./history-unset-for-rewriting-template.js";
import { identicalGroupSamples } from "./identical-group-samples.js";
import { klDoublePlacement } from "./kl-double-placement.js";
import { klWithoutReference } from "./kl-without-reference.js";
import { largePolicyLag } from "./large-policy-lag.js";
import { lengthBiasedReduction } from "./length-biased-reduction.js";
import { loraLearningRate } from "./lora-learning-rate.js";
import { mixedVersionGroups } from "./mixed-version-groups.js";
import { multitaskRewardScale } from "./multitask-reward-scale.js";
import { multitaskWithoutTaskNorm } from "./multitask-without-task-norm.js";
import { nonPotentialShaping } from "./non-potential-shaping.js";
import { potentialKeptAtTruncation } from "./potential-kept-at-truncation.js";
import { observationInLoss } from "./observation-in-loss.js";
import { passAtKExceedsSamples } from "./pass-at-k-exceeds-samples.js";
import { penaltyAsConstraint } from "./penalty-as-constraint.js";
import { policyLagBelowUpdateSteps } from "./policy-lag-below-update-steps.js";
import { reductionConstantOffBudget } from "./reduction-constant-off-budget.js";
import { selfInclusiveBaseline } from "./self-inclusive-baseline.js";
import { stalenessBeyondPolicyLag } from "./staleness-beyond-policy-lag.js";
import { topPWithoutKeepMask } from "./top-p-without-keep-mask.js";
import { truncationAsTerminal } from "./truncation-as-terminal.js";
import { turnBudgetBelow2xOptimal } from "./turn-budget-below-2x-optimal.js";
import { unboundedPolicyLag } from "./unbounded-policy-lag.js";
import { warmupBeyondRun } from "./warmup-beyond-run.js";

export const lintRules: readonly LintRule[] = [
  // What the loss trains on and how advantages are formed.
  observationInLoss,
  groupSizeOne,
  identicalGroupSamples,
  selfInclusiveBaseline,
  criticMissing,
  truncationAsTerminal,
  multitaskWithoutTaskNorm,
  historyUnsetForRewritingTemplate,
  // Rewards.
  nonPotentialShaping,
  potentialKeptAtTruncation,
  penaltyAsConstraint,
  blockAfterTheFact,
  envErrorAsFailure,
  multitaskRewardScale,
  // The policy loss, KL and off-policy data.
  clipHighBelowLow,
  lengthBiasedReduction,
  reductionConstantOffBudget,
  klWithoutReference,
  klDoublePlacement,
  topPWithoutKeepMask,
  engineSamplingMaskUnset,
  engineWithoutMismatchCorrection,
  unboundedPolicyLag,
  largePolicyLag,
  policyLagBelowUpdateSteps,
  stalenessBeyondPolicyLag,
  mixedVersionGroups,
  dynamicSamplingUnbounded,
  filteredBatchLengthBias,
  warmupBeyondRun,
  loraLearningRate,
  // Budgets and evaluation.
  turnBudgetBelow2xOptimal,
  evalSplitOverlap,
  passAtKExceedsSamples,
  greedyPassAtK,
  // Envs.
  envBehaviourUnchecked,
];
