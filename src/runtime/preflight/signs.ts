// Preflight check signs (docs/semantics.md §11, §3, §4): the direction of the first update, on
// the batch's own groups, advantages and reduction, through the reference maths (src/rl). The
// trainers are held to the same formulas by the conformance vectors (policy_loss, advantages),
// and a trainer gives no gradient without taking a step, so this check does not ask it. Per
// target token the loss's gradient with respect to its log-prob is -w_i du/dlogp (w_i the
// reduction's weight of its sequence; surrogateSlope):
// - equal rewards: every group's rewards set to their mean give advantages of exactly 0, so the
//   policy gradient is exactly 0 (group-relative baselines only: baseline none and GAE keep a
//   constant reward's signal by design, §3);
// - at the start (ratio 1) a descent step raises the log-prob of a positive-advantage token and
//   lowers that of a negative-advantage one;
// - past the clip (ratio above 1 + clip.high) a positive-advantage token gets no more gradient,
//   a negative-advantage one still does (until a dual clip c takes over above ratio c).
import { at } from "../../contracts/checked.js";
import type { Plan } from "../../plan/schema.js";
import { groupAdvantages, taskNormalize } from "../../rl/advantages.js";
import {
  reductionDenominators,
  reductions,
  surrogateSlope,
  type ClipOptions,
  type ReductionDenominators,
} from "../../rl/policy-loss.js";
import { mean } from "../../rl/stats.js";
import { short, type PreflightCheckResult, type PreflightSequence } from "./batch.js";

/** The ratio the past-the-clip part sets: above 1 + high, below a dual clip c (where one is set above it). */
function pastClipRatio(clip: ClipOptions): number {
  const from = 1 + clip.high;
  return clip.dual === null || clip.dual <= from ? from + Math.max(clip.high, 0.1) : from + (clip.dual - from) / 2;
}

/** w_i of every sequence: its share of reduce(x) per unit of its sum (the embedded trainer reads the same registry). */
function sequenceWeights(d: ReductionDenominators, reduction: Plan["algorithm"]["reduction"]): number[] {
  const reduce = reductions.get(reduction.mode);
  return Array.from({ length: d.sequences }, (_, i) =>
    reduce({ indices: [i], contributions: [[1]], mask: [[1]] }, d, reduction),
  );
}

interface Token {
  readonly sequence: number;
  readonly token: number;
  readonly advantage: number;
}

function targetTokens(sequences: readonly PreflightSequence[]): Token[] {
  return sequences.flatMap((s, i) =>
    Array.from(s.lossMask.keys())
      .filter((k) => s.lossMask[k] === 1)
      .map((k) => ({ sequence: i, token: k, advantage: at(s.advantages, k) })),
  );
}

/** The advantages every sequence gets when each group's rewards are all equal (their mean); null where the estimator keeps a constant reward's signal. */
function equalRewardAdvantages(plan: Plan, sequences: readonly PreflightSequence[]): number[] | null {
  const a = plan.algorithm.advantage;
  if (a.estimator !== "group" || a.baseline === "none") return null;
  const groups = [...new Set(sequences.map((s) => s.group))];
  const members = groups.map((g) => sequences.flatMap((s, i) => (s.group === g ? [i] : [])));
  const equalRewards = members.map((m) => {
    const r = mean(m.map((i) => at(sequences, i).reward));
    return m.map(() => r);
  });
  const perGroup = groupAdvantages(equalRewards, { baseline: a.baseline, normalize: a.normalize });
  const out = new Array<number>(sequences.length).fill(0);
  members.forEach((m, g) => m.forEach((i, j) => (out[i] = at(at(perGroup, g), j))));
  if (!a.task_norm) return out;
  const weights = sequences.map((s) => s.lossMask.reduce((x, y) => x + y, 0));
  return taskNormalize(
    out,
    sequences.map((s) => s.env),
    weights,
  );
}

export function checkSigns(plan: Plan, sequences: readonly PreflightSequence[]): PreflightCheckResult {
  const clip: ClipOptions = plan.algorithm.clip;
  const d = reductionDenominators({
    mask: sequences.map((s) => Array.from(s.lossMask)),
    groups: sequences.map((s) => s.group),
  });
  const w = sequenceWeights(d, plan.algorithm.reduction);
  const tokens = targetTokens(sequences);
  // d loss / d logp of a token at `ratio` (a synthetic token, sequence -1, weighs 1).
  const gradient = (t: Token, ratio: number, advantage = t.advantage) =>
    -(t.sequence >= 0 ? at(w, t.sequence) : 1) * surrogateSlope(ratio, advantage, clip);
  const failures: string[] = [];
  const notes: string[] = [];

  // All-equal rewards: exactly zero advantages, so exactly zero gradient at any ratio.
  const equal = equalRewardAdvantages(plan, sequences);
  let equalMax: number | null = null;
  if (equal) {
    equalMax = 0;
    for (const t of tokens)
      for (const ratio of [1, pastClipRatio(clip)])
        equalMax = Math.max(equalMax, Math.abs(gradient(t, ratio, at(equal, t.sequence))));
    if (equalMax !== 0)
      failures.push(
        `with every group's rewards equal the policy gradient is not zero: max |d loss/d logp| ${short(equalMax)} (advantages ${[...new Set(equal)].map(short).join(", ")})`,
      );
  } else
    notes.push(
      `equal rewards not checked: ${plan.algorithm.advantage.estimator === "gae" ? "GAE" : "baseline none"} keeps a constant reward's signal (docs/semantics.md §3)`,
    );

  // The batch's own positive and negative advantages; a unit one where the batch has none.
  const pick = (sign: 1 | -1) => {
    const own = tokens.filter((t) => Math.sign(t.advantage) === sign);
    if (own.length > 0) return own;
    notes.push(
      `no ${sign > 0 ? "positive" : "negative"}-advantage target in the batch: checked with A = ${sign > 0 ? "+1" : "-1"}`,
    );
    const first = tokens[0] ?? { sequence: -1, token: 0, advantage: 0 };
    return [{ ...first, advantage: sign }];
  };
  const positive = pick(1);
  const negative = pick(-1);
  const wrongStart = [
    ...positive.filter((t) => !(gradient(t, 1) < 0)),
    ...negative.filter((t) => !(gradient(t, 1) > 0)),
  ];
  if (wrongStart.length > 0)
    failures.push(
      `at ratio 1, ${wrongStart.length} targets have a loss gradient that does not move their log-prob the way their advantage says (first: sequence ${wrongStart[0]?.sequence}, token ${wrongStart[0]?.token}, A ${short(wrongStart[0]?.advantage ?? 0)})`,
    );
  const past = pastClipRatio(clip);
  const dualTooLow = clip.dual !== null && clip.dual <= 1 + clip.high;
  if (dualTooLow)
    failures.push(
      `clip.dual ${clip.dual} is not above 1 + clip.high (${short(1 + clip.high)}): a negative-advantage token whose ratio is past the clip gets no gradient at all`,
    );
  const stillPushed = positive.filter((t) => gradient(t, past) !== 0);
  if (stillPushed.length > 0)
    failures.push(
      `at ratio ${short(past)} (past 1 + clip.high) ${stillPushed.length} positive-advantage targets still get a gradient: the clip does not stop them`,
    );
  const notPulled = negative.filter((t) => !(gradient(t, past) > 0));
  if (notPulled.length > 0 && !dualTooLow)
    failures.push(
      `at ratio ${short(past)} ${notPulled.length} negative-advantage targets get no gradient pulling them back`,
    );

  const numbers = {
    targets: tokens.length,
    positive_advantage_targets: tokens.filter((t) => t.advantage > 0).length,
    negative_advantage_targets: tokens.filter((t) => t.advantage < 0).length,
    equal_rewards_max_gradient: equalMax,
    past_clip_ratio: past,
    // reduce, not Math.max(...): a batch has more targets than a call has arguments.
    positive_past_clip_max_gradient: positive.reduce((m, t) => Math.max(m, Math.abs(gradient(t, past))), 0),
    negative_past_clip_min_gradient: negative.reduce((m, t) => Math.min(m, Math.abs(gradient(t, past))), Infinity),
  };
  const summary = [
    equal ? `equal rewards: gradient ${short(equalMax ?? 0)}` : undefined,
    `past the clip (ratio ${short(past)}): ${numbers.positive_advantage_targets} positive-advantage targets get ${short(numbers.positive_past_clip_max_gradient)}, ${numbers.negative_advantage_targets} negative-advantage ones at least ${short(numbers.negative_past_clip_min_gradient)}`,
    ...notes,
  ]
    .filter((x) => x !== undefined)
    .join("; ");
  if (failures.length === 0) return { check: "signs", status: "passed", summary, failures, numbers };
  return {
    check: "signs",
    status: "failed",
    summary,
    failures,
    hint: "the update would move the policy the wrong way or not at all: check algorithm.clip and the advantage estimator against docs/semantics.md §3 and §4",
    numbers,
  };
}
