// The settings a reader needs to judge a result, read from each run's plan.json: the algorithm,
// the batch, the learning rate, the cold start, the budgets. A sweep shows those its variants
// share once and, beside each variant's result, those that differ.
import { finiteNumber, type Json, type JsonObject, type RunInfo } from "./load.js";

export interface Setting {
  readonly name: string;
  readonly value: string;
}

function objectAt(x: Json | undefined, ...keys: string[]): JsonObject | undefined {
  let cur: Json | undefined = x;
  for (const key of keys) {
    if (typeof cur !== "object" || cur === null || Array.isArray(cur)) return undefined;
    cur = cur[key];
  }
  return typeof cur === "object" && cur !== null && !Array.isArray(cur) ? cur : undefined;
}

/** A number as a spec writes it: 0.005, and 1e-5 rather than 0.00001. */
function num(x: Json | undefined): string | undefined {
  const n = finiteNumber(x);
  if (n === undefined) return undefined;
  return n !== 0 && Math.abs(n) < 1e-3 ? n.toExponential() : String(n);
}

function str(x: Json | undefined): string | undefined {
  return typeof x === "string" ? x : undefined;
}

/** One update of the whole batch, on-policy: the probability ratio is 1 at it, so nothing is clipped. */
export function oneUpdatePerBatch(plan: JsonObject): boolean {
  const algorithm = objectAt(plan, "algorithm");
  const rollout = objectAt(plan, "rollout");
  const onPolicy = (rollout?.async ?? null) === null && (rollout?.cross_policy ?? null) === null;
  return onPolicy && finiteNumber(algorithm?.epochs) === 1 && finiteNumber(algorithm?.minibatches) === 1;
}

/** KL is not part of the loss or the reward: the plan's kl.coef is 0. */
export function klOff(plan: JsonObject): boolean {
  return finiteNumber(objectAt(plan, "algorithm", "kl")?.coef) === 0;
}

/** The salient settings of one plan, in reading order; a setting the plan lacks is left out. */
export function planSettings(plan: JsonObject): Setting[] {
  const policy = objectAt(plan, "policy");
  const algorithm = objectAt(plan, "algorithm");
  const advantage = objectAt(algorithm, "advantage");
  const optimizer = objectAt(algorithm, "optimizer");
  const kl = objectAt(algorithm, "kl");
  const clip = objectAt(algorithm, "clip");
  const rollout = objectAt(plan, "rollout");
  const sft = objectAt(rollout, "sft");
  const harness = objectAt(plan, "harness");
  const evalPlan = objectAt(plan, "eval");
  const envs = objectAt(plan, "envs");
  const out: [string, string | undefined][] = [];
  const lora = objectAt(policy, "lora");
  out.push([
    "model",
    str(policy?.model) && `${str(policy?.model)}${lora ? ` + LoRA rank ${num(lora.rank) ?? "?"}` : ""}`,
  ]);
  if (envs)
    out.push([
      "env",
      Object.entries(envs)
        .map(([name, e]) => `${name} (${str(objectAt(e)?.kind) ?? "?"})`)
        .join(", "),
    ]);
  out.push(["algorithm", str(algorithm?.name) ?? (advantage ? str(advantage.estimator) : undefined)]);
  if (advantage)
    out.push([
      "advantage",
      [
        str(advantage.estimator),
        str(advantage.baseline) && `baseline ${str(advantage.baseline)}`,
        str(advantage.normalize) && `normalize ${str(advantage.normalize)}`,
      ]
        .filter(Boolean)
        .join(", "),
    ]);
  out.push(["group size", num(algorithm?.group_size)]);
  const tasks = finiteNumber(rollout?.tasks_per_batch);
  const group = finiteNumber(algorithm?.group_size);
  out.push([
    "batch",
    tasks !== undefined && group !== undefined ? `${tasks} tasks × ${group} = ${tasks * group} episodes` : undefined,
  ]);
  out.push(["iterations", num(rollout?.iterations)]);
  out.push([
    "learning rate",
    optimizer &&
      num(optimizer.lr) &&
      `${num(optimizer.lr)} (${str(optimizer.name) ?? "optimizer"}${finiteNumber(optimizer.warmup_steps) ? `, ${num(optimizer.warmup_steps)} warm-up steps` : ""})`,
  ]);
  const epochs = finiteNumber(algorithm?.epochs);
  const minibatches = finiteNumber(algorithm?.minibatches);
  out.push([
    "updates / batch",
    epochs !== undefined && minibatches !== undefined
      ? `${epochs * minibatches} (${epochs} epoch${epochs === 1 ? "" : "s"} × ${minibatches} minibatch${minibatches === 1 ? "" : "es"})`
      : undefined,
  ]);
  if (clip) out.push(["clip", `ε ${num(clip.low) ?? "?"} / ${num(clip.high) ?? "?"}`]);
  if (kl)
    out.push([
      "KL",
      finiteNumber(kl.coef) === 0
        ? "off (coef 0)"
        : `coef ${num(kl.coef) ?? "?"}, ${str(kl.estimator) ?? "?"} in the ${str(kl.placement) ?? "?"}`,
    ]);
  const reduction = str(objectAt(algorithm, "reduction")?.mode);
  if (reduction) out.push(["loss reduction", reduction]);
  if (rollout && "sft" in rollout) {
    out.push([
      "cold start",
      sft
        ? [
            finiteNumber(sft.demos) ? `${num(sft.demos)} walkthrough demos` : str(sft.data) && `data ${str(sft.data)}`,
            num(sft.epochs) && `${num(sft.epochs)} epochs`,
            num(sft.batch) && `batch ${num(sft.batch)}`,
            num(sft.lr) && `lr ${num(sft.lr)}`,
          ]
            .filter(Boolean)
            .join(", ")
        : "none",
    ]);
  }
  out.push(["max turns", num(harness?.max_turns)]);
  out.push(["sampling temperature", num(objectAt(policy, "sampling")?.temperature)]);
  if (evalPlan) {
    const k = Array.isArray(evalPlan.k) ? evalPlan.k.map((x) => num(x) ?? "?").join(", ") : undefined;
    out.push([
      "eval",
      [
        num(evalPlan.tasks) && `${num(evalPlan.tasks)} ${str(evalPlan.split) ?? "held-out"} tasks`,
        num(evalPlan.every) && `every ${num(evalPlan.every)} iterations`,
        k && `pass@${k}`,
        num(evalPlan.samples_per_task) &&
          `${num(evalPlan.samples_per_task)} sample${evalPlan.samples_per_task === 1 ? "" : "s"} / task`,
      ]
        .filter(Boolean)
        .join(", "),
    ]);
  }
  out.push(["backend", str(objectAt(plan, "resources")?.backend)]);
  return out.flatMap(([name, value]) => (value ? [{ name, value }] : []));
}

/** Settings shared by every plan, and the names of those that differ (seeds aside: the seed is shown per run). */
export function sharedSettings(plans: readonly JsonObject[]): { shared: Setting[]; differing: string[] } {
  const all = plans.map(planSettings);
  const names = [...new Set(all.flatMap((s) => s.map((x) => x.name)))];
  const valueOf = (settings: readonly Setting[], name: string) => settings.find((s) => s.name === name)?.value ?? "–";
  const differing = names.filter((n) => new Set(all.map((s) => valueOf(s, n))).size > 1);
  const shared = (all[0] ?? []).filter((s) => !differing.includes(s.name));
  return { shared, differing };
}

/** One setting's value in one plan ("–" when the plan lacks it). */
export function settingOf(plan: JsonObject, name: string): string {
  return planSettings(plan).find((s) => s.name === name)?.value ?? "–";
}

/** The seeds of some runs, for the settings' seed line. */
export function seedsText(runs: readonly RunInfo[]): string {
  const seeds = [...new Set(runs.map((r) => r.seed))].filter((s): s is number => s !== null).sort((a, b) => a - b);
  return seeds.length > 0 ? seeds.join(", ") : "–";
}
