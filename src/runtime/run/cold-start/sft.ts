// Supervised cold start (rollout.sft): replay env walkthroughs through the same harness, so the
// demonstrations have exactly the token layout of RL episodes, add the spec's own chat records
// (sft.data, sft-records.ts), then train on the generated (assistant) tokens only, measuring the
// held-out records' loss after each epoch. The loss is the policy-gradient loss with advantage 1
// at ratio 1 (old log-probs = current ones), whose gradient is that of the log-likelihood of the
// demonstrated tokens. A trainer that announces `on_policy_step` takes the step with
// `old_logprobs: null` and reports the demos' NLL itself, which saves a log-probs pass per step.
import { at, defined } from "../../../contracts/checked.js";
import type { EnvKind } from "../../../contracts/env.js";
import type { Plan } from "../../../plan/schema.js";
import { TrainerError, type TrainerClient } from "../../../trainer/protocol/client.js";
import { ragged, row, type ChatTemplateInfo } from "../../../contracts/trainer-protocol.js";
import { runEpisode, toolsFor } from "../../../episode/harness.js";
import type { GenerateOptions, Generation, Message, Policy } from "../../../episode/policy.js";
import { envKindOf, envNames, planEnv, refusal } from "../context.js";
import type { RunStreams } from "../streams.js";
import { shuffled } from "../../../contracts/random.js";
import { splitTasks } from "../../../plan/splits.js";
import type { ToolCall, ToolCallValidator } from "../../../contracts/tool-calls.js";
import { trainStepParams, lossMask, type TrainSequence } from "../../update/train-batches.js";
import type { SftEpoch, SftProgress, SftSummary } from "../../cold-start-state.js";
import type { SftData } from "./data.js";
import { encodeRecords, type EncodedRecords } from "./records.js";
import { afterPrefix, generationPromptIds } from "../../../episode/generation-prompt.js";
import { phaseWatch } from "../progress.js";

/**
 * The text a model writes for `call` in the harness's format: a text action, or a function call
 * in the template's own convention (the embedded model's compact hermes form when the trainer
 * reports no template).
 */
export function callText(call: ToolCall, plan: Plan, template?: ChatTemplateInfo): string {
  if (plan.harness.format === "text_action") return [call.name, ...Object.values(call.arguments).map(String)].join(" ");
  switch (template?.tool_call_format) {
    case undefined:
      return `<tool_call>${JSON.stringify({ name: call.name, arguments: call.arguments })}</tool_call>`;
    case "hermes":
      // Qwen's templates show the call as `<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>`
      return `<tool_call>\n${spacedJson({ name: call.name, arguments: call.arguments })}\n</tool_call>`;
    case "llama3_json":
      return spacedJson({ name: call.name, parameters: call.arguments });
    case "deepseek_v3":
      return `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>${call.name}\n\`\`\`json\n${JSON.stringify(call.arguments)}\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>`;
  }
}

/** JSON with a space after each `:` and `,`, as Python's json.dumps writes it (and the templates show calls). */
function spacedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spacedJson).join(", ")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${spacedJson(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value);
}

/** A conversation to find out what the template puts before an assistant turn and how it renders one. */
const PROBE: readonly Message[] = [{ role: "user", content: "x" }];

class ReplayPolicy implements Policy {
  private turn = 0;
  constructor(
    private readonly inner: Policy,
    private readonly actions: readonly string[],
    private readonly stopIds: readonly number[],
  ) {}
  encode: Policy["encode"] = (m, g, o) => this.inner.encode(m, g, o);
  decode: Policy["decode"] = (ids) => this.inner.decode(ids);
  private header: Promise<Int32Array> | undefined;

  async generate(_prompt: Int32Array, _options: GenerateOptions): Promise<Generation> {
    const text = this.actions[Math.min(this.turn++, this.actions.length - 1)] ?? "";
    // The turn as the template renders an assistant message after a user one, without the
    // generation prompt the harness's context already ends with (`<|im_start|>assistant\n`).
    const piece = at(
      await this.inner.encode([...PROBE, { role: "assistant", content: text }], false, { context: PROBE.length }),
      0,
    );
    const header = await (this.header ??= generationPromptIds((prompt) => this.inner.encode(PROBE, prompt)));
    const ids = afterPrefix(piece, header)?.slice() ?? piece;
    // The demonstrated turn ends like a sampled one: with the end-of-turn token.
    const withStop =
      this.stopIds.length > 0 && ids[ids.length - 1] !== this.stopIds[0]
        ? Int32Array.from([...ids, at(this.stopIds, 0)])
        : ids;
    return { ids: withStop, logprobs: new Float32Array(withStop.length), finish: "stop", policyVersion: 0 };
  }
}

export interface SftContext {
  readonly plan: Plan;
  readonly trainer: TrainerClient;
  readonly policy: Policy;
  readonly envs: ReadonlyMap<string, EnvKind>;
  readonly validator: ToolCallValidator;
  readonly stopIds: readonly number[];
  readonly log: (line: string) => void;
  /** The run's seeded streams (the cold start's own: sftDemos, sftEpisodeSeed, sftEpoch, sftHeldout). */
  readonly streams: RunStreams;
  /** rollout.sft.data's records, validated at provision; undefined without sft.data. */
  readonly sftData: SftData | undefined;
  /** What configure reported of the chat template: walkthroughs are rendered as RL episodes are. */
  readonly template?: ChatTemplateInfo;
}

/** Replays up to `demos` walkthroughs of training tasks through the harness, as sequences. */
async function replayWalkthroughs(ctx: SftContext, demos: number): Promise<TrainSequence[]> {
  const { plan } = ctx;
  const sequences: TrainSequence[] = [];
  const random = ctx.streams.sftDemos();
  const candidates = shuffled(
    envNames(plan).flatMap((env) => splitTasks(env, planEnv(plan, env), "train").map((id) => ({ env, id }))),
    random,
  );
  for (const task of candidates) {
    if (sequences.length >= demos) break;
    const envPlan = planEnv(plan, task.env);
    const kind = envKindOf(ctx.envs, envPlan);
    if (!kind.walkthrough)
      throw refusal(`rollout.sft.demos needs walkthroughs, and env kind '${envPlan.kind}' provides none`);
    const calls = await kind.walkthrough(envPlan, task.id);
    if (!calls || calls.length === 0) continue;
    const seed = ctx.streams.sftEpisodeSeed(task.env, task.id);
    const env = await kind.create(envPlan, task.id, seed);
    const episode = await runEpisode({
      plan,
      envName: task.env,
      env,
      policy: new ReplayPolicy(
        ctx.policy,
        calls.map((c) => callText(c, plan, ctx.template)),
        ctx.stopIds,
      ),
      tools: toolsFor(plan, task.env),
      validator: ctx.validator,
      stopIds: ctx.stopIds,
      seed: () => 0,
      ...(ctx.template ? { template: ctx.template } : {}),
    });
    if (episode.end === "env_error") continue;
    sequences.push({
      ids: episode.ids,
      roles: episode.roles,
      advantages: new Float32Array(0),
      oldLogprobs: new Float32Array(0),
      group: `sft:${task.env}:${task.id}`,
    });
  }
  if (sequences.length === 0) throw refusal("rollout.sft.demos found no walkthroughs to train on");
  return sequences;
}

/** The records' sequences, with the truncation said in the run log. */
async function recordSequences(ctx: SftContext, data: SftData, heldout: number): Promise<EncodedRecords> {
  const max = ctx.plan.harness.max_total_tokens;
  const encoded = await encodeRecords(ctx.trainer, data, heldout, max, ctx.streams);
  if (encoded.truncated > 0) {
    const skipped =
      encoded.skipped > 0
        ? `; ${encoded.skipped} of them had no assistant token left and ${encoded.skipped === 1 ? "is" : "are"} not trained on`
        : "";
    ctx.log(
      `sft data: warning: ${encoded.truncated} of ${data.records.length} records are longer than harness.max_total_tokens (${max}) and were truncated to it${skipped}`,
    );
  }
  if (encoded.train.length === 0)
    throw refusal(
      `rollout.sft.data '${data.path}': no record is left to train on (${encoded.heldout.length} held out, ${encoded.skipped} without an assistant token within harness.max_total_tokens)`,
    );
  return encoded;
}

/** What the cold start commits between its steps (run/cold-start.ts). */
export interface SftCheckpoints {
  /** The committed progress to continue from (the trainer has loaded its checkpoint); undefined: from the start. */
  readonly resume: SftProgress | undefined;
  /** Saves the weights and commits `progress`; true when the run is asked to stop there. */
  readonly commit: (progress: SftProgress) => Promise<boolean>;
}

/** The cold start's outcome: what it trained on and its losses, or, stopped at a checkpoint, how far it got. */
export type ColdStartOutcome =
  { readonly done: SftSummary; readonly seconds: number } | { readonly stopped: SftProgress };

/**
 * Everything the cold start's steps are made of, built before the first one: the sequences
 * (walkthroughs, then the records trained on), the held-out records, the plan the steps are
 * sent under, and each epoch's order of the sequences (indices, `perStep` a step). The steps
 * are a function of these and the trainer's configuration alone (cache-key.ts hashes them).
 */
export interface ColdStartData {
  readonly sftPlan: Plan;
  /** Walkthroughs replayed (the first `demos` of `sequences`). */
  readonly demos: number;
  readonly records: EncodedRecords;
  readonly sequences: readonly TrainSequence[];
  readonly perStep: number;
  readonly stepsPerEpoch: number;
  /** Per epoch, the order in which its steps take `sequences`. */
  readonly orders: readonly (readonly number[])[];
  /** When building them began (Date.now()): the cold start's wall time counts it. */
  readonly begun: number;
}

/**
 * Replays the walkthroughs and encodes the records (deterministic: neither depends on the
 * weights, so a resumed cold start rebuilds the same), and fixes the epochs' orders: a
 * full-batch epoch keeps the demos' order, a minibatched one draws a fresh order each epoch
 * from the plan's seed, so a resumed or repeated run takes the same steps.
 */
export async function coldStartData(ctx: SftContext): Promise<ColdStartData> {
  const { plan } = ctx;
  const begun = Date.now();
  const sft = defined(plan.rollout.sft, "rollout.sft of a plan with a cold start");
  // Before replaying any walkthrough: an ignored rate would train the cold start at the RL rate.
  if (sft.lr !== null && ctx.trainer.handshakeResult?.capabilities.step_lr !== true) {
    throw refusal(
      `rollout.sft.lr needs a trainer that takes a per-step learning rate (capabilities.step_lr), and '${ctx.trainer.handshakeResult?.trainer.name ?? "this trainer"}' does not announce it; remove sft.lr to train the cold start at algorithm.optimizer.lr`,
    );
  }
  const walkthroughs = sft.demos === null ? [] : await replayWalkthroughs(ctx, sft.demos);
  const records = ctx.sftData
    ? await recordSequences(ctx, ctx.sftData, sft.heldout)
    : { train: [], heldout: [], truncated: 0, skipped: 0 };
  const sequences = [...walkthroughs, ...records.train];
  // A large clip range: several steps over the same demos must not clip the likelihood gradient.
  const sftPlan: Plan = {
    ...plan,
    mask: { ...plan.mask, loss: "generated", keep_sampling_mask: false },
    algorithm: {
      ...plan.algorithm,
      clip: { low: 1, high: 1e9, dual: null },
      kl: { ...plan.algorithm.kl, coef: 0 },
      reduction: { mode: "token_mean" },
    },
  };
  const perStep = Math.min(sft.batch ?? sequences.length, sequences.length);
  const indices = sequences.map((_, i) => i);
  const orders = Array.from({ length: sft.epochs }, (_, epoch) =>
    perStep < sequences.length ? shuffled(indices, ctx.streams.sftEpoch(epoch)) : indices,
  );
  const stepsPerEpoch = Math.ceil(sequences.length / perStep);
  return { sftPlan, demos: walkthroughs.length, records, sequences, perStep, stepsPerEpoch, orders, begun };
}

/** What the cold start trained on, as its summary records it (its epochs' losses besides). */
function trainedOn(data: ColdStartData, epochs: readonly SftEpoch[]): SftSummary {
  return {
    demos: data.demos,
    records: data.records.train.length,
    heldout_records: data.records.heldout.length,
    truncated: data.records.truncated,
    skipped: data.records.skipped,
    epochs: [...epochs],
  };
}

/**
 * Trains on `data`: every `checkpoint_every` steps (or at the end of every epoch)
 * `checkpoints.commit` saves and commits how far it got, and the run may stop there; a resumed
 * cold start rebuilds the same data and continues from the committed step, in the same order.
 */
export async function supervisedColdStart(
  ctx: SftContext,
  data: ColdStartData,
  checkpoints: SftCheckpoints,
): Promise<ColdStartOutcome> {
  const sft = defined(ctx.plan.rollout.sft, "rollout.sft of a plan with a cold start");
  const { sftPlan, sequences, perStep, stepsPerEpoch, records } = data;
  const totalSteps = stepsPerEpoch * sft.epochs;
  const resume = checkpoints.resume;
  const epochs: SftEpoch[] = [...(resume?.epochs ?? [])];
  let step = resume?.step ?? 0;
  let nll = resume?.nll ?? 0;
  let targets = resume?.targets ?? 0;
  const seconds = () => (resume?.seconds ?? 0) + (Date.now() - data.begun) / 1000;
  if (resume && resume.sequences !== sequences.length) {
    throw refusal(
      `the resumed cold start rebuilt ${sequences.length} demonstrations, and the interrupted one was training on ${resume.sequences} (did an env's walkthroughs or a record file change?); it cannot continue where it stopped: start a new run`,
    );
  }
  if (resume)
    ctx.log(
      `sft: resuming after step ${step} of ${totalSteps} (epoch ${Math.floor(step / stepsPerEpoch) + 1}/${sft.epochs})`,
    );
  const watch = phaseWatch(ctx.log, "sft:", "steps taken");
  watch.planned(totalSteps - step);
  try {
    for (let epoch = Math.floor(step / stepsPerEpoch); epoch < sft.epochs; epoch++) {
      const order = at(data.orders, epoch).map((i) => at(sequences, i));
      for (let start = (step - epoch * stepsPerEpoch) * perStep; start < order.length; start += perStep) {
        const taken = await sftStep(ctx, sftPlan, order.slice(start, start + perStep));
        nll += taken.nll;
        targets += taken.targets;
        step++;
        watch.done();
        const endOfEpoch = start + perStep >= order.length;
        if (endOfEpoch) {
          // The NLL of each minibatch measured just before its step, summed over the epoch.
          const trainNll = targets ? nll / targets : 0;
          // The held-out records' NLL after the epoch's steps, without a gradient.
          const heldoutNll = records.heldout.length > 0 ? await meanNll(ctx, sftPlan, records.heldout) : null;
          const done: SftEpoch = { epoch: epoch + 1, train_nll: trainNll, heldout_nll: heldoutNll };
          ctx.log(sftEpochLine(done, sft.epochs, data));
          epochs.push(done);
          nll = 0;
          targets = 0;
        }
        // The last step's checkpoint is the cold start's own (checkpoint 0, run/cold-start.ts).
        const due = sft.checkpoint_every === null ? endOfEpoch : step % sft.checkpoint_every === 0;
        if (due && step < totalSteps) {
          const progress: SftProgress = {
            step,
            sequences: sequences.length,
            epochs: [...epochs],
            nll,
            targets,
            seconds: seconds(),
          };
          if (await checkpoints.commit(progress)) return { stopped: progress };
        }
      }
    }
  } finally {
    watch.end();
  }
  return { done: trainedOn(data, epochs), seconds: seconds() };
}

/** The run log's line of a finished epoch: its train NLL per token and the held-out records' after it (a cold start loaded from the cache says the same). */
export function sftEpochLine(e: SftEpoch, epochs: number, data: ColdStartData): string {
  const heldout = data.records.heldout.length;
  const held =
    e.heldout_nll === null
      ? ""
      : `, held-out ${e.heldout_nll.toFixed(4)} on ${heldout} record${heldout === 1 ? "" : "s"}`;
  const steps = data.stepsPerEpoch;
  return `sft epoch ${e.epoch}/${epochs}: ${data.sequences.length} demos in ${steps} step${steps === 1 ? "" : "s"}, negative log-likelihood ${e.train_nll.toFixed(4)} per token${held}`;
}

/** Target-token log-probs of `sequences` under the current weights, and their masks. */
async function targetLogprobs(
  ctx: SftContext,
  sftPlan: Plan,
  sequences: readonly TrainSequence[],
): Promise<{ masks: Uint8Array[]; logprobs: Float32Array[] }> {
  const masks = sequences.map((s) => lossMask(s.roles, "generated"));
  const { logprobs } = await ctx.trainer.request("logprobs", {
    ids: ragged(
      sequences.map((s) => s.ids),
      Int32Array,
    ),
    policy: "current",
    sampling: { temperature: sftPlan.policy.sampling.temperature, top_p: 1, top_k: 0 },
    mask: ragged(masks, Uint8Array),
  });
  return { masks, logprobs: sequences.map((_, i) => row(logprobs, i).slice()) };
}

/** Mean negative log-likelihood per target token of `sequences` (no gradient). */
async function meanNll(ctx: SftContext, sftPlan: Plan, sequences: readonly TrainSequence[]): Promise<number> {
  const { masks, logprobs } = await targetLogprobs(ctx, sftPlan, sequences);
  let nll = 0;
  let targets = 0;
  masks.forEach((mask, i) => mask.forEach((m, k) => m && ((nll -= at(at(logprobs, i), k)), targets++)));
  return targets ? nll / targets : 0;
}

/** One optimizer step on `demos`; returns their summed NLL before the step and the target-token count. */
async function sftStep(
  ctx: SftContext,
  sftPlan: Plan,
  demos: readonly TrainSequence[],
): Promise<{ nll: number; targets: number }> {
  const lr = sftPlan.rollout.sft?.lr ?? null;
  const handshake = ctx.trainer.handshakeResult;
  if (handshake?.capabilities.on_policy_step === true) {
    // old = current without asking for them: the trainer's ratio is exactly 1 (docs/protocol.md).
    const batch = demos.map((s) => ({ ...s, advantages: Float32Array.from(lossMask(s.roles, "generated")) }));
    const targets = batch.reduce((n, s) => s.advantages.reduce((m, a) => m + a, n), 0);
    const result = await ctx.trainer.request("train_step", {
      ...trainStepParams(sftPlan, batch),
      old_logprobs: null,
      ...(lr !== null ? { lr } : {}),
    });
    if (result.nll === undefined)
      throw new TrainerError(
        `trainer '${handshake.trainer.name}' announces capabilities.on_policy_step, but its train_step answer has no nll (docs/protocol.md, train_step)`,
        "protocol",
      );
    return { nll: result.nll * targets, targets };
  }
  const { masks, logprobs } = await targetLogprobs(ctx, sftPlan, demos);
  const batch = demos.map((s, i) => ({
    ...s,
    oldLogprobs: at(logprobs, i),
    advantages: Float32Array.from(at(masks, i), (m) => m),
  }));
  // The surrogate loss at ratio 1 is constant (-1 per token); the demos' negative
  // log-likelihood before this step is the figure that shows learning.
  let nll = 0;
  let targets = 0;
  batch.forEach((s) => s.advantages.forEach((m, k) => m && ((nll -= at(s.oldLogprobs, k)), targets++)));
  await ctx.trainer.request("train_step", { ...trainStepParams(sftPlan, batch), ...(lr !== null ? { lr } : {}) });
  return { nll, targets };
}
