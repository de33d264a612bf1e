// Lowering rollout: the cold start's record file (rollout.sft.data) is located and hashed like an
// env's data file (a file above rollout.sft.max_data_bytes is an error at the field), and the held-out fraction resolved (0.1 of the records when the spec names a
// file and says nothing, 0 without one), so the runtime decides nothing. A cold start with
// neither walkthroughs (demos) nor records (data) is an error at its block. The preflight's
// log-prob tolerance is resolved from the policy's dtype.
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { VariantModel } from "../semantics/analyze.js";
import type { ExperimentConfig } from "../semantics/schema/experiment.js";
import type { LoweringContext } from "./lower-context.js";
import { boundOf } from "./bounds.js";
import { dataFile, type DataFileLimit } from "./lower-data-files.js";
import type { Plan } from "./schema.js";

/** The held-out fraction of a record file when the spec gives none. */
const DEFAULT_HELDOUT = 0.1;

/**
 * The preflight's log-prob tolerance when the spec gives none, by the weights' dtype: float32
 * recomputation differs from sampling by rounding (~1e-6); half-precision weights and bf16
 * compute move single log-probs by a few hundredths, while the faults the check is for (a token
 * shift, another template or context) move them by nats.
 */
const DEFAULT_LOGPROB_TOLERANCE = { float32: 1e-3, bfloat16: 0.05, float16: 0.05 } as const;

/** resources with the sync probe's tolerance resolved from the policy's dtype, as the preflight's is. */
export function lowerResources(config: ExperimentConfig): Plan["resources"] {
  const { sync_probe, ...rollout } = config.resources.rollout;
  return {
    ...config.resources,
    rollout: {
      ...rollout,
      sync_probe: {
        tokens: sync_probe.tokens,
        tolerance: sync_probe.tolerance ?? DEFAULT_LOGPROB_TOLERANCE[config.policy.dtype],
      },
    },
  };
}

function lowerPreflight(config: ExperimentConfig): Plan["rollout"]["preflight"] {
  const { logprob_tolerance, ...checks } = config.rollout.preflight;
  return { ...checks, logprob_tolerance: logprob_tolerance ?? DEFAULT_LOGPROB_TOLERANCE[config.policy.dtype] };
}

export function lowerRollout(
  config: ExperimentConfig,
  variant: VariantModel,
  context: LoweringContext,
  diagnostics: Diagnostic[],
): Plan["rollout"] {
  const { sft, ...unlowered } = config.rollout;
  const rollout = { ...unlowered, preflight: lowerPreflight(config) };
  if (!sft) return { ...rollout, sft: null };
  const { data, heldout, ...rest } = sft;
  if (rest.demos === null && data === null) diagnostics.push(nothingToTrainOn(variant));
  return {
    ...rollout,
    sft: {
      ...rest,
      data:
        data === null
          ? null
          : dataFile(data, ["rollout", "sft", "data"], variant, context, diagnostics, dataLimit(rest.max_data_bytes)),
      heldout: heldout ?? (data === null ? 0 : DEFAULT_HELDOUT),
    },
  };
}

/** rollout.sft.data's size bound, declared by rollout.sft.max_data_bytes: the file is read whole into records before the cold start. */
function dataLimit(maxBytes: number): DataFileLimit {
  return { maxBytes, field: "rollout.sft.max_data_bytes", ceiling: boundOf("rollout.sft.max_data_bytes").max };
}

/** A cold start that names neither walkthroughs nor records, reported at its block. */
function nothingToTrainOn(variant: VariantModel): Diagnostic {
  const origin = variant.valuesByPath.get(["rollout", "sft"])?.origin ?? variant.value.origin;
  return {
    code: "invalid-value",
    severity: "error",
    message: "'rollout.sft': the cold start needs something to train on, and this block names neither demos nor data",
    file: origin.file,
    range: origin.range,
    hint: 'give demos (env walkthroughs, e.g. demos: 100), data (a record file, e.g. data: "./data/records.jsonl"), or both; or remove rollout.sft',
  };
}
