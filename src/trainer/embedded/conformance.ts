// eval_op: the conformance ops (test/conformance) computed by this trainer. policy_loss and kl go
// through the trainer's own loss code (losses.ts: the per-sequence weights over the whole step's
// denominators, summed per microbatch) in float64; the advantage, GAE, evaluation and mismatch
// ops are the TypeScript reference functions, which the embedded trainer uses as they are.
import { isOpName, opNames, opSchemas } from "../../contracts/conformance-ops.js";
import { klEstimators } from "../../rl/kl.js";
import { reductionDenominators } from "../../rl/policy-loss.js";
import { referenceOps } from "../../rl/reference-ops.js";
import { invalid, invalidOnInputError, unsupported } from "./errors.js";
import { LossInputError, microbatchLossF64, sequenceWeights, toReduction } from "./losses.js";
import { at } from "../../contracts/checked.js";

interface PolicyLossInput {
  logp: number[][];
  logp_old: number[][];
  mask: (0 | 1)[][];
  advantages: number[] | number[][];
  clip: { low: number; high: number; dual: number | null };
  reduction: { mode: string; constant?: number };
  groups?: string[];
  microbatches?: number[][];
  is_weights?: number[][];
}

function policyLoss(v: PolicyLossInput): { loss: number } {
  const N = v.logp.length;
  const d = reductionDenominators({ mask: v.mask, ...(v.groups ? { groups: v.groups } : {}) });
  const weights = sequenceWeights(toReduction(v.reduction), {
    tokens: d.tokens,
    sequences: d.sequences,
    groups: d.groups,
    groupTokens: d.groupTokens,
    sequenceTokens: d.sequenceTokens,
    groupOf: d.groupOf,
  });
  const parts = v.microbatches ?? [Array.from({ length: N }, (_, i) => i)];
  let loss = 0;
  for (const part of parts)
    loss += microbatchLossF64(
      {
        logp: v.logp,
        logpOld: v.logp_old,
        mask: v.mask,
        advantages: v.advantages,
        ...(v.is_weights ? { isWeights: v.is_weights } : {}),
      },
      part,
      weights,
      v.clip,
    ).loss;
  return { loss: loss + 0 };
}

export function evalOp(op: string, input: unknown): unknown {
  if (typeof op !== "string" || !isOpName(op))
    throw unsupported(`conformance op '${String(op)}' is not implemented (known: ${opNames.join(", ")})`);
  const parsed = opSchemas[op].input.safeParse(input);
  if (!parsed.success)
    throw invalid(
      `eval_op ${op}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; ")}`,
    );
  const data = parsed.data;
  return invalidOnInputError(
    () => {
      switch (op) {
        case "policy_loss":
          return policyLoss(data as PolicyLossInput);
        case "kl": {
          const v = data as { logp: number[]; logp_ref: number[]; estimator: "k1" | "k2" | "k3" };
          const k = klEstimators.get(v.estimator);
          return v.logp.map((lp, i) => k(at(v.logp_ref, i) - lp));
        }
        default:
          return referenceOps[op](input);
      }
    },
    LossInputError,
    `eval_op ${op}: `,
  );
}
