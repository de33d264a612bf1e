// Preflight check logprobs_reproduce (docs/semantics.md §11): with the weights that sampled the
// first batch, the trainer's recomputed log-probs of the generated targets must equal the ones
// reported while sampling, so the first update's ratios start at 1. A mismatch means the update
// would train on another distribution than the one that acted; the learning rate is not the
// first suspect. The measure is max |log ratio| = max |recomputed - sampled| over the targets;
// with an inference engine sampling (docs/semantics.md §12) it is the mean: the engine's kernels
// move some rare tokens' log-probs by more than rounding (the mismatch the metrics report and
// mask.tis corrects), while the faults this check is for (a shift, a template, a context) move
// the whole batch's by nats.
import { at } from "../../contracts/checked.js";
import { Role } from "../../episode/buffer.js";
import { firstFew, short, type PreflightCheckResult, type PreflightSequence } from "./batch.js";

/** The usual causes of log-probs that do not reproduce (seed 003 §7), in the failure's hint. */
const LOGPROB_CAUSES =
  "the usual causes: a token shift (the log-prob of token k must come from the logits at k-1), the chat template (the update renders another text than the one sampled from), a changed context (history rewritten between turns), padding (pad tokens attended to, or positions counted through them), dropout left on in the trainer, or sampling truncation (top-p/top-k) applied in generation but not when recomputing (mask.keep_sampling_mask)";

interface Worst {
  readonly delta: number;
  readonly sequence: number;
  readonly token: number;
  readonly sampled: number;
  readonly recomputed: number;
}

/** The generated targets of a sequence: the tokens whose sampled log-probs exist. */
function generatedTargets(s: PreflightSequence): number[] {
  const out: number[] = [];
  for (let k = 1; k < s.ids.length; k++) if (s.lossMask[k] === 1 && s.roles[k] === Role.generated) out.push(k);
  return out;
}

/** Which statistic of |log ratio| over the targets must be within the tolerance. */
export type ReproduceMeasure = "max" | "mean";

/** max (or mean) |recomputed[k + offset] - sampled[k]| over the targets (a shifted comparison where offset != 0). */
function deltaShifted(
  sequences: readonly PreflightSequence[],
  recomputed: readonly Float32Array[],
  targets: readonly number[][],
  offset: number,
  measure: ReproduceMeasure,
): number {
  let max = 0;
  let sum = 0;
  let n = 0;
  sequences.forEach((s, i) => {
    const re = at(recomputed, i);
    for (const k of at(targets, i)) {
      const j = k + offset;
      if (j < 1 || j >= re.length) continue;
      const d = Math.abs(at(re, j) - at(s.sampled, k));
      max = Math.max(max, d);
      sum += d;
      n++;
    }
  });
  return measure === "max" ? max : n > 0 ? sum / n : 0;
}

/**
 * Compares the sampled log-probs of every generated target with `recomputed` (the trainer's,
 * same layout as each sequence's ids) against `tolerance` nats. `note`, when given, says what
 * the comparison means for the update (e.g. that it recomputes its old log-probs itself).
 */
export function checkLogprobsReproduce(
  sequences: readonly PreflightSequence[],
  recomputed: readonly Float32Array[],
  tolerance: number,
  note?: string,
  measure: ReproduceMeasure = "max",
): PreflightCheckResult {
  if (recomputed.length !== sequences.length)
    throw new RangeError(`logprobs_reproduce: ${recomputed.length} recomputed rows for ${sequences.length} sequences`);
  const targets = sequences.map(generatedTargets);
  let worst: Worst | undefined;
  let over = 0;
  let total = 0;
  let sum = 0;
  sequences.forEach((s, i) => {
    const re = at(recomputed, i);
    if (re.length !== s.ids.length)
      throw new RangeError(
        `logprobs_reproduce: recomputed row ${i} has ${re.length} entries for ${s.ids.length} tokens`,
      );
    for (const k of at(targets, i)) {
      const sampled = at(s.sampled, k);
      const again = at(re, k);
      // A non-finite recomputed log-prob is the worst mismatch there is.
      const delta = Number.isFinite(again) ? Math.abs(again - sampled) : Infinity;
      total++;
      sum += Number.isFinite(delta) ? delta : 0;
      if (delta > tolerance) over++;
      if (!worst || delta > worst.delta) worst = { delta, sequence: i, token: k, sampled, recomputed: again };
    }
  });
  const max = worst?.delta ?? 0;
  const meanAbs = total > 0 ? sum / total : 0;
  const numbers = {
    targets: total,
    max_abs_log_ratio: Number.isFinite(max) ? max : null,
    mean_abs_log_ratio: meanAbs,
    above_tolerance: over,
    tolerance,
    ...(measure === "mean" ? { measure } : {}),
  };
  // A non-finite recomputed log-prob fails either measure.
  const measured = measure === "max" || !Number.isFinite(max) ? max : meanAbs;
  const summary =
    measure === "max"
      ? `max |log ratio| ${short(max)} over ${total} generated targets (tolerance ${short(tolerance)})${note ? `; ${note}` : ""}`
      : `mean |log ratio| ${short(meanAbs)} over ${total} generated targets (tolerance ${short(tolerance)}; max ${short(max)})${note ? `; ${note}` : ""}`;
  if (measured <= tolerance || !worst)
    return { check: "logprobs_reproduce", status: "passed", summary, failures: [], numbers };
  const where = at(sequences, worst.sequence);
  const failures = [
    `max |log ratio| ${short(max)} at token ${worst.token} of sequence ${worst.sequence} (${where.label}): sampled ${short(worst.sampled)}, recomputed ${short(worst.recomputed)}`,
    `${over} of ${total} generated targets are above the tolerance ${short(tolerance)} (mean |log ratio| ${short(numbers.mean_abs_log_ratio)})`,
  ];
  // A one-position shift that matches where the aligned comparison does not names the cause.
  const shifts = [-1, 1].map((offset) => ({
    offset,
    delta: deltaShifted(sequences, recomputed, targets, offset, measure),
  }));
  const shifted = shifts.find((s) => s.delta <= tolerance);
  if (shifted) {
    const where =
      shifted.offset < 0
        ? "one position early (recomputed[k-1] matches sampled[k]"
        : "one position late (recomputed[k+1] matches sampled[k]";
    failures.push(
      `the recomputed log-probs are ${where}, ${measure} |log ratio| ${short(shifted.delta)}): a token shift`,
    );
  }
  return {
    check: "logprobs_reproduce",
    status: "failed",
    summary,
    failures: firstFew(failures, 4),
    hint: LOGPROB_CAUSES,
    numbers,
  };
}
