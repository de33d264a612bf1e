// The cold start's step on the embedded trainer, two ways, interleaved step by step: the
// `logprobs` pass over the demos then `train_step` with those log-probs as the old ones (what the
// cold start sends to a trainer without `on_policy_step`), and one `train_step` with
// `old_logprobs: null` (what it sends to one that announces it). The step is the quick start's:
// its plan's vocabulary, sampling, microbatches and rate, 40 demos a step, each an episode of the
// README's shape (a tool list, a task, 4 generated commands between observations). The trainer
// runs in this process, so process.cpuUsage counts its work: CPU time moves less with the load
// of a shared machine than wall time, which is reported beside it.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { at } from "../contracts/checked.js";
import { ragged, type TrainStepParams } from "../contracts/trainer-protocol.js";
import { Compiler } from "../compiler.js";
import { hasErrors } from "../diagnostics/diagnostic.js";
import { envKinds } from "../envs/registry.js";
import { lowerModel } from "../plan/lower.js";
import type { Plan } from "../plan/schema.js";
import { harnessVocabulary } from "../episode/harness.js";
import { envKindOf, envNames, planEnv } from "../runtime/run/context.js";
import { configureParams } from "../runtime/run/provision.js";
import { denominatorsOf } from "../runtime/update/train-batches.js";
import { TinyTrainer } from "../trainer/embedded/trainer.js";
import { median, type BenchResult, type BenchSection, type MeasureOptions } from "./harness.js";

const SPEC = fileURLToPath(new URL("../../experiments/quickstart.arl", import.meta.url));
const SYSTEM = [
  "Tools:",
  "go <direction>: Move through an exit.",
  "inventory: List what you carry.",
  "look: Describe the current room.",
  "open <target>: Open a closed container or door.",
  "put <object> <target>: Put a carried object into or onto something.",
  "take <object>: Pick up an object in the room or in an open container.",
].join("\n");
const OBJECTS = ["key", "bottle", "apple"] as const;
const ROOMS = ["garden", "pantry", "kitchen"] as const;

/** One demo's turns: the task, then (generated command, observation) pairs, the last command without one. */
function episode(i: number): { task: string; turns: [string, string][] } {
  const object = at(OBJECTS, i % OBJECTS.length);
  const [here, there] = [at(ROOMS, i % ROOMS.length), at(ROOMS, (i + 1) % ROOMS.length)];
  return {
    task: `Your task: put the ${object} in the box.\n\nYou are in the ${here}. The room is empty. Exits: west.`,
    turns: [
      ["go west", `You are in the ${there}. You see a locked box, a ${object} and a bottle. Exits: east.`],
      [`take ${object}`, `You take the ${object}.`],
      ["open box", `You unlock the box with the ${object} and open it. It is empty.`],
      [`put ${object} box`, ""],
    ],
  };
}

/** The quick start's cold-start step over `demos` episodes, its old log-probs to be filled in. */
function sftStep(t: TinyTrainer, plan: Plan, demos: number): TrainStepParams {
  const ids: Int32Array[] = [];
  const masks: Uint8Array[] = [];
  for (let i = 0; i < demos; i++) {
    const { task, turns } = episode(i);
    const seq: number[] = [];
    const mask: number[] = [];
    // Context messages before a generated turn end with the assistant header, as the harness's do.
    const add = (role: "system" | "user" | "assistant" | "tool", content: string, target: boolean) => {
      const enc = at(t.tokenizer.encodeMessages([{ role, content }], role === "user" || role === "tool"), 0);
      seq.push(...enc);
      mask.push(...Array.from(enc, () => (target ? 1 : 0)));
    };
    add("system", SYSTEM, false);
    add("user", task, false);
    for (const [command, observation] of turns) {
      add("assistant", command, true);
      if (observation) add("tool", observation, false);
    }
    ids.push(Int32Array.from(seq));
    masks.push(Uint8Array.from(mask));
  }
  const groups = ids.map((_, i) => `sft:${i}`);
  return {
    ids: ragged(ids, Int32Array),
    loss_mask: ragged(masks, Uint8Array),
    advantages: ragged(
      masks.map((m) => Float32Array.from(m)),
      Float32Array,
    ),
    old_logprobs: null,
    ref_logprobs: null,
    groups: Int32Array.from(groups, (_, i) => i),
    reduction: { mode: "token_mean" },
    denominators: denominatorsOf(masks, groups),
    microbatches: plan.algorithm.microbatches,
    // The cold start's own settings (sft.ts): a clip that never binds, no KL, no truncation.
    clip: { low: 1, high: 1e9, dual: null },
    kl: { coef: 0, estimator: plan.algorithm.kl.estimator, placement: plan.algorithm.kl.placement },
    sampling: { temperature: plan.policy.sampling.temperature, top_p: 1, top_k: 0 },
    critic: null,
    lr: plan.rollout.sft?.lr ?? null,
  };
}

/** CPU and wall milliseconds of `fn`. */
function timedCpu(fn: () => void): { cpuMs: number; wallMs: number } {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  fn();
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - wall };
}

export function sftStepSection(options: MeasureOptions): BenchSection {
  const demos = 40;
  return {
    name: "cold start step: the quick start's SFT step on the embedded trainer, with and without the log-probs pass",
    describe: () => [
      `${demos} demos a step, the quick start's vocabulary and settings; the two ways alternate step by step on one trainer (in-process);`,
      "ms are this process's CPU time (user + system) per step, median over the runs; the note gives the median wall time.",
    ],
    async run() {
      if (!existsSync(SPEC))
        return [
          {
            name: "cold start step",
            note: "skipped: experiments/quickstart.arl is not here (run from a repository checkout)",
          },
        ];
      const result = new Compiler().check(SPEC);
      if (hasErrors(result.diagnostics) || !result.model) throw new Error(`sft step bench: ${SPEC} does not compile`);
      const plan = at(lowerModel(result.model).plans, 0).plan;
      const vocabulary = [
        ...new Set([
          ...harnessVocabulary(plan),
          ...envNames(plan).flatMap((n) => [...envKindOf(envKinds, planEnv(plan, n)).vocabulary(planEnv(plan, n))]),
        ]),
      ].sort();
      const t = new TinyTrainer();
      await t.init();
      t.configure(configureParams(plan, vocabulary, false));
      const step = sftStep(t, plan, demos);
      const withPass = () =>
        t.trainStep({ ...step, old_logprobs: t.logprobs(step.ids, "current", step.sampling, step.loss_mask) });
      const onPolicy = () => t.trainStep(step);
      const passOnly = () => t.logprobs(step.ids, "current", step.sampling, step.loss_mask);
      const ways = [withPass, onPolicy, passOnly];
      for (let i = 0; i < options.warmup; i++) for (const way of ways) way();
      const samples = ways.map(() => [] as { cpuMs: number; wallMs: number }[]);
      for (let i = 0; i < options.runs; i++) ways.forEach((way, w) => at(samples, w).push(timedCpu(way)));
      const row = (name: string, w: number, note: string): BenchResult => {
        const cpu = at(samples, w).map((s) => s.cpuMs);
        return {
          name,
          medianMs: median(cpu),
          minMs: Math.min(...cpu),
          maxMs: Math.max(...cpu),
          runs: cpu.length,
          note: `wall ${median(at(samples, w).map((s) => s.wallMs)).toFixed(1)} ms; ${note}`,
        };
      };
      const [before, after, pass] = [0, 1, 2].map((w) => median(at(samples, w).map((s) => s.cpuMs))) as [
        number,
        number,
        number,
      ];
      const tokens = step.ids.values.length;
      return [
        row(
          "logprobs pass + train_step (old = current)",
          0,
          `${demos} demos, ${tokens} tokens, ${step.denominators.tokens} targets`,
        ),
        row("train_step, old_logprobs null (on-policy step)", 1, "what the cold start sends now"),
        row("the logprobs pass alone", 2, "the work the on-policy step saves"),
        {
          name: "on-policy step / step with the pass (CPU time)",
          value: after / before,
          unit: "x",
          goal: "< 1",
          met: after < before,
          note: `the pass was ${((100 * pass) / before).toFixed(0)}% of the step`,
        },
      ];
    },
  };
}
