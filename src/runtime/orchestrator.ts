// Executes one plan: provision the trainer and envs, then per iteration sample tasks, run
// groups of isolated episodes, score them, compute advantages, update through the trainer,
// evaluate, checkpoint and commit. The plan is the only input; a run can always be repeated
// or resumed from its directory.
//
// Asynchronous rollout (rollout.async) pipelines one batch ahead: just before the update of
// iteration t the trainer snapshots its weights into the behaviour slot, and the episodes of
// iteration t+1 are generated from that snapshot while the update runs (env steps, tool calls
// and generation overlap the train steps). Which weights generate a turn is fixed by request
// order, not timing, so a run stays reproducible, and a resumed run redoes the rollout that was
// in flight from the snapshot its checkpoint keeps. Samples older than max_policy_lag versions
// at their update are dropped by group (rl/lag.ts).
import type { EnvKind } from "../contracts/env.js";
import type { Plan, PlanTool } from "../plan/schema.js";
import { planRefusals, refusalText } from "../plan/runnable.js";
import { arlVersion } from "../plan/version.js";
import { bootstrapMeanInterval, passAtK } from "../rl/eval.js";
import { TrainerClient, type TrainerCommand } from "../trainer/protocol/client.js";
import { ragged, row } from "../contracts/trainer-protocol.js";
import { filterByLag, updateSteps } from "../rl/lag.js";
import { computeAdvantages, type ScoredTrajectory } from "./advantage.js";
import { readBuffer, TokenBuffer, type TrajectoryRecord } from "./buffer.js";
import { PoolTrainers, poolChoice } from "./cross-policy.js";
import { harnessVocabulary, runEpisode, type Episode } from "./harness.js";
import { TrainerPolicy, type Policy } from "./policy.js";
import { trainerDeadlines } from "../trainer/launch.js";
import { offPolicyMasked } from "./off-policy-mask.js";
import { episodeRewards, holds } from "./rewards.js";
import type { RunDirectory, RunState } from "./run-dir.js";
import { deriveSeed, derivedRandom, shuffled } from "../contracts/random.js";
import { supervisedColdStart } from "./sft.js";
import { splitTasks, type Split } from "../plan/splits.js";
import { ToolCallValidator } from "../contracts/tool-calls.js";
import { lossMask, trainStepParams, type TrainSequence } from "./update.js";

export type EnvRegistry = ReadonlyMap<string, EnvKind>;

export interface RunOptions {
  readonly plan: Plan;
  readonly runDir: RunDirectory;
  readonly trainer: TrainerCommand;
  readonly envs: EnvRegistry;
  readonly log: (line: string) => void;
  readonly progress?: (status: ProgressStatus) => void;
  /** Set when the user asked to stop (SIGINT/SIGTERM): the run stops after committing. */
  readonly stop?: AbortSignal;
  /**
   * Set when the user asked to stop at once (a second Ctrl-C, SIGTERM): the trainers are killed,
   * the iteration in progress is abandoned (nothing committed is touched) and executePlan throws
   * a RunError with `halted` set.
   */
  readonly halt?: AbortSignal;
  /** Every trainer request's deadline in seconds (arl run --trainer-timeout); default: derived from the plan (trainerDeadlines). */
  readonly trainerTimeoutS?: number;
}

export interface ProgressStatus {
  readonly iteration: number;
  readonly iterations: number;
  readonly success: number;
  readonly reward: number;
  readonly tokensPerSecond: number;
  readonly secondsPerIteration: number;
}

export interface RunSummary {
  readonly dir: string;
  readonly iterations: number;
  readonly stopped: boolean;
  readonly lastEval?: Record<string, number>;
}

export class RunError extends Error {
  constructor(
    message: string,
    readonly stderrTail: readonly string[] = [],
    /** The user stopped the run at once (RunOptions.halt); what was committed is intact. */
    readonly halted = false,
  ) {
    super(message);
  }
}

interface Task {
  readonly env: string;
  readonly id: number;
}

interface Played {
  readonly task: Task;
  readonly group: number;
  readonly sample: number;
  readonly episode: Episode;
  readonly rewards: { terms: Record<string, number>; perTurn: number[]; total: number };
  readonly success: boolean;
}

/** The episodes of one iteration's training batch. */
interface Rollout {
  /** Groups kept for the update (complete, env errors excluded when the plan says so). */
  readonly accepted: Played[][];
  /** Every episode played, rejected groups included (all go to the buffer). */
  readonly allPlayed: Played[];
  readonly rejectedGroups: number;
  readonly rejectedTokens: number;
  readonly playedGroups: number;
  /** Wall time of the rollout itself (it may have overlapped the previous update). */
  readonly seconds: number;
}

/**
 * Asynchronous rollout pipelined one batch ahead makes every sample as old, at its update, as
 * the optimizer steps of the update before it. When that exceeds max_policy_lag every sample
 * after the first iteration would be dropped: refuse the plan (lint rule
 * policy-lag-below-update-steps says the same at compile time; a plan file skips the linter).
 */
function checkPipelineLag(plan: Plan): void {
  const lag = plan.rollout.async?.max_policy_lag;
  if (lag === undefined || lag === null) return;
  const a = plan.algorithm;
  const steps = updateSteps(a.epochs, a.minibatches, plan.rollout.tasks_per_batch * a.group_size);
  if (steps <= lag) return;
  throw new RunError(
    `plan field rollout.async.max_policy_lag is ${lag}, but with rollout pipelined one batch ahead every sample is ${steps} policy versions old when its update starts ` +
      `(algorithm.epochs ${a.epochs} x ${steps / a.epochs} minibatch steps of the update before it): every sample after the first iteration would be dropped and nothing trained. ` +
      `Raise max_policy_lag to ${steps}, or take fewer optimizer steps per update (arl check reports this as policy-lag-below-update-steps)`,
  );
}

/** Asynchronous rollout needs the behaviour-policy snapshot of the trainer protocol. */
function requireBehaviourPolicy(trainer: TrainerClient): void {
  const hello = trainer.handshakeResult;
  if (hello?.capabilities.behaviour_policy === true && hello.capabilities.methods.includes("snapshot")) return;
  throw new RunError(
    `rollout.async needs a trainer that keeps a behaviour-policy snapshot (capability behaviour_policy and method snapshot, trainer protocol "Behaviour policy"), ` +
      `and trainer '${hello?.trainer.name ?? "?"}' ${hello?.trainer.version ?? ""} does not announce it; run synchronously (remove rollout.async) or use a trainer that has it (the embedded and PyTorch trainers do)`,
  );
}

/** Runs `items` through `worker` with at most `limit` at once, keeping their order; after a failure no new item starts. */
async function pool<T, R>(items: readonly T[], limit: number, worker: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        out[i] = await worker(items[i]!, i);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  });
  await Promise.all(lanes);
  return out;
}

/** Episodes by their group index, in order (one pass, where a filter per group is quadratic). */
function groupBy(played: readonly Played[]): Map<number, Played[]> {
  const out = new Map<number, Played[]>();
  for (const p of played) {
    const group = out.get(p.group);
    if (group) group.push(p);
    else out.set(p.group, [p]);
  }
  return out;
}

/** Lets signal handlers and timers run between slices of long synchronous work. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Records appended per slice between yields: a huge batch's frames take seconds to encode. */
const APPEND_SLICE = 1024;

function envNames(plan: Plan): string[] {
  return Object.keys(plan.envs).sort();
}

/** Tools an episode of `env` is offered: its own and those declared outside any env. */
function toolsFor(plan: Plan, env: string): PlanTool[] {
  return plan.tools.filter((t) => t.env === null || t.env === env);
}

/** The plan's success criterion (eval.success) on the episode's final signals. */
function success(plan: Plan, ep: Episode): boolean {
  return holds(plan.eval.success, ep.final);
}

export async function executePlan(options: RunOptions): Promise<RunSummary> {
  const { plan, runDir, log } = options;
  // A plan file skips the checker: refuse here what arl check reports (plan/runnable.ts), before anything starts.
  // The trainer is whatever command was handed over; the embedded one refuses models itself.
  const refusals = planRefusals(plan, { ownTrainer: false });
  if (refusals.length > 0) throw new RunError(refusals.map(refusalText).join("\n"));
  for (const [name, env] of Object.entries(plan.envs)) {
    if (!options.envs.has(env.kind)) throw new RunError(`env '${name}' is of kind '${env.kind}', which this runtime cannot run yet (available: ${[...options.envs.keys()].join(", ") || "none"})`);
  }
  const asyncRollout = plan.rollout.async;
  checkPipelineLag(plan);

  const committed = runDir.readState();
  const recovered = runDir.recover(committed, log);
  let state: RunState = { ...committed, checkpoint: recovered.checkpoint };
  const trainerCommand: TrainerCommand = { ...options.trainer, deadlineMs: options.trainer.deadlineMs ?? trainerDeadlines(plan, options.trainerTimeoutS) };
  const halted = () =>
    new RunError(`stopped at once: iteration ${state.iteration + 1} was abandoned; ${state.iteration > 0 ? `iterations 1-${state.iteration} are committed and kept` : "no iteration had been committed yet"}`, [], true);
  if (options.halt?.aborted) throw halted();
  const buffer = new TokenBuffer(runDir.bufferPath, recovered.buffer.bytes, recovered.buffer);
  const trainer = await TrainerClient.start(trainerCommand, arlVersion(), options.halt).catch((e: Error & { stderrTail?: string[] }) => {
    buffer.close();
    if (options.halt?.aborted) throw halted();
    throw new RunError(`could not start the trainer: ${e.message}`, e.stderrTail ?? []);
  });
  const policy = new TrainerPolicy(trainer);
  // Training episodes sample from the behaviour snapshot when the rollout is asynchronous.
  const rolloutPolicy: Policy = asyncRollout ? new TrainerPolicy(trainer, "behaviour") : policy;
  let poolTrainers: PoolTrainers | undefined;
  const validator = new ToolCallValidator();
  let stopped = false;
  let lastEval: Record<string, number> | undefined;
  try {
    if (asyncRollout) requireBehaviourPolicy(trainer);
    const vocabulary = [...new Set([...harnessVocabulary(plan), ...envNames(plan).flatMap((n) => [...options.envs.get(plan.envs[n]!.kind)!.vocabulary(plan.envs[n]!)])])].sort();
    const configured = await trainer.request("configure", {
      seed: plan.seed,
      policy: plan.policy,
      algorithm: { optimizer: plan.algorithm.optimizer, critic: plan.algorithm.critic, clip: plan.algorithm.clip, kl: plan.algorithm.kl },
      vocabulary,
      ...(asyncRollout ? { behaviour_policy: true } : {}),
    });
    const stopIds = [configured.tokenizer.eos_id];
    // The trainer's policy version, followed through load, SFT and every train step: the
    // version at an update, from which sample lags are measured.
    let version = configured.policy_version;
    if (state.checkpoint) {
      version = (await trainer.request("load", { path: state.checkpoint })).policy_version;
      log(`resumed after iteration ${state.iteration} from ${state.checkpoint}`);
    }
    if (plan.rollout.cross_policy) {
      poolTrainers = await PoolTrainers.start(plan, trainerCommand, arlVersion(), vocabulary, options.halt);
      log(`cross-policy: ${poolTrainers.models.length} pool model trainer${poolTrainers.models.length === 1 ? "" : "s"} started (${poolTrainers.models.map((m) => m.model).join(", ")}), p = ${plan.rollout.cross_policy.probability}`);
    }
    runDir.writeManifest({
      plan_hash: plan.hash,
      experiment: plan.experiment,
      variant: plan.variant,
      provenance: plan.provenance,
      versions: { arl: arlVersion(), node: process.version, ...trainer.handshakeResult?.versions },
      trainer: trainer.handshakeResult?.trainer,
      capabilities: trainer.handshakeResult?.capabilities,
      model: configured.model,
      ...(poolTrainers ? { cross_policy: { probability: plan.rollout.cross_policy!.probability, pool: poolTrainers.models } } : {}),
      seed: plan.seed,
      envs: Object.fromEntries(Object.entries(plan.envs).map(([n, e]) => [n, { kind: e.kind, version: e.version, data: "database" in e ? { database: e.database, questions: e.questions } : null }])),
      checkpoint: state.checkpoint,
      // Run options: how this run was executed, not what it means (outside the plan and its hash).
      run_options: { trainer_timeout_s: options.trainerTimeoutS ?? null },
    });

    const cross = plan.rollout.cross_policy;
    /**
     * One episode. Training episodes (no eval temperature) sample from `rolloutPolicy`, with the
     * pool's turns when cross-policy is on; eval episodes from the current policy alone.
     */
    const play = async (task: Task, group: number, sample: number, split: Split, iteration: number, temperature?: number): Promise<Played> => {
      const envPlan = plan.envs[task.env]!;
      const kind = options.envs.get(envPlan.kind)!;
      const episodeSeed = deriveSeed(plan.seed, split, iteration, task.env, task.id, group, sample);
      const env = await kind.create(envPlan, task.id, episodeSeed);
      const training = temperature === undefined;
      const generators = training && cross ? poolTrainers?.generators : undefined;
      const turnGenerator = (turn: number) => {
        const choice = poolChoice(episodeSeed, turn, cross!.probability, generators!.length);
        return choice === undefined ? undefined : generators![choice];
      };
      const episode = await runEpisode({
        plan,
        envName: task.env,
        env,
        policy: training ? rolloutPolicy : policy,
        tools: toolsFor(plan, task.env),
        validator,
        stopIds,
        seed: (turn) => deriveSeed(episodeSeed, "turn", turn),
        ...(temperature !== undefined ? { temperature } : {}),
        ...(generators ? { turnGenerator } : {}),
      });
      const rewards =
        episode.end === "env_error"
          ? { terms: Object.fromEntries(Object.keys(plan.reward.terms).map((t) => [t, 0])), perTurn: episode.turnEnds.map(() => 0), total: 0 }
          : episodeRewards(plan.reward.terms, episode.states, episode.final, episode.end !== "truncated", plan.algorithm.advantage.gamma);
      return { task, group, sample, episode, rewards, success: episode.end !== "env_error" && success(plan, episode) };
    };

    /** Evaluates the current policy; "base" is the policy before the cold start (its own seeds and file). */
    const evaluate = async (at: number | "base") => {
      const iteration = at === "base" ? -1 : at;
      const ev = plan.eval;
      const tasks: Task[] = [];
      for (const env of envNames(plan)) {
        const ids = splitTasks(env, plan.envs[env]!, ev.split);
        const chosen = ev.tasks === null ? ids : shuffled(ids, derivedRandom(plan.seed, "eval-tasks", env)).slice(0, ev.tasks).sort((a, b) => a - b);
        for (const id of chosen) tasks.push({ env, id });
      }
      const jobs = tasks.flatMap((t, g) => Array.from({ length: ev.samples_per_task }, (_, s) => ({ t, g, s })));
      const played = await pool(jobs, plan.rollout.concurrency, (j) => play(j.t, j.g, j.s, ev.split, iteration, ev.temperature));
      const byGroup = groupBy(played);
      const rows = tasks.map((t, g) => {
        const mine = (byGroup.get(g) ?? []).filter((p) => p.episode.end !== "env_error");
        const c = mine.filter((p) => p.success).length;
        const passes: Record<string, number | null> = Object.fromEntries(ev.k.map((k) => [`pass@${k}`, mine.length >= k ? passAtK(mine.length, c, k) : null]));
        return { env: t.env, task: t.id, n: mine.length, correct: c, env_errors: ev.samples_per_task - mine.length, ...passes };
      });
      runDir.writeEval(at, rows);
      const summary: Record<string, number> = {};
      for (const k of ev.k) {
        const per = rows.map((r) => (r as Record<string, unknown>)[`pass@${k}`] as number | null).filter((x): x is number => x !== null);
        if (per.length === 0) continue;
        const interval = bootstrapMeanInterval(per, { seed: deriveSeed(plan.seed, "bootstrap", iteration, k), resamples: 2000 });
        summary[`pass@${k}`] = interval.estimate;
        summary[`pass@${k}_low`] = interval.low;
        summary[`pass@${k}_high`] = interval.high;
      }
      return summary;
    };

    if (plan.rollout.sft && !state.sftDone) {
      // The base row: the policy as configured, before it has seen a demonstration.
      const baseEval = plan.eval.base ? await evaluate("base") : undefined;
      const sft = await supervisedColdStart({ plan, trainer, policy, envs: options.envs, validator, stopIds, log });
      const checkpoint = runDir.checkpointDir(0);
      version = (await trainer.request("save", { path: checkpoint })).policy_version;
      state = { ...state, sftDone: true, checkpoint, ...(baseEval ? { baseEval } : {}), files: runDir.committedFiles(buffer.commit) };
      runDir.writeState(state);
      log(`sft: trained on ${sft.demos} walkthroughs`);
    }

    /**
     * Progress within a rollout, for batches that take a while: a log line after 2 s, then at
     * doubling intervals up to a minute (a live status line cannot say how far an iteration is).
     */
    const rolloutWatch = (iteration: number) => {
      const begun = Date.now();
      let total = 0;
      let done = 0;
      let next = 2000;
      return {
        planned: (episodes: number) => {
          total += episodes;
        },
        played: () => {
          done++;
          const elapsed = Date.now() - begun;
          if (elapsed < next) return;
          next = Math.min(elapsed * 2, elapsed + 60_000);
          log(`iteration ${iteration}/${plan.rollout.iterations}: rollout ${done} of ${total} episodes played (${Math.round(elapsed / 1000)} s)`);
        },
      };
    };

    /** Samples B tasks of `iteration` and plays their groups (resampling all-equal groups under dynamic sampling). */
    const collect = async (iteration: number): Promise<Rollout> => {
      const begun = Date.now();
      // Tasks: B from the train split, envs mixed by weight.
      const random = derivedRandom(plan.seed, "tasks", iteration);
      const names = envNames(plan);
      const weights = names.map((n) => plan.envs[n]!.weight);
      const totalWeight = weights.reduce((s, w) => s + w, 0);
      const pickEnv = () => {
        let x = random() * totalWeight;
        for (let i = 0; i < names.length; i++) if ((x -= weights[i]!) < 0) return names[i]!;
        return names[names.length - 1]!;
      };
      const dynamic = plan.algorithm.dynamic_sampling;
      const maxRounds = dynamic ? (dynamic.max_rounds ?? Number.POSITIVE_INFINITY) : 1;
      const accepted: Played[][] = [];
      let rejectedGroups = 0;
      let rejectedTokens = 0;
      let playedGroups = 0;
      const allPlayed: Played[] = [];
      // Each env's training split, computed once (it hashes every task id) rather than per task drawn.
      const trainIds = new Map(names.map((n) => [n, splitTasks(n, plan.envs[n]!, "train")]));
      const watch = rolloutWatch(iteration);
      for (let round = 0; round < maxRounds && accepted.length < plan.rollout.tasks_per_batch; round++) {
        const need = plan.rollout.tasks_per_batch - accepted.length;
        const tasks: Task[] = Array.from({ length: need }, () => {
          const env = pickEnv();
          const ids = trainIds.get(env)!;
          if (ids.length === 0) throw new RunError(`env '${env}' has no training tasks (tasks ${plan.envs[env]!.tasks}, split.train ${plan.envs[env]!.split.train})`);
          return { env, id: ids[Math.floor(random() * ids.length)]! };
        });
        const jobs = tasks.flatMap((t, g) => Array.from({ length: plan.algorithm.group_size }, (_, s) => ({ t, g: playedGroups + g, s })));
        watch.planned(jobs.length);
        const played = await pool(jobs, plan.rollout.concurrency, async (j) => {
          const episode = await play(j.t, j.g, j.s, "train", iteration);
          watch.played();
          return episode;
        });
        for (const p of played) allPlayed.push(p); // a spread of a huge batch would overflow the stack
        playedGroups += tasks.length;
        const byGroup = groupBy(played);
        for (let g = playedGroups - tasks.length; g < playedGroups; g++) {
          const group = byGroup.get(g) ?? [];
          const usable = plan.reward.on_env_error === "exclude" ? group.filter((p) => p.episode.end !== "env_error") : group;
          const rewards = usable.map((p) => p.rewards.total);
          if (dynamic && rewards.length > 0 && rewards.every((r) => r === rewards[0])) {
            rejectedGroups++;
            rejectedTokens += group.reduce((s, p) => s + p.episode.episode.tokens, 0);
            continue;
          }
          if (usable.length > 0) accepted.push(usable);
        }
        if (!dynamic) break;
      }
      return { accepted, allPlayed, rejectedGroups, rejectedTokens, playedGroups, seconds: (Date.now() - begun) / 1000 };
    };

    const started = Date.now();
    const firstIteration = state.iteration + 1;
    // The rollout of the next iteration, running while this one updates (asynchronous rollout).
    let pending: Promise<Rollout> | undefined;
    try {
      for (let iteration = state.iteration + 1; iteration <= plan.rollout.iterations; iteration++) {
        if (options.stop?.aborted) {
          stopped = true;
          break;
        }
        // The starting policy's evaluation is reported with iteration 1's metrics, outside its time.
        const evalBefore = iteration === 1 && plan.eval.before_training ? await evaluate(0) : undefined;
        if (evalBefore) lastEval = evalBefore;
        const t0 = Date.now();
        // The first batch of an asynchronous run samples from the starting weights; a resumed
        // run's behaviour slot comes back with its checkpoint.
        if (asyncRollout && !pending && iteration === 1) await trainer.request("snapshot", {});
        const rollout = await (pending ?? collect(iteration));
        pending = undefined;
        const tRollout = Date.now();
        const { accepted, allPlayed, rejectedGroups, rejectedTokens, playedGroups } = rollout;

        // Policy lag: whole groups older than max_policy_lag versions are dropped and counted.
        const lagged = filterByLag(accepted, (p) => p.episode.versions, version, asyncRollout?.max_policy_lag ?? null);
        if (lagged.kept.length === 0 && accepted.length > 0) {
          throw new RunError(
            `iteration ${iteration}: every sample is up to ${lagged.maxLag} policy versions old, above rollout.async.max_policy_lag ${asyncRollout?.max_policy_lag}; ` +
              "stopping rather than updating on nothing (raise max_policy_lag, or take fewer optimizer steps per update)",
          );
        }

        // Scores, reference log-probs and values where the algorithm needs them.
        const batch = lagged.kept.flat();
        const needRef = plan.algorithm.kl.coef > 0 && plan.algorithm.kl.reference !== null;
        const idsBatch = ragged(batch.map((p) => p.episode.ids), Int32Array);
        const sampling = { temperature: plan.policy.sampling.temperature, top_p: plan.mask.keep_sampling_mask ? plan.policy.sampling.top_p : 1, top_k: plan.mask.keep_sampling_mask ? plan.policy.sampling.top_k : 0 };
        // Old and reference log-probs are read only where the update trains (PROTOCOL.md, logprobs mask).
        const masks = batch.map((p) => lossMask(p.episode.roles, plan.mask.loss));
        const lossMasks = ragged(masks, Uint8Array);
        const refLogprobs = needRef && batch.length > 0 ? (await trainer.request("logprobs", { ids: idsBatch, policy: "reference", sampling, mask: lossMasks })).logprobs : undefined;
        const values = plan.algorithm.advantage.estimator === "gae" && batch.length > 0 ? (await trainer.request("values", { ids: idsBatch })).values : undefined;
        // Without the keep-sampling mask, the behaviour log-probs are recomputed under the full
        // (temperature-only) distribution the update will use, by the weights that sampled: the
        // behaviour snapshot under asynchronous rollout (it still holds them: the next snapshot
        // is taken below), so that pi/mu keeps the staleness instead of starting at 1.
        const recomputed = !plan.mask.keep_sampling_mask && batch.length > 0 ? (await trainer.request("logprobs", { ids: idsBatch, policy: asyncRollout ? "behaviour" : "current", sampling, mask: lossMasks })).logprobs : undefined;
        const scored: ScoredTrajectory[] = batch.map((p, i) => ({
          group: `${iteration}:${p.group}`,
          env: p.task.env,
          roles: p.episode.roles,
          reward: p.rewards.total,
          perTurn: p.rewards.perTurn,
          turnEnds: p.episode.turnEnds,
          end: p.episode.end,
          oldLogprobs: recomputed ? row(recomputed, i).slice() : p.episode.logprobs,
          ...(refLogprobs ? { refLogprobs: row(refLogprobs, i).slice() } : {}),
          ...(values ? { values: row(values, i).slice() } : {}),
        }));
        const adv = computeAdvantages(plan, scored);
        // Off-policy sequence masking (mask.off_policy_sequence_threshold): measured against the
        // weights that take the update's first step; a masked sequence keeps its place in the
        // reduction's denominators but gets no policy-gradient term (advantage 0).
        const threshold = plan.mask.off_policy_sequence_threshold;
        let masked = batch.map(() => false);
        if (threshold !== null && batch.length > 0) {
          const current = (await trainer.request("logprobs", { ids: idsBatch, policy: "current", sampling, mask: lossMasks })).logprobs;
          masked = offPolicyMasked(
            scored.map((s, i) => ({ mask: masks[i]!, advantages: adv.advantages[i]!, oldLogprobs: s.oldLogprobs, currentLogprobs: row(current, i) })),
            threshold,
          );
        }
        const tReward = Date.now();

        // Asynchronous rollout: the next batch samples from the weights before this update.
        if (asyncRollout) {
          await trainer.request("snapshot", {});
          if (iteration < plan.rollout.iterations && !options.stop?.aborted) {
            pending = collect(iteration + 1);
            // Awaited next iteration; until then a failure must not count as unhandled.
            pending.catch(() => undefined);
          }
        }

        // Updates: epochs x minibatches, each one optimizer step with global denominators.
        const sequences: TrainSequence[] = scored.map((s, i) => ({
          ids: batch[i]!.episode.ids,
          roles: s.roles,
          advantages: masked[i] ? new Float32Array(s.roles.length) : adv.advantages[i]!,
          oldLogprobs: s.oldLogprobs,
          ...(s.refLogprobs ? { refLogprobs: s.refLogprobs } : {}),
          group: s.group,
          ...(adv.returns && s.values ? { returns: adv.returns[i]!, oldValues: s.values } : {}),
        }));
        const stepStats: Record<string, number>[] = [];
        for (let epoch = 0; epoch < plan.algorithm.epochs && sequences.length > 0; epoch++) {
          const order = shuffled(sequences.map((_, i) => i), derivedRandom(plan.seed, "minibatches", iteration, epoch));
          const size = Math.ceil(order.length / plan.algorithm.minibatches);
          for (let m = 0; m < plan.algorithm.minibatches; m++) {
            const part = order.slice(m * size, (m + 1) * size).map((i) => sequences[i]!);
            if (part.length === 0) continue;
            const result = await trainer.request("train_step", trainStepParams(plan, part));
            version = result.policy_version;
            stepStats.push(result as unknown as Record<string, number>);
          }
        }
        const tUpdate = Date.now();

        // Buffer, eval, checkpoint, metrics; then commit the iteration.
        const records: TrajectoryRecord[] = allPlayed.map((p) => ({
          iteration,
          env: p.task.env,
          task: p.task.id,
          group: p.group,
          sample: p.sample,
          ids: p.episode.ids,
          roles: p.episode.roles,
          versions: p.episode.versions,
          logprobs: p.episode.logprobs,
          generators: p.episode.generators,
          rewards: p.rewards.terms,
          reward: p.rewards.total,
          end: p.episode.end,
          turns: p.episode.episode.turns,
          toolCalls: p.episode.toolCalls,
        }));
        for (let i = 0; i < records.length; i += APPEND_SLICE) {
          buffer.append(records.slice(i, i + APPEND_SLICE));
          await yieldToEventLoop();
        }
        buffer.sync();
        const isEval = iteration % plan.eval.every === 0 || iteration === plan.rollout.iterations;
        if (isEval) lastEval = await evaluate(iteration);
        const checkpoint = runDir.checkpointDir(iteration);
        const saved = await trainer.request("save", { path: checkpoint });

        const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
        const last = stepStats[stepStats.length - 1] ?? {};
        const played = allPlayed.filter((p) => p.episode.end !== "env_error");
        const genTokens = allPlayed.reduce((s, p) => s + p.episode.episode.tokens, 0);
        const metrics = {
          iteration,
          success: mean(played.map((p) => (p.success ? 1 : 0))),
          reward: mean(played.map((p) => p.rewards.total)),
          reward_terms: Object.fromEntries(Object.keys(plan.reward.terms).map((t) => [t, mean(played.map((p) => p.rewards.terms[t] ?? 0))])),
          effective_group_ratio: adv.groups ? adv.effectiveGroups / adv.groups : 0,
          acceptance_rate: playedGroups ? (playedGroups - rejectedGroups) / playedGroups : 0,
          rejected_groups: rejectedGroups,
          rejected_tokens: rejectedTokens,
          generated_length: mean(allPlayed.map((p) => p.episode.episode.tokens)),
          entropy: mean(stepStats.map((s) => s.entropy ?? 0)),
          ratio_mean: mean(stepStats.map((s) => s.ratio_mean ?? 1)),
          ratio_min: Math.min(...stepStats.map((s) => s.ratio_min ?? 1)),
          ratio_max: Math.max(...stepStats.map((s) => s.ratio_max ?? 1)),
          clip_fraction: mean(stepStats.map((s) => s.clip_fraction ?? 0)),
          kl: adv.rewardKl ?? mean(stepStats.map((s) => s.kl ?? 0)),
          grad_norm: mean(stepStats.map((s) => s.grad_norm ?? 0)),
          loss: mean(stepStats.map((s) => s.loss ?? 0)),
          env_errors: allPlayed.length - played.length,
          lag_drops: lagged.droppedSamples,
          off_policy_masked: masked.filter(Boolean).length,
          policy_lag: lagged.maxLag,
          cross_policy_turns: allPlayed.reduce((s, p) => s + p.episode.generators.filter((g) => g !== "policy").length, 0),
          tokens: genTokens,
          tool_calls: allPlayed.reduce((s, p) => s + p.episode.episode.tool_calls, 0),
          invalid_calls: allPlayed.reduce((s, p) => s + p.episode.episode.invalid_calls, 0),
          end_reasons: Object.fromEntries(["finished", "truncated", "aborted", "env_error"].map((r) => [r, allPlayed.filter((p) => p.episode.end === r).length])),
          policy_version: (last.policy_version as number | undefined) ?? saved.policy_version,
          ...(iteration === 1 && state.baseEval ? { eval_base: state.baseEval } : {}),
          ...(evalBefore ? { eval_before_training: evalBefore } : {}),
          ...(isEval && lastEval ? { eval: lastEval } : {}),
          // rollout_s: the rollout's own wall time; wait_s: how long this iteration waited for it
          // (less than rollout_s when it overlapped the previous update).
          time: {
            rollout_s: rollout.seconds,
            wait_s: (tRollout - t0) / 1000,
            reward_s: (tReward - tRollout) / 1000,
            update_s: (tUpdate - tReward) / 1000,
            total_s: (Date.now() - t0) / 1000,
          },
        };
        runDir.appendMetrics(metrics);
        const previous = state.checkpoint;
        state = {
          ...state,
          iteration,
          checkpoint,
          bufferOffset: buffer.offset,
          metricsOffset: runDir.metricsSize,
          policyVersion: metrics.policy_version,
          files: runDir.committedFiles(buffer.commit),
        };
        runDir.writeState(state);
        if (previous && previous !== checkpoint) runDir.removeCheckpoint(previous);

        const elapsed = (Date.now() - started) / 1000;
        options.progress?.({
          iteration,
          iterations: plan.rollout.iterations,
          success: metrics.success,
          reward: metrics.reward,
          tokensPerSecond: genTokens / Math.max(1e-9, rollout.seconds),
          secondsPerIteration: elapsed / Math.max(1, iteration - firstIteration + 1),
        });
        log(
          `iteration ${iteration}/${plan.rollout.iterations}: success ${metrics.success.toFixed(3)}, reward ${metrics.reward.toFixed(3)}, ${genTokens} tokens` +
            (metrics.lag_drops ? `, ${metrics.lag_drops} samples dropped for policy lag` : "") +
            (isEval && lastEval ? `, eval ${Object.entries(lastEval).filter(([k]) => !k.includes("_")).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(" ")}` : ""),
        );
      }
    } catch (error) {
      // Failing with a rollout in flight: stop the trainers first so that it fails fast, then
      // let it end (its envs close) before reporting.
      await Promise.all([trainer.kill(), poolTrainers?.kill()]);
      await pending?.catch(() => undefined);
      throw error;
    }
    // Stopped with a rollout in flight: it ends (and closes its envs) before the trainers do.
    // What it played is not committed; a resumed run redoes it from the checkpoint's snapshot.
    await pending?.catch(() => undefined);
    await poolTrainers?.shutdown();
    await trainer.shutdown();
  } catch (error) {
    await Promise.all([trainer.kill(), poolTrainers?.kill()]);
    if (options.halt?.aborted) throw halted();
    if (error instanceof RunError) throw error;
    const tail = (error as { stderrTail?: string[] }).stderrTail ?? trainer.stderrTail();
    throw new RunError((error as Error).message, tail);
  } finally {
    buffer.close();
  }
  return { dir: runDir.dir, iterations: state.iteration, stopped, ...(lastEval ? { lastEval } : {}) };
}

/** Trajectories of a run, for reports and tests. */
export function runTrajectories(runDir: RunDirectory): TrajectoryRecord[] {
  return readBuffer(runDir.bufferPath).records;
}
